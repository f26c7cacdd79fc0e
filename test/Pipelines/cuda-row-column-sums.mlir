// Row maxima and column sums of x[1024 x 256] through the CUDA pipelines.
// The column sum (loops (column | row), x read as (d1, d0)) joins the rows'
// group: its parallel loop runs on the row kernel's columns, its reduced
// loop on the rows. A row is 64 vectors, two a lane of one warp, so the row
// kernel packs 8 rows a block, a warp each: with 4 SMs each block takes a
// run of 128 rows (8 blocks of 256 threads), warp w folding rows
// (16 b + i) * 8 + w of it, i < 16, into its columns' partials in
// registers, loop-carried; then the warps' partials meet in shared memory
// and the block stores their sum as its row of the partial sums [8 x 256];
// a second kernel adds the partials into the output. x is read once.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4})' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// row-fold=16: runs of 16 rows (2 a warp), 64 blocks; a negative row-fold is
// refused.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-fold=16})' \
// RUN:   | FileCheck %s --check-prefix=FOLD16
// FOLD16: memref.alloc() : memref<64x256xf32>
// FOLD16: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 64, 1, 1>
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-fold=-1})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADFOLD
// BADFOLD: fusion-codegen-cuda: row-fold must be >= 0 (0: from the SM count), got -1
// row-pack=1: a block a row (one warp), runs of 16 rows a block (64 blocks:
// about 512 threads an SM), the partials stored from registers, no shared
// memory and no barrier.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-pack=1})' \
// RUN:   | FileCheck %s --check-prefix=PACK1
// PACK1: memref.alloc() : memref<64x256xf32>
// PACK1: gpu.func @rows_and_columns_g0(
// PACK1-NOT: workgroup(
// PACK1-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 64, 1, 1>
// PACK1: scf.for
// PACK1-NOT: gpu.barrier
// PACK1: vector.store %{{.*}}#0
// PACK1-NOT: gpu.barrier
// PACK1: gpu.return
// With the rows streamed (row-chunks=0) the terms are not kept: the column
// sum, which reads only x, runs in the second kernel, split into 16 slices
// of 64 rows (a thread per slice and column, blocks of 256: one tile of
// columns, one counter), its last block to count finishing it.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-chunks=0})' \
// RUN:   | FileCheck %s --check-prefix=STREAM

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// PLAN-LABEL: func.func @rows_and_columns
// PLAN: %[[G:.*]]:3 = fusion.group "g0" "reduction"
// PLAN: iterator_types = ["parallel", "reduction"]
// PLAN: arith.maximumf
// PLAN: iterator_types = ["parallel", "reduction"]
// PLAN: arith.addf
// PLAN: fusion.yield
// PLAN-NOT: fusion.group
// PLAN: return %[[G]]#0, %[[G]]#1, %[[G]]#2

