// REQUIRES: ptxas
//
// A split reduction along the rows whose group also stores a full-space
// result: batch normalization in training over an NHWC tensor, y = (x -
// mean) * rsqrt(var + eps) with the statistics per channel over (n, h, w).
//  - bn_nhwc, x[64, 56, 56, 256]: 256 channels are too few rows to fill the
//    GPU and each is 200704 values long, too long for a tile of rows to
//    hold in registers. The statistics split as for a plain variance (a
//    partials kernel with a thread per slice and channel over 512 slices of
//    392 points, folding the sums and squared deviations in one pass, then
//    a finishing kernel in tiles of 8 channels), and a third kernel stores
//    y once mean and variance are in memory. By default it runs over
//    (positions, channels): a warp a position (256 channels, 2 vectors of
//    4 a lane), 4 positions a block, x read and y stored as 16-byte
//    vectors; the finishing kernel computes each channel's mean and
//    1 / sqrt(var + eps) once and stores them, the store reads them at the
//    column (no division or rsqrt per point), and every vector is loaded
//    before the first store. x is read twice, y written once.
//  - row-store-transposed=false: the store over the same slices as the
//    statistics, a thread per slice and channel, 16 points in flight,
//    consecutive threads on consecutive channels (scalars).
//  - bn_nhwc_c64, x[64, 112, 112, 64] (a ResNet's first batch norm): 64
//    channels are 16 vectors, half a warp's: the store's lanes go in
//    groups of 16 a position, 2 positions a warp, 8 a block, each thread
//    one vector (a warp's request moves 512 bytes).
//  - bn_nhwc_small, x[8, 8, 8, 256]: 512 values a channel fit a tile's
//    registers: one kernel in tiles of 8 channels reads x once, no split.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90})' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=KERNEL --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90 row-store-transposed=false})' -o %t.slices.mlir
// RUN: FileCheck %s --check-prefix=SLICES --input-file=%t.slices.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// CHECK-LABEL: func.func @bn_nhwc(
// CHECK-SAME: %[[X:[^:]*]]: memref<64x56x56x256xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<64x56x56x256xf32> {kfuse.name = "y"})
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C50176:.*]] = arith.constant 50176 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[XC:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]]
// CHECK: %[[YC:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1, 2], [3]]
// CHECK: %[[XS:.*]] = memref.expand_shape %[[XC]] {{\[\[}}0, 1], [2]] output_shape [512, 392, 256]
// CHECK: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0_partial blocks in (%[[C512]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[XS]] : memref<512x392x256xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0 blocks in
// CHECK-SAME: args({{.*}}, %[[RSTD:[^ ]*]] : memref<256xf32>, %[[MEAN:[^ ]*]] : memref<256xf32>)
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0_store blocks in (%[[C50176]], %[[C1]], %[[C1]]) threads in (%[[C128]], %[[C1]], %[[C1]]) args(%[[XC]] : memref<200704x256xf32>, %[[RSTD]] : memref<256xf32>, %[[MEAN]] : memref<256xf32>, %[[YC]] : memref<200704x256xf32>)
// CHECK-NEXT: return

// CHECK-LABEL: func.func @bn_nhwc_c64(
// CHECK-DAG: %[[D100352:.*]] = arith.constant 100352 : index
// CHECK-DAG: %[[D128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[D1:.*]] = arith.constant 1 : index
// CHECK: gpu.launch_func @kfuse_kernels::@bn_nhwc_c64_g0_partial
// CHECK: gpu.launch_func @kfuse_kernels::@bn_nhwc_c64_g0 blocks
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@bn_nhwc_c64_g0_store blocks in (%[[D100352]], %[[D1]], %[[D1]]) threads in (%[[D128]], %[[D1]], %[[D1]]) args({{.*}} : memref<802816x64xf32>, {{.*}} : memref<64xf32>, {{.*}} : memref<64xf32>, {{.*}} : memref<802816x64xf32>)
// CHECK-NEXT: return

// CHECK-LABEL: func.func @bn_nhwc_small(
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kfuse_kernels::@bn_nhwc_small_g0 blocks in (%c32, %c1, %c1) threads in (%c1024, %c1, %c1)
// CHECK-NEXT: return

