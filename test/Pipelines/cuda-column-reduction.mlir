// A column mean of x[512 x 96] through the CUDA pipelines: the column sum
// is written with the reduced loop first (iterator order ["reduction",
// "parallel"], read back as (d0, d1) -> (d1)), as torch-mlir writes
// x.sum(0); fusion-normalize (fusion-reductions-last) puts its parallel loop
// first, x read at (d1, d0): a reduction whose rows are x's columns, its
// input contiguous along them. The scale by 1/512 over its output space
// [96] joins its group: one "reduction" group. A thread per output column
// keeps the loads x[row, column] coalesced (the column is the innermost
// index), but 96 threads would leave the GPU idle: code generation splits
// the 512 rows into 32 slices of 16. A partials kernel runs a thread per (slice,
// column), consecutive threads on consecutive columns, in blocks of one
// warp (3072 threads: 96 blocks, so that every SM gets work), each loading
// its 16 rows at once (few threads: up to 32 loads in flight each) and
// folding them, no cross-thread reduction, into partials[slice, column];
// with row-last-block=0, a finishing kernel (a thread per column: 32
// partials are loaded at once, consecutive threads on consecutive columns)
// folds each column's partials and applies the epilogue. By default (LAST)
// that finish runs in the partials kernel instead: its 96 blocks of 32
// threads take a tile of 32 columns of one slice each (block b: tile b mod
// 3, slice b div 3), and the last of a tile's 32 blocks to count itself in
// the tile's counter finishes the tile's 32 columns. One launch.
// test/Pipelines/cuda-contraction-ptxas.mlir assembles this PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=CODEGEN --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=ONCE --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=LAST
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.last.mlir
// RUN: %python %S/extract_ptx.py %t.last.mlir > %t.last.ptx
// RUN: %ptxas -arch=sm_90 %t.last.ptx -o %t.last.cubin
// RUN: FileCheck %s --check-prefix=LASTPTX --input-file=%t.last.ptx

