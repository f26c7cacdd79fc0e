// REQUIRES: ptxas
//
// Row tiles: reductions whose inputs are contiguous along the rows (here
// over the channels of NCHW tensors: rows are (n, h, w), consecutive rows
// at consecutive addresses, a row's columns 4 * h * w bytes apart).
//  - channel_softmax, x[4, 1000, 7, 7]: 196 rows, too few for a thread
//    each. A block per row would read each value with its own sector.
//    Instead a block takes a tile of 8 consecutive rows (one 32-byte
//    sector of f32 per column), thread tid works on row tid mod 8 at the
//    columns of column thread tid div 8: every warp load reads 4 whole
//    sectors. 25 tiles are too few for the SMs, so 128 column threads a row
//    (1024 threads), 8 values each, in registers: x is read once. Lanes of
//    a row combine with xor shuffles 8 and 16, then the 32 warps through a
//    slot per warp and row, each lane folding 8 of them. 196 rows are not
//    a whole number of tiles: the last tile's threads past row 195 compute
//    row 195 again (barriers need them) and store nothing.
//  - channel_softmax_many, x[64, 256, 56, 56]: rows enough for a thread
//    each, but a thread per row would read x once per phase (three times);
//    tiles keep each row in registers (16 values per thread, 128 threads:
//    8 rows x 16 column threads) and read x once.
//  - channel_sum_many: one pass serves a sum, so it keeps a thread per row
//    (no shuffles, no workgroup memory).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90})' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=KERNEL --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90 row-tile=32})' | FileCheck %s --check-prefix=TILE32
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-tile=12})' 2>&1 | FileCheck %s --check-prefix=BADTILE

// row-tile=32: tiles of 32 rows (128-byte lines of f32 a column); the sum,
// which keeps a thread per row, is unchanged.
// TILE32-LABEL: func.func @channel_softmax(
// TILE32: gpu.launch_func @kfuse_kernels::@channel_softmax_g0 blocks in (%c7, %c1, %c1) threads in (%c1024, %c1, %c1)
// TILE32-LABEL: func.func @channel_softmax_many(
// TILE32: gpu.launch_func @kfuse_kernels::@channel_softmax_many_g0 blocks in (%c6272, %c1, %c1) threads in (%c512, %c1, %c1)
// TILE32-LABEL: func.func @channel_sum_many(
// TILE32: gpu.launch_func @kfuse_kernels::@channel_sum_many_g0 blocks in (%c784, %c1, %c1) threads in (%c256, %c1, %c1)
// BADTILE: fusion-codegen-cuda: row-tile must be 0 or a power of two up to 32, got 12

// CHECK-LABEL: func.func @channel_softmax(
// CHECK-DAG: %[[H1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[H25:.*]] = arith.constant 25 : index
// CHECK-DAG: %[[H1024:.*]] = arith.constant 1024 : index
// CHECK: gpu.launch_func @kfuse_kernels::@channel_softmax_g0 blocks in (%[[H25]], %[[H1]], %[[H1]]) threads in (%[[H1024]], %[[H1]], %[[H1]])

// CHECK-LABEL: func.func @channel_softmax_many(
// CHECK-DAG: %[[M1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M25088:.*]] = arith.constant 25088 : index
// CHECK-DAG: %[[M128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @kfuse_kernels::@channel_softmax_many_g0 blocks in (%[[M25088]], %[[M1]], %[[M1]]) threads in (%[[M128]], %[[M1]], %[[M1]])

// CHECK-LABEL: func.func @channel_sum_many(
// CHECK-DAG: %[[S1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[S784:.*]] = arith.constant 784 : index
// CHECK-DAG: %[[S256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @kfuse_kernels::@channel_sum_many_g0 blocks in (%[[S784]], %[[S1]], %[[S1]]) threads in (%[[S256]], %[[S1]], %[[S1]])

// The tile kernel: row 8 b + tid mod 8 (at most 195), column thread tid div
// 8; each of x's 8 values per thread loaded once; two workgroup buffers of
// 32 warps x 8 rows (max and sum); the stores guarded by the row's range.
// KERNEL: gpu.func @channel_softmax_g0(%[[X:[^:]*]]: memref<4x1000x7x7xf32>, %[[Y:[^:]*]]: memref<4x1000x7x7xf32>) workgroup(%[[MAXS:[^:]*]] : memref<256xf32, #gpu.address_space<workgroup>> {{.*}}, %[[SUMS:[^:]*]] : memref<256xf32, #gpu.address_space<workgroup>>
// KERNEL-DAG: %[[C8:.*]] = arith.constant 8 : index
// KERNEL-DAG: %[[C195:.*]] = arith.constant 195 : index
// KERNEL-DAG: %[[C196:.*]] = arith.constant 196 : index
// KERNEL-DAG: %[[C8I:.*]] = arith.constant 8 : i32
// KERNEL-DAG: %[[C16I:.*]] = arith.constant 16 : i32
// KERNEL: %[[B:.*]] = gpu.block_id x
// KERNEL-NEXT: %[[T:.*]] = gpu.thread_id x
// KERNEL-NEXT: %[[COLT:.*]] = arith.divui %[[T]], %[[C8]] : index
// KERNEL-NEXT: %[[LANE:.*]] = arith.remui %[[T]], %[[C8]] : index
// KERNEL-NEXT: %[[B8:.*]] = arith.muli %[[B]], %[[C8]] : index
// KERNEL-NEXT: %[[ROW:.*]] = arith.addi %[[B8]], %[[LANE]] : index
// KERNEL-NEXT: %[[INSIDE:.*]] = arith.cmpi ult, %[[ROW]], %[[C196]] : index
// KERNEL-NEXT: %{{.*}} = arith.minui %[[ROW]], %[[C195]] : index
// KERNEL-COUNT-8: memref.load %[[X]]
// KERNEL-NOT: memref.load %[[X]]
// KERNEL: gpu.shuffle xor %{{.*}}, %[[C8I]]
// KERNEL: gpu.shuffle xor %{{.*}}, %[[C16I]]
// KERNEL: memref.store %{{.*}}, %[[MAXS]]
// KERNEL: gpu.barrier
// KERNEL-COUNT-8: memref.load %[[MAXS]]
// KERNEL-NOT: memref.load %[[X]]
// KERNEL: memref.store %{{.*}}, %[[SUMS]]
// KERNEL: gpu.barrier
// KERNEL-NOT: memref.load %[[X]]
// KERNEL: %[[OK:.*]] = arith.andi %{{.*}}, %[[INSIDE]] : i1
// KERNEL-NEXT: scf.if %[[OK]] {
// KERNEL-NEXT: memref.store %{{.*}}, %[[Y]]
// KERNEL-COUNT-7: memref.store %{{.*}}, %[[Y]]
// KERNEL-NOT: memref.load %[[X]]
// KERNEL: gpu.return