// The finishing kernel stores each channel's 1 / sqrt(var + eps) and mean.
// KERNEL: gpu.func @bn_nhwc_g0(
// KERNEL-SAME: %[[FR:[^:]*]]: memref<256xf32>, %[[FM:[^:]*]]: memref<256xf32>) workgroup
// KERNEL: math.rsqrt
// KERNEL: memref.store %{{.*}}, %[[FR]][%{{.*}}] : memref<256xf32>
// KERNEL-NEXT: memref.store %{{.*}}, %[[FM]][%{{.*}}] : memref<256xf32>
// KERNEL: gpu.return
// The storing kernel: warp tid / 32 of block b on position 4 b + tid / 32,
// lane l on channels 4 l and 4 (l + 32), each a vector of x, of the
// 1 / sqrt(var + eps) and of the mean, all loaded before the first store;
// no division, no rsqrt, no shuffle.
// KERNEL: gpu.func @bn_nhwc_g0_store(%[[KX:[^:]*]]: memref<200704x256xf32>, %[[KR:[^:]*]]: memref<256xf32>, %[[KM:[^:]*]]: memref<256xf32>, %[[KY:[^:]*]]: memref<200704x256xf32>) kernel
// KERNEL-NOT: gpu.shuffle
// KERNEL: %[[P:.*]] = arith.addi
// KERNEL: %[[C0:.*]] = arith.muli %{{.*}}, %c4 : index
// KERNEL: %[[C1:.*]] = arith.muli %{{.*}}, %c4 : index
// KERNEL-NEXT: %[[X0:.*]] = vector.load %[[KX]][%[[P]], %[[C0]]] {alignment = 16 : i64} : memref<200704x256xf32>, vector<4xf32>
// KERNEL-NEXT: %[[R0:.*]] = vector.load %[[KR]][%[[C0]]] {{.*}} vector<4xf32>
// KERNEL-NEXT: %[[M0:.*]] = vector.load %[[KM]][%[[C0]]] {{.*}} vector<4xf32>
// KERNEL-NEXT: %[[D0:.*]] = arith.subf %[[X0]], %[[M0]]
// KERNEL-NEXT: %[[Y0:.*]] = arith.mulf %[[D0]], %[[R0]]
// KERNEL-NEXT: vector.load %[[KX]][%[[P]], %[[C1]]]
// KERNEL-NOT: math.rsqrt
// KERNEL-NOT: arith.divf
// KERNEL-NOT: vector.store
// KERNEL: vector.store %[[Y0]], %[[KY]][%[[P]], %[[C0]]] {alignment = 16 : i64} : memref<200704x256xf32>, vector<4xf32>
// KERNEL-NEXT: vector.store %{{.*}}, %[[KY]][%[[P]], %[[C1]]]
// KERNEL-NEXT: gpu.return
// 64 channels: thread tid of block b on position 8 b + tid / 16, channels
// 4 (tid mod 16) on, one vector of each.
// KERNEL: gpu.func @bn_nhwc_c64_g0_store(%[[QX:[^:]*]]: memref<802816x64xf32>, %[[QR:[^:]*]]: memref<64xf32>, %[[QM:[^:]*]]: memref<64xf32>, %[[QY:[^:]*]]: memref<802816x64xf32>) kernel
// KERNEL-DAG: %[[Q4:.*]] = arith.constant 4 : index
// KERNEL-DAG: %[[Q8:.*]] = arith.constant 8 : index
// KERNEL-DAG: %[[Q16:.*]] = arith.constant 16 : index
// KERNEL: %[[B:.*]] = gpu.block_id x
// KERNEL-NEXT: %[[T:.*]] = gpu.thread_id x
// KERNEL-NEXT: %[[G:.*]] = arith.divui %[[T]], %[[Q16]] : index
// KERNEL-NEXT: %[[L:.*]] = arith.remui %[[T]], %[[Q16]] : index
// KERNEL-NEXT: %[[B8:.*]] = arith.muli %[[B]], %[[Q8]] : index
// KERNEL-NEXT: %[[QP:.*]] = arith.addi %[[B8]], %[[G]] : index
// KERNEL-NEXT: %[[QC:.*]] = arith.muli %[[L]], %[[Q4]] : index
// KERNEL-NEXT: vector.load %[[QX]][%[[QP]], %[[QC]]] {alignment = 16 : i64} : memref<802816x64xf32>, vector<4xf32>
// KERNEL-NOT: vector.load %[[QX]]
// KERNEL: vector.store %{{.*}}, %[[QY]][%[[QP]], %[[QC]]] {alignment = 16 : i64} : memref<802816x64xf32>, vector<4xf32>
// KERNEL-NEXT: gpu.return

