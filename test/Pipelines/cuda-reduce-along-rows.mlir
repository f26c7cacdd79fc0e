// REQUIRES: ptxas
//
// Reductions of inputs contiguous along the rows: sums over the leading
// dimension in the form fusion-normalize gives them (the reduction loop
// last, x read as (d0, d1) -> (d1, d0)). A block per output column would
// read that column with a stride (every warp load touching 32 sectors);
// a thread per column reads x[row, column] coalesced, consecutive threads on
// consecutive columns.
//  - colsum_split, x[4096 x 256]: 256 threads would leave the GPU idle, so
//    the rows split into 256 slices of 16 (about 1024 threads per SM of an
//    H100, each folding at least 16 rows): a partials kernel with a thread
//    per (slice, column), the slice outermost, loading its 16 rows at once
//    (8 loads in flight per thread and trip, more while threads are few:
//    16 here), then a finishing kernel that folds each column's 256
//    partials (slice-major, still in L2) in tiles of 8 columns: a block per
//    tile, 64 threads a column, each folding 4 partials.
//  - colsum_wide, x[8 x 131072]: enough columns for a thread each, one
//    kernel, each thread folding its 8 rows (blocks of 256 threads).
//  - colsum_short, x[64 x 256]: too few rows to be worth two launches and
//    too few columns for a thread each: a block per tile of 8 columns (one
//    32-byte sector of each row), 16 threads on each column folding 4 of
//    its rows, so the lanes of a warp load 4 whole sectors (a block per
//    column loaded one sector per value); lanes of one column combine with
//    xor shuffles 8 and 16, the warps through a workgroup slot per warp and
//    column.
//  - colsum_narrow, x[40960 x 3]: 3 columns, fewer than a warp's threads:
//    interleaved slices (slice s holds rows s, s + 2560, ..., x viewed as
//    [16, 2560, 3]), so that consecutive threads, (slice, column) with the
//    column fastest, read consecutive floats (contiguous slices of 16 rows
//    would put a warp's loads in 11 slices, 192 bytes apart, a sector for
//    each 12 bytes). 2560 slices, a multiple of 8: each row of the view
//    (2560 x 3 floats) is whole 32-byte sectors.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=KERNEL --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// CHECK-LABEL: func.func @colsum_split
// CHECK-SAME: (%[[X:[^:]*]]: memref<4096x256xf32>, %[[OUT:[^:]*]]: memref<256xf32>)
// CHECK-DAG: %[[H1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[H32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[H256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[H512:.*]] = arith.constant 512 : index
// CHECK: %[[PART:.*]] = memref.alloc() : memref<256x256xf32>
// CHECK: %[[XS:.*]] = memref.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [256, 16, 256] : memref<4096x256xf32> into memref<256x16x256xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_split_g0_partial blocks in (%[[H256]], %[[H1]], %[[H1]]) threads in (%[[H256]], %[[H1]], %[[H1]]) args(%[[XS]] : memref<256x16x256xf32>, %[[PART]] : memref<256x256xf32>)
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@colsum_split_g0 blocks in (%[[H32]], %[[H1]], %[[H1]]) threads in (%[[H512]], %[[H1]], %[[H1]]) args(%[[PART]] : memref<256x256xf32>, %[[OUT]] : memref<256xf32>)
// CHECK-NEXT: return

// CHECK-LABEL: func.func @colsum_wide
// CHECK-DAG: %[[W1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[W256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[W512:.*]] = arith.constant 512 : index
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_wide_g0 blocks in (%[[W512]], %[[W1]], %[[W1]]) threads in (%[[W256]], %[[W1]], %[[W1]])
// CHECK-NEXT: return

// CHECK-LABEL: func.func @colsum_short
// CHECK-DAG: %[[S1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[S32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[S128:.*]] = arith.constant 128 : index
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_short_g0 blocks in (%[[S32]], %[[S1]], %[[S1]]) threads in (%[[S128]], %[[S1]], %[[S1]])
// CHECK-NEXT: return

