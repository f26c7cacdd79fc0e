// The variance of batch normalization over an NHWC tensor, sum((x -
// mean)^2) / N over (n, h, w): one group (the centered values are placed in
// the reductions' (c | n, h, w) order), split into slices because 256
// channels do not fill the GPU (n, h and w merged into one loop of 512
// points: 32 slices of 16). With fast numerics the variance does
// not wait for the mean: the partials kernel folds each slice's sum of x
// with the sums of (x - slice mean)^2 and x - slice mean in one pass (one
// loop carrying the plain sum, which the mean and the slice mean share,
// and a running mean and M2 for each of the other two; three partials a
// slice), and one finishing kernel combines the slices; x is read once. Strict numerics keep two
// waves, x read twice: each wave's partials kernel, its last block to
// count for a tile of channels running the wave's finish (see
// cuda-column-reduction.mlir), two kernels (four with row-last-block=0,
// which FAST and LOOP keep to show the one wave's two kernels).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0})' \
// RUN:   | FileCheck %s --check-prefix=FAST
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=2 row-last-block=0})' \
// RUN:   | FileCheck %s --check-prefix=LOOP
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{numerics=strict})' \
// RUN:   | FileCheck %s --check-prefix=STRICT

// FAST-LABEL: func.func @bn_var_nhwc
// FAST: gpu.launch_func @kfuse_kernels::@bn_var_nhwc_g0_partial blocks in
// FAST-SAME: args(%[[X:.*]] : memref<32x16x256xf32>, %{{[^:]*}} : memref<32x256xf32>, %{{[^:]*}} : memref<32x256xf32>, %{{[^:]*}} : memref<32x256xf32>)
// FAST-NEXT: gpu.launch_func @kfuse_kernels::@bn_var_nhwc_g0 blocks in
// FAST-NOT: memref<32x16x256xf32>
// FAST-NOT: gpu.launch_func
// FAST: gpu.module @kfuse_kernels

// (sized for 2 SMs: 8 slices of 64 points, whose loop is not unrolled away
// as the default 32 slices of 16 points are)
// LOOP: gpu.func @bn_var_nhwc_g0_partial
// LOOP: scf.for {{.*}} -> (f32, f32, f32, f32, f32)
// LOOP-NOT: scf.for
// LOOP: gpu.return

// STRICT-LABEL: func.func @bn_var_nhwc
// STRICT: memref.alloc() {kfuse.counter} : memref<8xi32>
// STRICT-NEXT: gpu.launch_func @kfuse_kernels::@bn_var_nhwc_g0_combine1 blocks in (%c256, %c1, %c1)
// STRICT-SAME: args(%{{.*}} : memref<32x16x256xf32>
// STRICT: memref.alloc() {kfuse.counter} : memref<8xi32>
// STRICT-NEXT: gpu.launch_func @kfuse_kernels::@bn_var_nhwc_g0 blocks in (%c256, %c1, %c1)
// STRICT-SAME: memref<32x16x256xf32>
// STRICT-NOT: gpu.launch_func

module {
  func.func @bn_var_nhwc(%arg0: tensor<8x8x8x256xf32> {kfuse.name = "x"}) -> (tensor<256xf32> {kfuse.name = "y"}) {
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
    return %t7 : tensor<256xf32>
  }
}