// SLICES-LABEL: func.func @bn_nhwc(
// SLICES-SAME: %[[X:[^:]*]]: memref<64x56x56x256xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<64x56x56x256xf32> {kfuse.name = "y"})
// SLICES-DAG: %[[C512:.*]] = arith.constant 512 : index
// SLICES-DAG: %[[C256:.*]] = arith.constant 256 : index
// SLICES-DAG: %[[C1:.*]] = arith.constant 1 : index
// SLICES: %[[XC:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]]
// SLICES: %[[YC:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1, 2], [3]]
// SLICES: %[[XS:.*]] = memref.expand_shape %[[XC]] {{\[\[}}0, 1], [2]] output_shape [512, 392, 256]
// SLICES: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0_partial blocks in (%[[C512]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[XS]] : memref<512x392x256xf32>
// SLICES-NEXT: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0 blocks in
// SLICES-SAME: args({{.*}}, %[[MEAN:[^ ]*]] : memref<256xf32>, %[[VAR:[^ ]*]] : memref<256xf32>)
// SLICES-NEXT: %[[YS:.*]] = memref.expand_shape %[[YC]] {{\[\[}}0, 1], [2]] output_shape [512, 392, 256]
// SLICES-NEXT: gpu.launch_func @kfuse_kernels::@bn_nhwc_g0_store blocks in (%[[C512]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[MEAN]] : memref<256xf32>, %[[VAR]] : memref<256xf32>, %[[XS]] : memref<512x392x256xf32>, %[[YS]] : memref<512x392x256xf32>)
// SLICES-NEXT: return

// The storing kernel over the slices: thread i < 512 * 256 on channel i
// mod 256 of slice i div 256, its channel's mean and variance loaded once,
// then 16 points a trip (the last masked: 392 = 24 * 16 + 8; 28 trips of
// 14 would divide it but take 3 more round trips), all loaded before the
// first store; no shuffle, no workgroup memory.
// SLICES: gpu.func @bn_nhwc_g0_store(%[[KM:[^:]*]]: memref<256xf32>, %[[KV:[^:]*]]: memref<256xf32>, %[[KX:[^:]*]]: memref<512x392x256xf32>, %[[KY:[^:]*]]: memref<512x392x256xf32>) kernel
// SLICES-DAG: %[[K256:.*]] = arith.constant 256 : index
// SLICES-DAG: %[[K392:.*]] = arith.constant 392 : index
// SLICES-DAG: %[[K16:.*]] = arith.constant 16 : index
// SLICES: %[[CH:.*]] = arith.remui %{{.*}}, %[[K256]] : index
// SLICES-NEXT: %[[SL:.*]] = arith.divui %{{.*}}, %[[K256]] : index
// SLICES-NEXT: memref.load %[[KM]][%[[CH]]] : memref<256xf32>
// SLICES-NEXT: memref.load %[[KV]][%[[CH]]] : memref<256xf32>
// SLICES-NEXT: scf.for %{{.*}} = %{{.*}} to %[[K392]] step %[[K16]] {
// SLICES-COUNT-16: memref.load %[[KX]][%[[SL]], %{{.*}}, %[[CH]]] : memref<512x392x256xf32>
// SLICES-NOT: memref.store
// SLICES-NOT: memref.load %[[KX]]
// SLICES: memref.store %{{.*}}, %[[KY]][%[[SL]], %{{.*}}, %[[CH]]] : memref<512x392x256xf32>
// SLICES-NOT: memref.load %[[KX]]
// SLICES-NOT: gpu.shuffle
// SLICES: gpu.return