// Many rows: 16 values per thread, read once; rows divide into tiles (no
// clamp, no guard).
// KERNEL: gpu.func @channel_softmax_many_g0(%[[MX:[^:]*]]: memref<64x256x56x56xf32>, %[[MY:[^:]*]]: memref<64x256x56x56xf32>) workgroup(
// KERNEL-NOT: arith.minui
// KERNEL-COUNT-16: memref.load %[[MX]]
// KERNEL-NOT: memref.load %[[MX]]
// KERNEL: gpu.barrier
// KERNEL-NOT: memref.load %[[MX]]
// KERNEL: gpu.barrier
// KERNEL-NOT: memref.load %[[MX]]
// KERNEL-NOT: scf.if
// KERNEL-COUNT-16: memref.store %{{.*}}, %[[MY]]
// KERNEL-NEXT: gpu.return

// The sum keeps a thread per row.
// KERNEL: gpu.func @channel_sum_many_g0(
// KERNEL-NOT: workgroup
// KERNEL-NOT: gpu.shuffle
// KERNEL: gpu.return

// PTX: .entry channel_softmax_g0(
// PTX: shfl.sync.bfly
// PTX: bar.sync
// PTX: .entry channel_softmax_many_g0(
// PTX: shfl.sync.bfly
// PTX: .entry channel_sum_many_g0(
// PTX-NOT: shfl
// PTX-NOT: bar.sync

#nchw_red = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>

func.func @channel_softmax(%x: tensor<4x1000x7x7xf32>) -> tensor<4x1000x7x7xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4x7x7xf32>
  %ef = tensor.empty() : tensor<4x1000x7x7xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x7x7xf32>) -> tensor<4x7x7xf32>
  %m = linalg.generic {indexing_maps = [#nchw_red, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x1000x7x7xf32>) outs(%fm : tensor<4x7x7xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4x7x7xf32>
  %e = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x1000x7x7xf32>, tensor<4x7x7xf32>) outs(%ef : tensor<4x1000x7x7xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<4x1000x7x7xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<4x7x7xf32>) -> tensor<4x7x7xf32>
  %s = linalg.generic {indexing_maps = [#nchw_red, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x1000x7x7xf32>) outs(%fs : tensor<4x7x7xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4x7x7xf32>
  %y = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %s : tensor<4x1000x7x7xf32>, tensor<4x7x7xf32>) outs(%ef : tensor<4x1000x7x7xf32>) {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %v = arith.divf %in, %t : f32
    linalg.yield %v : f32
  } -> tensor<4x1000x7x7xf32>
  return %y : tensor<4x1000x7x7xf32>
}

func.func @channel_softmax_many(%x: tensor<64x256x56x56xf32>) -> tensor<64x256x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64x56x56xf32>
  %ef = tensor.empty() : tensor<64x256x56x56xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<64x56x56xf32>) -> tensor<64x56x56xf32>
  %m = linalg.generic {indexing_maps = [#nchw_red, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<64x256x56x56xf32>) outs(%fm : tensor<64x56x56xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<64x56x56xf32>
  %e = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<64x256x56x56xf32>, tensor<64x56x56xf32>) outs(%ef : tensor<64x256x56x56xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<64x256x56x56xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<64x56x56xf32>) -> tensor<64x56x56xf32>
  %s = linalg.generic {indexing_maps = [#nchw_red, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<64x256x56x56xf32>) outs(%fs : tensor<64x56x56xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<64x56x56xf32>
  %y = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %s : tensor<64x256x56x56xf32>, tensor<64x56x56xf32>) outs(%ef : tensor<64x256x56x56xf32>) {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %v = arith.divf %in, %t : f32
    linalg.yield %v : f32
  } -> tensor<64x256x56x56xf32>
  return %y : tensor<64x256x56x56xf32>
}

func.func @channel_sum_many(%x: tensor<64x256x56x56xf32>) -> tensor<64x56x56xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64x56x56xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<64x56x56xf32>) -> tensor<64x56x56xf32>
  %s = linalg.generic {indexing_maps = [#nchw_red, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<64x256x56x56xf32>) outs(%fs : tensor<64x56x56xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<64x56x56xf32>
  return %s : tensor<64x56x56xf32>
}