// CODEGEN-LABEL: func.func @rows_and_columns
// CODEGEN: %[[PART:.*]] = memref.alloc() : memref<8x256xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@rows_and_columns_g0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<1024x256xf32>, {{.*}}%[[PART]] : memref<8x256xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@rows_and_columns_g0_columns{{.*}}args(%[[PART]] : memref<8x256xf32>
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: return
// The row kernel: warp w = tid / 32, lane tid % 32; a loop over the warp's
// 16 rows carrying two vectors of partials (the lane's two chunks of 4
// columns; no barrier between rows: a row's reductions end at the warp),
// then each warp's partials into its row of the [8 warps x 64 slots]
// workgroup buffer, one barrier, and each of the first 64 threads adds the
// 8 warps' values of its slot and stores them.
// CODEGEN: gpu.func @rows_and_columns_g0(
// CODEGEN-SAME: workgroup(%[[SMEM:.*]] : memref<8x64xvector<4xf32>, #gpu.address_space<workgroup>>
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 8, 1, 1>
// CODEGEN: %[[BID:.*]] = gpu.block_id x
// CODEGEN: %[[TID:.*]] = gpu.thread_id x
// CODEGEN: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CODEGEN: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CODEGEN: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %c0 to %c16 step %c1 iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}) -> (vector<4xf32>, vector<4xf32>)
// CODEGEN: %[[R0:.*]] = arith.muli %[[BID]], %c16
// CODEGEN: %[[R1:.*]] = arith.addi %[[R0]], %[[I]]
// CODEGEN: %[[R2:.*]] = arith.muli %[[R1]], %c8
// CODEGEN: %[[ROW:.*]] = arith.addi %[[R2]], %[[WARP]]
// CODEGEN: vector.load %{{.*}}[%[[ROW]],
// CODEGEN: vector.load %{{.*}}[%[[ROW]],
// CODEGEN: arith.maximumf
// CODEGEN-DAG: %[[N0:.*]] = arith.addf %{{.*}}, %[[A0]] {{.*}}: vector<4xf32>
// CODEGEN-DAG: %[[N1:.*]] = arith.addf %{{.*}}, %[[A1]] {{.*}}: vector<4xf32>
// CODEGEN-NOT: gpu.barrier
// CODEGEN: scf.yield %[[N0]], %[[N1]] : vector<4xf32>, vector<4xf32>
// CODEGEN: memref.store %[[LOOP]]#0, %[[SMEM]][%[[WARP]], %[[LANE]]]
// CODEGEN: memref.store %[[LOOP]]#1, %[[SMEM]][%[[WARP]],
// CODEGEN-NEXT: gpu.barrier
// CODEGEN-COUNT-8: memref.load %[[SMEM]][%{{.*}}, %[[TID]]]
// CODEGEN: vector.store %{{.*}}, %{{.*}}[%[[BID]], %{{.*}}] {{.*}} : memref<8x256xf32>, vector<4xf32>
// CODEGEN-NOT: vector.store
// CODEGEN: gpu.return

// The loop: 8 adds into the partials, two 16-byte loads per row; after it
// two 16-byte shared stores, one barrier, 8 shared loads and one 16-byte
// store of the block's partials.
// PTX: .entry rows_and_columns_g0(
// PTX-COUNT-8: add.rn.f32
// PTX-NOT: bar.sync
// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32
// PTX-NOT: bar.sync
// PTX: st.shared.v4.b32
// PTX: st.shared.v4.b32
// PTX-NEXT: bar.sync 0;
// PTX-COUNT-8: ld.shared.v4.b32
// PTX: st.global.v4.b32
// PTX-NOT: bar.sync
// PTX: ret;
// PTX: .entry rows_and_columns_g0_columns

// STREAM-LABEL: func.func @rows_and_columns
// STREAM-SAME: (%[[X:[^:]*]]: memref<1024x256xf32>
// STREAM: gpu.launch_func @kfuse_kernels::@rows_and_columns_g0 blocks in (%c1024, %c1, %c1) threads in (%c32, %c1, %c1) args(%[[X]] : memref<1024x256xf32>, %{{.*}} : memref<1024x256xf32>, %{{.*}} : memref<1024xf32>)
// STREAM: memref.expand_shape %[[X]]
// STREAM: memref.alloc() {kfuse.counter} : memref<1xi32>
// STREAM-NEXT: gpu.launch_func @kfuse_kernels::@rows_and_columns_g0_columns blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1)
// STREAM-NOT: gpu.launch_func
func.func @rows_and_columns(%x: tensor<1024x256xf32>) -> (tensor<1024xf32>, tensor<256xf32>, tensor<1024x256xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %er = tensor.empty() : tensor<1024xf32>
  %ec = tensor.empty() : tensor<256xf32>
  %e2 = tensor.empty() : tensor<1024x256xf32>
  %macc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%ninf : f32) outs(%er : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1024xf32>
  %cacc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ec : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<256xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1024x256xf32>) outs(%macc : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1024x256xf32>) outs(%cacc : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1024x256xf32>) outs(%e2 : tensor<1024x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<1024x256xf32>
  return %max, %sum, %y : tensor<1024xf32>, tensor<256xf32>, tensor<1024x256xf32>
}
