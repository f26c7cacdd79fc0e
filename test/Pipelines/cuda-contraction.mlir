// A matmul with a bias + relu + residual epilogue through the CUDA pipelines:
// one "contraction" group, one kernel that computes one output point per
// thread (a guarded thread index, a sequential loop over K, the epilogue,
// one store), and PTX with one entry and no warp shuffles (no cross-thread
// reduction). 100 x 60 = 6000 outputs do not fill the 24 blocks of 256
// threads, so the guard matters. test/Pipelines/cuda-contraction-ptxas.mlir
// assembles this PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=CODEGEN --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=ONCE --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX

// PLAN-LABEL: func.func @matmul_epilogue
// PLAN-COUNT-1: fusion.group "g0" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<100x48xf32>, tensor<48x60xf32>, tensor<60xf32>, tensor<100x60xf32>) {
// PLAN-NOT: fusion.group

// The host launches one kernel over ceil(6000 / 256) = 24 blocks.
// CODEGEN-LABEL: func.func @matmul_epilogue
// CODEGEN-SAME: (%[[A:[^:]*]]: memref<100x48xf32> {kfuse.name = "a"}, %[[B:[^:]*]]: memref<48x60xf32> {kfuse.name = "b"}, %[[BIAS:[^:]*]]: memref<60xf32> {kfuse.name = "bias"}, %[[RES:[^:]*]]: memref<100x60xf32> {kfuse.name = "res"}, %[[OUT:[^:]*]]: memref<100x60xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: linalg
// CODEGEN-DAG: %[[H1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[H256:.*]] = arith.constant 256 : index
// CODEGEN-DAG: %[[H24:.*]] = arith.constant 24 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@matmul_epilogue_g0 blocks in (%[[H24]], %[[H1]], %[[H1]]) threads in (%[[H256]], %[[H1]], %[[H1]]) args(%[[A]] : memref<100x48xf32>, %[[B]] : memref<48x60xf32>, %[[BIAS]] : memref<60xf32>, %[[RES]] : memref<100x60xf32>, %[[OUT]] : memref<100x60xf32>)
// CODEGEN-NEXT: return

// The kernel: output point p = block * 256 + thread, guarded by p < 6000,
// delinearized to (i, j) = (p / 60, p % 60); the thread folds
// a[i, k] * b[k, j] over k = 0 .. 47 itself, then applies the epilogue.
// CODEGEN: gpu.func @matmul_epilogue_g0(%[[KA:[^:]*]]: memref<100x48xf32>, %[[KB:[^:]*]]: memref<48x60xf32>, %[[KBIAS:[^:]*]]: memref<60xf32>, %[[KRES:[^:]*]]: memref<100x60xf32>, %[[KOUT:[^:]*]]: memref<100x60xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 24, 1, 1>
// CODEGEN-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CODEGEN-DAG: %[[C0:.*]] = arith.constant 0 : index
// CODEGEN-DAG: %[[C1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[C48:.*]] = arith.constant 48 : index
// CODEGEN-DAG: %[[C60:.*]] = arith.constant 60 : index
// CODEGEN-DAG: %[[C6000:.*]] = arith.constant 6000 : index
// CODEGEN-DAG: %[[C256:.*]] = arith.constant 256 : index
// CODEGEN: %[[BID:.*]] = gpu.block_id x
// CODEGEN: %[[TID:.*]] = gpu.thread_id x
// CODEGEN: %[[BASE:.*]] = arith.muli %[[BID]], %[[C256]] : index
// CODEGEN: %[[P:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CODEGEN: %[[INSIDE:.*]] = arith.cmpi ult, %[[P]], %[[C6000]] : index
// CODEGEN: scf.if %[[INSIDE]] {
// CODEGEN: %[[J:.*]] = arith.remui %[[P]], %[[C60]] : index
// CODEGEN: %[[I:.*]] = arith.divui %[[P]], %[[C60]] : index
// CODEGEN: %[[DOT:.*]] = scf.for %[[K:.*]] = %[[C0]] to %[[C48]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CODEGEN: %[[AV:.*]] = memref.load %[[KA]][%[[I]], %[[K]]] : memref<100x48xf32>
// CODEGEN: %[[BV:.*]] = memref.load %[[KB]][%[[K]], %[[J]]] : memref<48x60xf32>
// CODEGEN: %[[PROD:.*]] = arith.mulf %[[AV]], %[[BV]]{{.*}} : f32
// CODEGEN: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PROD]]{{.*}} : f32
// CODEGEN: scf.yield %[[SUM]] : f32
// CODEGEN-NEXT: }
// CODEGEN-NOT: scf.for
// CODEGEN: memref.load %[[KBIAS]][%[[J]]] : memref<60xf32>
// CODEGEN: memref.load %[[KRES]][%[[I]], %[[J]]] : memref<100x60xf32>
// CODEGEN: arith.maximumf
// CODEGEN: %[[Y:.*]] = arith.addf
// CODEGEN-NEXT: memref.store %[[Y]], %[[KOUT]][%[[I]], %[[J]]] : memref<100x60xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.return

// One launch, one kernel, no cross-thread reduction, one store.
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-1: gpu.launch_func
// ONCE-NOT: gpu.launch_func
// ONCE-COUNT-1: gpu.func
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-1: memref.store
// ONCE-NOT: memref.store
// ONCE-NOT: gpu.func

// PTX-COUNT-1: .entry matmul_epilogue_g0(
// PTX-NOT: .entry
// PTX-NOT: shfl
// PTX-NOT: bar.sync

func.func @matmul_epilogue(%a: tensor<100x48xf32> {kfuse.name = "a"}, %b: tensor<48x60xf32> {kfuse.name = "b"}, %bias: tensor<60xf32> {kfuse.name = "bias"}, %res: tensor<100x60xf32> {kfuse.name = "res"}) -> (tensor<100x60xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x60xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x60xf32>) -> tensor<100x60xf32>
  %m = linalg.matmul ins(%a, %b : tensor<100x48xf32>, tensor<48x60xf32>) outs(%f : tensor<100x60xf32>) -> tensor<100x60xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias, %res : tensor<100x60xf32>, tensor<60xf32>, tensor<100x60xf32>) outs(%e : tensor<100x60xf32>) {
  ^bb0(%x: f32, %bv: f32, %r: f32, %out: f32):
    %s = arith.addf %x, %bv : f32
    %relu = arith.maximumf %s, %zero : f32
    %v = arith.addf %relu, %r : f32
    linalg.yield %v : f32
  } -> tensor<100x60xf32>
  return %y : tensor<100x60xf32>
}
