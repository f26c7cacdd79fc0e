// Row maxima, column sums and a full-space result of x[256 x 2048] through
// the CUDA pipelines: rows wider than one warp holds beside column sums. A
// row is 512 vectors, 4 a thread of 128, so the row kernel packs 4 rows a
// block, a group of 4 warps each: with 4 SMs each block takes a run of 64
// rows (4 blocks of 512 threads), group g folding rows (16 b + i) * 4 + g
// of it. A row's max crosses its group's 4 warps through workgroup slots of
// the group's own (16 slots, group g's from 4 g on) and the block's
// barriers, which every group reaches (whole runs); at the end the groups'
// partials meet in a [4 groups x 512 slots] workgroup buffer and the block
// stores their sum as its row of the partial sums [4 x 2048].
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4})' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// row-pack=1: a block of 128 threads a row, runs of 16 rows (16 blocks:
// about 512 threads an SM), the partials [16 x 2048] stored from registers.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-pack=1})' \
// RUN:   | FileCheck %s --check-prefix=PACK1
// PACK1: memref.alloc() : memref<16x2048xf32>
// PACK1: gpu.func @wide_rows_g0(
// PACK1-SAME: workgroup(%{{[^ ]*}} : memref<4xf32, #gpu.address_space<workgroup>>
// PACK1-NOT: vector<4xf32>, #gpu.address_space<workgroup>
// PACK1-SAME: known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 16, 1, 1>
// row-pack=2: 2 rows a block of 256 threads, 8 blocks of 32 rows.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-pack=2})' \
// RUN:   | FileCheck %s --check-prefix=PACK2
// PACK2: memref.alloc() : memref<8x2048xf32>
// PACK2: gpu.func @wide_rows_g0(
// PACK2-SAME: workgroup(%{{[^ ]*}} : memref<8xf32, #gpu.address_space<workgroup>>{{.*}}, %{{[^ ]*}} : memref<2x512xvector<4xf32>, #gpu.address_space<workgroup>>
// PACK2-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 8, 1, 1>

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// CODEGEN-LABEL: func.func @wide_rows
// CODEGEN: %[[PART:.*]] = memref.alloc() : memref<4x2048xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@wide_rows_g0 {{.*}}%[[PART]] : memref<4x2048xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@wide_rows_g0_columns{{.*}}args(%[[PART]] : memref<4x2048xf32>
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: return
// The row kernel: group g = tid / 128, its thread tid % 128; the row's max
// through slot 4 g + warp of the group, lane l < 4 reading back slot 4 g + l
// after the barrier, a barrier at the end of each row (the next
// row's max reuses the slots).
// CODEGEN: gpu.func @wide_rows_g0(
// CODEGEN-SAME: workgroup(%[[SLOTS:[^ ]*]] : memref<16xf32, #gpu.address_space<workgroup>>{{.*}}, %[[SMEM:[^ ]*]] : memref<4x512xvector<4xf32>, #gpu.address_space<workgroup>>
// CODEGEN-SAME: known_block_size = array<i32: 512, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CODEGEN: %[[BID:.*]] = gpu.block_id x
// CODEGEN: %[[TID:.*]] = gpu.thread_id x
// CODEGEN: %[[GROUP:.*]] = arith.divui %[[TID]], %c128
// CODEGEN: %[[T:.*]] = arith.remui %[[TID]], %c128
// CODEGEN: %[[LOOP:.*]]:4 = scf.for %[[I:.*]] = %c0 to %c16 step %c1 iter_args(
// CODEGEN: %[[R0:.*]] = arith.muli %[[BID]], %c16
// CODEGEN: %[[R1:.*]] = arith.addi %[[R0]], %[[I]]
// CODEGEN: %[[R2:.*]] = arith.muli %[[R1]], %c4
// CODEGEN: %[[ROW:.*]] = arith.addi %[[R2]], %[[GROUP]]
// CODEGEN: vector.load %{{.*}}[%[[ROW]],
// CODEGEN: %[[WARP:.*]] = arith.divui %[[T]], %c32
// CODEGEN: %[[G4:.*]] = arith.muli %[[GROUP]], %c4
// CODEGEN: %[[MINE:.*]] = arith.addi %[[G4]], %[[WARP]]
// CODEGEN: memref.store %{{.*}}, %[[SLOTS]][%{{.*}}]
// CODEGEN: gpu.barrier
// CODEGEN: %[[W:.*]] = arith.minui %{{.*}}, %c3
// CODEGEN: %[[AT:.*]] = arith.addi %[[G4]], %[[W]]
// CODEGEN: memref.load %[[SLOTS]][%[[AT]]]
// CODEGEN-NOT: memref.load %[[SLOTS]]
// CODEGEN: gpu.barrier
// CODEGEN-NEXT: scf.yield
// CODEGEN: memref.store %[[LOOP]]#0, %[[SMEM]][%[[GROUP]], %[[T]]]
// CODEGEN: gpu.barrier
// CODEGEN-COUNT-4: memref.load %[[SMEM]]
// CODEGEN: vector.store %{{.*}}, %{{.*}}[%[[BID]], %{{.*}}] {{.*}} : memref<4x2048xf32>, vector<4xf32>
// CODEGEN: gpu.return

// PTX: .entry wide_rows_g0(
// PTX: .maxntid 512, 1, 1
// PTX: ld.global.v4.b32
// PTX: bar.sync 0;
// PTX: st.shared.v4.b32
// PTX: bar.sync 0;
// PTX: ld.shared.v4.b32
// PTX: st.global.v4.b32
// PTX: ret;
// PTX: .entry wide_rows_g0_columns
func.func @wide_rows(%x: tensor<256x2048xf32>) -> (tensor<256xf32>, tensor<2048xf32>, tensor<256x2048xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %er = tensor.empty() : tensor<256xf32>
  %ec = tensor.empty() : tensor<2048xf32>
  %e2 = tensor.empty() : tensor<256x2048xf32>
  %macc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%ninf : f32) outs(%er : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<256xf32>
  %cacc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ec : tensor<2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2048xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x2048xf32>) outs(%macc : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %sum = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x2048xf32>) outs(%cacc : tensor<2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<2048xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x2048xf32>) outs(%e2 : tensor<256x2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<256x2048xf32>
  return %max, %sum, %y : tensor<256xf32>, tensor<2048xf32>, tensor<256x2048xf32>
}