// PTX: .entry bn_nhwc_g0_store(
// PTX-NOT: shfl
// PTX-NOT: bar.sync
// PTX: ld.global.v4
// PTX: st.global.v4
// PTX: ret;

  func.func @bn_nhwc(%arg0: tensor<64x56x56x256xf32> {kfuse.name = "x"}) -> (tensor<64x56x56x256xf32> {kfuse.name = "y"}) {
    %c2 = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<256xf32>
    %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<64x56x56x256xf32>) outs(%i2 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e3 = tensor.empty() : tensor<256xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<256xf32>) outs(%e3 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 200704.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e4 = tensor.empty() : tensor<64x56x56x256xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %t3 : tensor<64x56x56x256xf32>, tensor<256xf32>) outs(%e4 : tensor<64x56x56x256xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.subf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x56x56x256xf32>
    %e5 = tensor.empty() : tensor<64x56x56x256xf32>
    %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4 : tensor<64x56x56x256xf32>) outs(%e5 : tensor<64x56x56x256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.mulf %in0, %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x56x56x256xf32>
    %c6 = arith.constant 0.0 : f32
    %e6 = tensor.empty() : tensor<256xf32>
    %i6 = linalg.fill ins(%c6 : f32) outs(%e6 : tensor<256xf32>) -> tensor<256xf32>
    %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%t5 : tensor<64x56x56x256xf32>) outs(%i6 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e7 = tensor.empty() : tensor<256xf32>
    %t7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6 : tensor<256xf32>) outs(%e7 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 200704.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e8 = tensor.empty() : tensor<256xf32>
    %t8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t7 : tensor<256xf32>) outs(%e8 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 9.999999747378752e-06 : f32
      %v1 = arith.addf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e9 = tensor.empty() : tensor<256xf32>
    %t9 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t8 : tensor<256xf32>) outs(%e9 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.rsqrt %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e10 = tensor.empty() : tensor<64x56x56x256xf32>
    %t10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4, %t9 : tensor<64x56x56x256xf32>, tensor<256xf32>) outs(%e10 : tensor<64x56x56x256xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.mulf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x56x56x256xf32>
    return %t10 : tensor<64x56x56x256xf32>
  }
  func.func @bn_nhwc_c64(%arg0: tensor<64x112x112x64xf32> {kfuse.name = "x"}) -> (tensor<64x112x112x64xf32> {kfuse.name = "y"}) {
    %c2 = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<64xf32>
    %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<64x112x112x64xf32>) outs(%i2 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<64xf32>
    %e3 = tensor.empty() : tensor<64xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<64xf32>) outs(%e3 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 802816.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<64xf32>
    %e4 = tensor.empty() : tensor<64x112x112x64xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %t3 : tensor<64x112x112x64xf32>, tensor<64xf32>) outs(%e4 : tensor<64x112x112x64xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.subf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x112x112x64xf32>
    %e5 = tensor.empty() : tensor<64x112x112x64xf32>
    %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4 : tensor<64x112x112x64xf32>) outs(%e5 : tensor<64x112x112x64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.mulf %in0, %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x112x112x64xf32>
    %c6 = arith.constant 0.0 : f32
    %e6 = tensor.empty() : tensor<64xf32>
    %i6 = linalg.fill ins(%c6 : f32) outs(%e6 : tensor<64xf32>) -> tensor<64xf32>
    %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%t5 : tensor<64x112x112x64xf32>) outs(%i6 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<64xf32>
    %e7 = tensor.empty() : tensor<64xf32>
    %t7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6 : tensor<64xf32>) outs(%e7 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 802816.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<64xf32>
    %e8 = tensor.empty() : tensor<64xf32>
    %t8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t7 : tensor<64xf32>) outs(%e8 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 9.999999747378752e-06 : f32
      %v1 = arith.addf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<64xf32>
    %e9 = tensor.empty() : tensor<64xf32>
    %t9 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t8 : tensor<64xf32>) outs(%e9 : tensor<64xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.rsqrt %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<64xf32>
    %e10 = tensor.empty() : tensor<64x112x112x64xf32>
    %t10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4, %t9 : tensor<64x112x112x64xf32>, tensor<64xf32>) outs(%e10 : tensor<64x112x112x64xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.mulf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x112x112x64xf32>
    return %t10 : tensor<64x112x112x64xf32>
  }
  func.func @bn_nhwc_small(%arg0: tensor<8x8x8x256xf32> {kfuse.name = "x"}) -> (tensor<8x8x8x256xf32> {kfuse.name = "y"}) {
    %c2 = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<256xf32>
    %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<8x8x8x256xf32>) outs(%i2 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e3 = tensor.empty() : tensor<256xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<256xf32>) outs(%e3 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 512.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e4 = tensor.empty() : tensor<8x8x8x256xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %t3 : tensor<8x8x8x256xf32>, tensor<256xf32>) outs(%e4 : tensor<8x8x8x256xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.subf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<8x8x8x256xf32>
    %e5 = tensor.empty() : tensor<8x8x8x256xf32>
    %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4 : tensor<8x8x8x256xf32>) outs(%e5 : tensor<8x8x8x256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.mulf %in0, %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<8x8x8x256xf32>
    %c6 = arith.constant 0.0 : f32
    %e6 = tensor.empty() : tensor<256xf32>
    %i6 = linalg.fill ins(%c6 : f32) outs(%e6 : tensor<256xf32>) -> tensor<256xf32>
    %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%t5 : tensor<8x8x8x256xf32>) outs(%i6 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e7 = tensor.empty() : tensor<256xf32>
    %t7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6 : tensor<256xf32>) outs(%e7 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 512.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e8 = tensor.empty() : tensor<256xf32>
    %t8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t7 : tensor<256xf32>) outs(%e8 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 9.999999747378752e-06 : f32
      %v1 = arith.addf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<256xf32>
    %e9 = tensor.empty() : tensor<256xf32>
    %t9 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t8 : tensor<256xf32>) outs(%e9 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.rsqrt %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e10 = tensor.empty() : tensor<8x8x8x256xf32>
    %t10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t4, %t9 : tensor<8x8x8x256xf32>, tensor<256xf32>) outs(%e10 : tensor<8x8x8x256xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.mulf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<8x8x8x256xf32>
    return %t10 : tensor<8x8x8x256xf32>
  }