// One group: the fill, the column sum and its epilogue; x is its only input.
// PLAN: #[[TR:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// PLAN: func.func @column_mean
// PLAN-SAME: (%[[X:[^:]*]]: tensor<512x96xf32> {kfuse.name = "x"})
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<512x96xf32>) {
// PLAN: %[[S:.*]] = linalg.generic {indexing_maps = [#[[TR]], #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<512x96xf32>) outs(%{{.*}} : tensor<96xf32>)
// PLAN: arith.addf
// PLAN: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<96xf32>)
// PLAN: arith.mulf
// PLAN: fusion.yield %[[M]] : tensor<96xf32>
// PLAN-NEXT: } -> tensor<96xf32>
// PLAN-NEXT: return %[[G]] : tensor<96xf32>

// The host: the partials (slice-major), x viewed as 32 slices of 16 rows
// (no copy), then the two launches.
// CODEGEN-LABEL: func.func @column_mean
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<512x96xf32> {kfuse.name = "x"}, %[[OUT:[^:]*]]: memref<96xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: linalg
// CODEGEN-DAG: %[[H1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[H32:.*]] = arith.constant 32 : index
// CODEGEN-DAG: %[[H96:.*]] = arith.constant 96 : index
// CODEGEN-DAG: %[[H3:.*]] = arith.constant 3 : index
// CODEGEN: %[[PART:.*]] = memref.alloc() : memref<32x96xf32>
// CODEGEN: %[[XS:.*]] = memref.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [32, 16, 96] : memref<512x96xf32> into memref<32x16x96xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@column_mean_g0_partial blocks in (%[[H96]], %[[H1]], %[[H1]]) threads in (%[[H32]], %[[H1]], %[[H1]]) args(%[[XS]] : memref<32x16x96xf32>, %[[PART]] : memref<32x96xf32>)
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@column_mean_g0 blocks in (%[[H3:.*]], %[[H1]], %[[H1]]) threads in (%[[H32]], %[[H1]], %[[H1]]) args(%[[PART]] : memref<32x96xf32>, %[[OUT]] : memref<96xf32>)
// CODEGEN-NEXT: return

// The partials kernel: thread i < 32 * 96 takes column i mod 96 of slice
// i div 96 and folds its 16 rows (one trip: no loop), then stores its
// partial.
// CODEGEN: gpu.func @column_mean_g0_partial(%[[KX:[^:]*]]: memref<32x16x96xf32>, %[[KP:[^:]*]]: memref<32x96xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 96, 1, 1>
// CODEGEN-DAG: %[[C96:.*]] = arith.constant 96 : index
// CODEGEN-DAG: %[[C3072:.*]] = arith.constant 3072 : index
// CODEGEN: %[[I:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CODEGEN-NEXT: %[[INSIDE:.*]] = arith.cmpi ult, %[[I]], %[[C3072]] : index
// CODEGEN-NEXT: scf.if %[[INSIDE]] {
// CODEGEN-NEXT: %[[COL:.*]] = arith.remui %[[I]], %[[C96]] : index
// CODEGEN-NEXT: %[[SLICE:.*]] = arith.divui %[[I]], %[[C96]] : index
// CODEGEN-NOT: scf.for
// CODEGEN-COUNT-16: memref.load %[[KX]][%[[SLICE]], %{{.*}}, %[[COL]]] : memref<32x16x96xf32>
// CODEGEN-NOT: memref.load
// CODEGEN-NOT: gpu.shuffle
// CODEGEN: memref.store %{{.*}}, %[[KP]][%[[SLICE]], %[[COL]]] : memref<32x96xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.return

// The finishing kernel: thread c < 96 folds the 32 partials of column c
// (no shuffle), scales by 1/512 and stores out[c].
// CODEGEN: gpu.func @column_mean_g0(%[[FP:[^:]*]]: memref<32x96xf32>, %[[FOUT:[^:]*]]: memref<96xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 3, 1, 1>
// CODEGEN-DAG: %[[SCALE:.*]] = arith.constant 0.001953125 : f32
// CODEGEN-DAG: %[[F96:.*]] = arith.constant 96 : index
// CODEGEN: %[[T:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CODEGEN-NEXT: arith.cmpi ult, %[[T]], %[[F96]] : index
// CODEGEN-COUNT-32: memref.load %[[FP]][%{{.*}}, %[[T]]] : memref<32x96xf32>
// CODEGEN-NOT: gpu.shuffle
// CODEGEN: %[[Y:.*]] = arith.mulf %{{.*}}, %[[SCALE]]{{.*}} : f32
// CODEGEN: memref.store %[[Y]], %[[FOUT]][%[[T]]] : memref<96xf32>

// Two launches and kernels, no gpu.all_reduce, one store each.
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-2: gpu.launch_func
// ONCE-NOT: gpu.launch_func
// ONCE-COUNT-2: gpu.func
// ONCE-NOT: gpu.all_reduce
// ONCE-NOT: gpu.func

// Neither kernel needs a barrier or a shuffle.
// PTX: .entry column_mean_g0_partial(
// PTX-NOT: shfl
// PTX-NOT: bar.sync
// PTX: .entry column_mean_g0(
// PTX-NOT: shfl
// PTX-NOT: bar.sync

// The default: one launch, a counter a tile of 32 columns (3 tiles), zero
// when the kernel starts.
// LAST-LABEL: func.func @column_mean
// LAST-SAME: (%[[X:[^:]*]]: memref<512x96xf32> {kfuse.name = "x"}, %[[OUT:[^:]*]]: memref<96xf32> {kfuse.name = "out0"})
// LAST-DAG: %[[H96:.*]] = arith.constant 96 : index
// LAST-DAG: %[[H32:.*]] = arith.constant 32 : index
// LAST-DAG: %[[H1:.*]] = arith.constant 1 : index
// LAST: %[[PART:.*]] = memref.alloc() : memref<32x96xf32>
// LAST: %[[XS:.*]] = memref.expand_shape %[[X]]
// LAST: %[[COUNT:.*]] = memref.alloc() {kfuse.counter} : memref<3xi32>
// LAST-NEXT: gpu.launch_func @kfuse_kernels::@column_mean_g0 blocks in (%[[H96]], %[[H1]], %[[H1]]) threads in (%[[H32]], %[[H1]], %[[H1]]) args(%[[XS]] : memref<32x16x96xf32>, %[[PART]] : memref<32x96xf32>, %[[COUNT]] : memref<3xi32>, %[[OUT]] : memref<96xf32>)
// LAST-NEXT: return
// The kernel: the partials as before, then block b counts itself in tile
// b mod 3's counter (wrapping at 31: 32 slices); the last to count folds
// the 32 partials of each of the tile's columns, thread t column 32 (b mod
// 3) + t, and stores the scaled sum.
// LAST: gpu.func @column_mean_g0(%[[KX:[^:]*]]: memref<32x16x96xf32>, %[[KP:[^:]*]]: memref<32x96xf32>, %[[KC:[^:]*]]: memref<3xi32>, %[[KOUT:[^:]*]]: memref<96xf32>) workgroup(%[[FLAG:[^:]*]] : memref<1xi32, #gpu.address_space<workgroup>>
// LAST-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 96, 1, 1>
// LAST-DAG: %[[C3:.*]] = arith.constant 3 : index
// LAST-DAG: %[[C31:.*]] = arith.constant 31 : i32
// LAST-DAG: %[[C32:.*]] = arith.constant 32 : index
// LAST-DAG: %[[C96:.*]] = arith.constant 96 : index
// LAST: %[[B:.*]] = gpu.block_id x
// LAST-COUNT-16: memref.load %[[KX]]
// LAST: memref.store %{{.*}}, %[[KP]]
// LAST: %[[TILE:.*]] = arith.remui %[[B]], %[[C3]] : index
// LAST-NEXT: gpu.barrier
// LAST: memref.extract_aligned_pointer_as_index %[[KC]]
// LAST: llvm.inline_asm has_side_effects {{.*}}atom.relaxed.gpu.global.inc.u32{{.*}}, %[[C31]]
// LAST: gpu.barrier
// LAST: %[[LASTFLAG:.*]] = memref.load %[[FLAG]]
// LAST: scf.if
// LAST-NEXT: %[[BASE:.*]] = arith.muli %[[TILE]], %[[C32]] : index
// LAST-NEXT: %[[COL:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// LAST-NEXT: arith.cmpi ult, %[[COL]], %[[C96]] : index
// LAST-COUNT-32: memref.load %[[KP]][%{{.*}}, %[[COL]]] : memref<32x96xf32>
// LAST: %[[Y:.*]] = arith.mulf
// LAST: memref.store %[[Y]], %[[KOUT]][%[[COL]]] : memref<96xf32>
// LAST-NOT: gpu.func

// One entry; its only barriers are the two around the count, no shuffle.
// LASTPTX: .entry column_mean_g0(
// LASTPTX-NOT: shfl
// LASTPTX-COUNT-2: bar.sync
// LASTPTX-NOT: bar.sync
// LASTPTX-NOT: .entry

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
