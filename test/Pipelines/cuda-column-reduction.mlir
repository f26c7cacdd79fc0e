// A column mean of x[512 x 96] through the CUDA pipelines: the column sum
// (a reduction over the LEADING loop, iterator order ["reduction",
// "parallel"], read back as (d0, d1) -> (d1)) is a contraction, and the
// scale by 1/512 over its output space [96] is an elementwise epilogue that
// joins its group: one "contraction" group, one kernel. The kernel runs one
// thread per output column (a guarded thread index: 96 columns in one block
// of 256 threads), each folding its column over the 512 rows in a
// sequential loop: the loads x[row, column] are coalesced, the thread index
// being the innermost index. No cross-thread reduction (no gpu.all_reduce,
// no warp shuffles in the PTX), one store per column.
// test/Pipelines/cuda-contraction-ptxas.mlir assembles this PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=CODEGEN --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=ONCE --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX

// One group: the fill, the column sum and its epilogue; x is its only input.
// PLAN-LABEL: func.func @column_mean
// PLAN-SAME: (%[[X:[^:]*]]: tensor<512x96xf32> {kfuse.name = "x"})
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[X]] : tensor<512x96xf32>) {
// PLAN: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<512x96xf32>) outs(%{{.*}} : tensor<96xf32>)
// PLAN: arith.addf
// PLAN: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<96xf32>)
// PLAN: arith.mulf
// PLAN: fusion.yield %[[M]] : tensor<96xf32>
// PLAN-NEXT: } -> tensor<96xf32>
// PLAN-NEXT: return %[[G]] : tensor<96xf32>

// The host launches one block of 256 threads.
// CODEGEN-LABEL: func.func @column_mean
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<512x96xf32> {kfuse.name = "x"}, %[[OUT:[^:]*]]: memref<96xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: linalg
// CODEGEN-DAG: %[[H1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[H256:.*]] = arith.constant 256 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@column_mean_g0 blocks in (%[[H1]], %[[H1]], %[[H1]]) threads in (%[[H256]], %[[H1]], %[[H1]]) args(%[[X]] : memref<512x96xf32>, %[[OUT]] : memref<96xf32>)
// CODEGEN-NEXT: return

// The kernel: column c = thread index, guarded by c < 96; the thread folds
// x[row, c] over row = 0 .. 511 itself, then scales by 1/512 and stores
// out[c].
// CODEGEN: gpu.func @column_mean_g0(%[[KX:[^:]*]]: memref<512x96xf32>, %[[KOUT:[^:]*]]: memref<96xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>
// CODEGEN-DAG: %[[SCALE:.*]] = arith.constant 0.001953125 : f32
// CODEGEN-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CODEGEN-DAG: %[[C0:.*]] = arith.constant 0 : index
// CODEGEN-DAG: %[[C1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[C96:.*]] = arith.constant 96 : index
// CODEGEN-DAG: %[[C512:.*]] = arith.constant 512 : index
// CODEGEN: %[[COL:.*]] = gpu.thread_id x
// CODEGEN: %[[INSIDE:.*]] = arith.cmpi ult, %[[COL]], %[[C96]] : index
// CODEGEN-NEXT: scf.if %[[INSIDE]] {
// CODEGEN-NEXT: %[[SUM:.*]] = scf.for %[[ROW:.*]] = %[[C0]] to %[[C512]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CODEGEN-NEXT: %[[XV:.*]] = memref.load %[[KX]][%[[ROW]], %[[COL]]] : memref<512x96xf32>
// CODEGEN-NEXT: %[[NEXT:.*]] = arith.addf %[[XV]], %[[ACC]]{{.*}} : f32
// CODEGEN-NEXT: scf.yield %[[NEXT]] : f32
// CODEGEN-NEXT: }
// CODEGEN-NOT: scf.for
// CODEGEN-NOT: memref.load
// CODEGEN: %[[Y:.*]] = arith.mulf %{{.*}}, %[[SCALE]]{{.*}} : f32
// CODEGEN-NEXT: memref.store %[[Y]], %[[KOUT]][%[[COL]]] : memref<96xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.return

// One launch, one kernel, no cross-thread reduction, one store.
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-1: gpu.launch_func
// ONCE-NOT: gpu.launch_func
// ONCE-COUNT-1: gpu.func
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-1: scf.for
// ONCE-NOT: scf.for
// ONCE-COUNT-1: memref.store
// ONCE-NOT: memref.store
// ONCE-NOT: gpu.func

// PTX-COUNT-1: .entry column_mean_g0(
// PTX-NOT: .entry
// PTX-NOT: shfl
// PTX-NOT: bar.sync

func.func @column_mean(%x: tensor<512x96xf32> {kfuse.name = "x"}) -> (tensor<96xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96xf32>) -> tensor<96xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x96xf32>) outs(%f : tensor<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<96xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : tensor<96xf32>) outs(%e : tensor<96xf32>) {
  ^bb0(%in: f32, %o: f32):
    %scale = arith.constant 0.001953125 : f32
    %v = arith.mulf %in, %scale : f32
    linalg.yield %v : f32
  } -> tensor<96xf32>
  return %m : tensor<96xf32>
}