// CHECK-LABEL: func.func @colsum_narrow
// CHECK-SAME: (%[[NX:[^:]*]]: memref<40960x3xf32>, %{{.*}}: memref<3xf32>)
// CHECK: %[[NP:.*]] = memref.alloc() : memref<2560x3xf32>
// CHECK: %[[NXS:.*]] = memref.expand_shape %[[NX]] {{\[\[}}0, 1], [2]] output_shape [16, 2560, 3] : memref<40960x3xf32> into memref<16x2560x3xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_narrow_g0_partial {{.*}} args(%[[NXS]] : memref<16x2560x3xf32>, %[[NP]] : memref<2560x3xf32>)
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@colsum_narrow_g0 {{.*}} args(%[[NP]] : memref<2560x3xf32>

// The partials kernel: thread i < 256 * 256 takes column i mod 256 of slice
// i div 256, folds its 16 rows in one trip, stores partials[slice, col].
// KERNEL: gpu.func @colsum_split_g0_partial(%[[KX:[^:]*]]: memref<256x16x256xf32>, %[[KP:[^:]*]]: memref<256x256xf32>) kernel
// KERNEL-DAG: %[[C256:.*]] = arith.constant 256 : index
// KERNEL-DAG: %[[C65536:.*]] = arith.constant 65536 : index
// KERNEL: %[[I:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// KERNEL-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[C65536]] : index
// KERNEL-NEXT: scf.if %[[IN]] {
// KERNEL-NEXT: %[[COL:.*]] = arith.remui %[[I]], %[[C256]] : index
// KERNEL-NEXT: %[[SLICE:.*]] = arith.divui %[[I]], %[[C256]] : index
// KERNEL-NOT: scf.for
// KERNEL-COUNT-16: memref.load %[[KX]][%[[SLICE]], %{{.*}}, %[[COL]]] : memref<256x16x256xf32>
// KERNEL-NOT: memref.load
// KERNEL-NOT: gpu.shuffle
// KERNEL: memref.store %{{.*}}, %[[KP]][%[[SLICE]], %[[COL]]] : memref<256x256xf32>
// KERNEL-NEXT: }
// KERNEL-NEXT: gpu.return

// The finishing kernel: block b folds the partials of columns 8 b + tid mod
// 8, shuffles, the first thread of each column stores.
// KERNEL: gpu.func @colsum_split_g0(%[[FP:[^:]*]]: memref<256x256xf32>, %[[FOUT:[^:]*]]: memref<256xf32>) workgroup(
// KERNEL: %[[B:.*]] = gpu.block_id x
// KERNEL-NEXT: %[[FT:.*]] = gpu.thread_id x
// KERNEL-NEXT: %{{.*}} = arith.divui %[[FT]], %[[F8:.*]] : index
// KERNEL-NEXT: %[[FL:.*]] = arith.remui %[[FT]], %[[F8]] : index
// KERNEL-NEXT: %[[FB8:.*]] = arith.muli %[[B]], %[[F8]] : index
// KERNEL-NEXT: %[[FCOL:.*]] = arith.addi %[[FB8]], %[[FL]] : index
// KERNEL: memref.load %[[FP]][%{{.*}}, %[[FCOL]]] : memref<256x256xf32>
// KERNEL: gpu.shuffle xor
// KERNEL: memref.store %{{.*}}, %[[FOUT]][%[[FCOL]]] : memref<256xf32>

// The wide sum: thread i < 131072 folds rows 0..7 of column i, no shuffle.
// KERNEL: gpu.func @colsum_wide_g0(%[[WX:[^:]*]]: memref<8x131072xf32>, %[[WOUT:[^:]*]]: memref<131072xf32>) kernel
// KERNEL: %[[WI:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// KERNEL-NEXT: arith.cmpi ult, %[[WI]], %{{.*}} : index
// KERNEL-COUNT-8: memref.load %[[WX]][%{{.*}}, %[[WI]]] : memref<8x131072xf32>
// KERNEL-NOT: gpu.shuffle
// KERNEL: memref.store %{{.*}}, %[[WOUT]][%[[WI]]] : memref<131072xf32>
// KERNEL-NEXT: }
// KERNEL-NEXT: gpu.return

// The short sum: block b takes columns 8b + tid mod 8, thread tid folds
// rows tid div 8 + 16 j; shuffles 8 and 16 apart, a slot per warp and
// column, and the first thread of each column stores.
// KERNEL: gpu.func @colsum_short_g0(%[[SX:[^:]*]]: memref<64x256xf32>, %[[SOUT:[^:]*]]: memref<256xf32>) workgroup(%[[SLOTS:[^:]*]] : memref<32xf32, #gpu.address_space<workgroup>>
// KERNEL-DAG: %[[K8:.*]] = arith.constant 8 : index
// KERNEL-DAG: %[[K16:.*]] = arith.constant 16 : index
// KERNEL-DAG: %[[K8I:.*]] = arith.constant 8 : i32
// KERNEL-DAG: %[[K16I:.*]] = arith.constant 16 : i32
// KERNEL: %[[SB:.*]] = gpu.block_id x
// KERNEL-NEXT: %[[ST:.*]] = gpu.thread_id x
// KERNEL-NEXT: %[[SC:.*]] = arith.divui %[[ST]], %[[K8]] : index
// KERNEL-NEXT: %[[SL:.*]] = arith.remui %[[ST]], %[[K8]] : index
// KERNEL-NEXT: %[[SB8:.*]] = arith.muli %[[SB]], %[[K8]] : index
// KERNEL-NEXT: %[[SCOL:.*]] = arith.addi %[[SB8]], %[[SL]] : index
// KERNEL-NEXT: scf.for %[[SR:.*]] = %[[SC]] to
// KERNEL-COUNT-4: memref.load %[[SX]][%{{.*}}, %[[SCOL]]] : memref<64x256xf32>
// KERNEL: gpu.shuffle xor %{{.*}}, %[[K8I]]
// KERNEL: gpu.shuffle xor %{{.*}}, %[[K16I]]
// KERNEL: memref.store %{{.*}}, %[[SLOTS]]
// KERNEL: gpu.barrier
// KERNEL: memref.load %[[SLOTS]]
// KERNEL: gpu.shuffle xor %{{.*}}, %[[K8I]]
// KERNEL: gpu.shuffle xor %{{.*}}, %[[K16I]]
// KERNEL: %[[FIRST:.*]] = arith.cmpi eq, %[[SC]], %{{.*}} : index
// KERNEL-NEXT: scf.if %[[FIRST]] {
// KERNEL-NEXT: memref.store %{{.*}}, %[[SOUT]][%[[SCOL]]] : memref<256xf32>

// PTX: .entry colsum_split_g0_partial(
// PTX-NOT: shfl
// PTX: .entry colsum_split_g0(
// PTX: shfl.sync.bfly
// PTX: .entry colsum_wide_g0(
// PTX-NOT: shfl
// PTX: .entry colsum_short_g0(
// PTX: shfl.sync.bfly

// The narrow sum's partials: thread i < 2560 * 3 on column i mod 3 of
// slice i div 3, its 16 rows 2560 apart, x[k, slice, column].
// KERNEL: gpu.func @colsum_narrow_g0_partial(%[[NKX:[^:]*]]: memref<16x2560x3xf32>, %[[NKP:[^:]*]]: memref<2560x3xf32>) kernel
// KERNEL: %[[NCOL:.*]] = arith.remui %{{.*}}, %c3 : index
// KERNEL-NEXT: %[[NSL:.*]] = arith.divui %{{.*}}, %c3 : index
// KERNEL-COUNT-16: memref.load %[[NKX]][%{{.*}}, %[[NSL]], %[[NCOL]]] : memref<16x2560x3xf32>
// KERNEL: memref.store %{{.*}}, %[[NKP]][%[[NSL]], %[[NCOL]]] : memref<2560x3xf32>

#t = affine_map<(d0, d1) -> (d1, d0)>
#o = affine_map<(d0, d1) -> (d0)>
func.func @colsum_split(%x: tensor<4096x256xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#t, #o], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x256xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  return %s : tensor<256xf32>
}

func.func @colsum_wide(%x: tensor<8x131072xf32>) -> tensor<131072xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<131072xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<131072xf32>) -> tensor<131072xf32>
  %s = linalg.generic {indexing_maps = [#t, #o], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x131072xf32>) outs(%f : tensor<131072xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<131072xf32>
  return %s : tensor<131072xf32>
}

func.func @colsum_short(%x: tensor<64x256xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#t, #o], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  return %s : tensor<256xf32>
}

func.func @colsum_narrow(%x: tensor<40960x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#t, #o], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<40960x3xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}
