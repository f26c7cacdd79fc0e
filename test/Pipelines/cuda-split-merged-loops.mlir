// REQUIRES: ptxas
//
// A reduction over several adjacent loops that runs as slices (too few rows
// to fill the GPU): when every operand reads the run of reduction loops as
// consecutive dimensions of its buffer, in order, the run is one loop over a
// collapsed view (memref.collapse_shape, no copy), which the split then
// views as (slices, length). A full sum of a matrix and per-plane sums of
// [4, 512, 512] (one reduction loop was required) run on 256 blocks instead
// of one or four; per-channel sums of an NHWC tensor (a thread per slice
// and channel) get 256 slices of (n, h, w) instead of 64 of n (then a
// finishing kernel in tiles of 8 channels: 32 blocks). linalg.index
// of a merged loop is recovered from the merged index (divui/remui). A run
// read in another order (@transposed) or partly (@row_weight: w reads only
// h) is not merged, and such a group is not split. (The splits along the
// columns finish in the partials kernel's last block of each row, see
// cuda-split-last-block.mlir: one launch.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=KERN --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: func.func @total(
// CHECK-SAME: %[[X:[^:]*]]: memref<1024x1024xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<1024x1024xf32> into memref<1048576xf32>
// CHECK: %[[S:.*]] = memref.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [256, 4096]
// CHECK: gpu.launch_func @kfuse_kernels::@total_g0 blocks in (%c256, %c1, %c1) {{.*}}args(%[[S]] : memref<256x4096xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @planes(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x512x512xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0], [1, 2]] : memref<4x512x512xf32> into memref<4x262144xf32>
// CHECK: %[[S:.*]] = memref.expand_shape %[[C]] {{\[\[}}0], [1, 2]] output_shape [4, 64, 4096]
// CHECK: gpu.launch_func @kfuse_kernels::@planes_g0 blocks in (%c256, %c1, %c1) {{.*}}args(%[[S]] : memref<4x64x4096xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @channels(
// CHECK-SAME: %[[X:[^:]*]]: memref<64x8x8x256xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]] : memref<64x8x8x256xf32> into memref<4096x256xf32>
// CHECK: %[[S:.*]] = memref.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [256, 16, 256]
// CHECK: gpu.launch_func @kfuse_kernels::@channels_g0_partial blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[S]] : memref<256x16x256xf32>
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@channels_g0 blocks in (%c32, %c1, %c1) threads in (%c512, %c1, %c1)
// CHECK-NEXT: return

// CHECK-LABEL: func.func @weighted(
// CHECK: gpu.launch_func @kfuse_kernels::@weighted_g0 blocks in (%c256, %c1, %c1) {{.*}}args(%{{.*}} : memref<4x64x4096xf32>

// CHECK-LABEL: func.func @transposed(
// CHECK-NOT: collapse_shape
// CHECK: gpu.launch_func @kfuse_kernels::@transposed_g0 blocks in (%c4, %c1, %c1)
// CHECK-NEXT: return

// CHECK-LABEL: func.func @row_weight(
// CHECK-NOT: collapse_shape
// CHECK: gpu.launch_func @kfuse_kernels::@row_weight_g0
// CHECK-NEXT: return

// The weight (i - j) from the merged index m = slice * 4096 + column:
// i = m / 512, j = m % 512.
// KERN-LABEL: gpu.func @weighted_g0(
// KERN-DAG: %[[LEN:.*]] = arith.constant dense<4096> : vector<4xindex>
// KERN-DAG: %[[W:.*]] = arith.constant dense<512> : vector<4xindex>
// KERN: %[[BASE:.*]] = arith.muli %{{.*}}, %[[LEN]] : vector<4xindex>
// KERN: %[[M:.*]] = arith.addi %[[BASE]], %{{.*}} : vector<4xindex>
// KERN: %[[I:.*]] = arith.divui %[[M]], %[[W]] : vector<4xindex>
// KERN: %[[J:.*]] = arith.remui %[[M]], %[[W]] : vector<4xindex>
// KERN: arith.subi %[[I]], %[[J]] : vector<4xindex>

func.func @total(%x: tensor<1024x1024xf32> {kfuse.name = "x"}) -> (tensor<f32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<1024x1024xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

func.func @planes(%x: tensor<4x512x512xf32> {kfuse.name = "x"}) -> (tensor<4xf32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x512x512xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @channels(%x: tensor<64x8x8x256xf32> {kfuse.name = "x"}) -> (tensor<256xf32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<64x8x8x256xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

func.func @weighted(%x: tensor<4x512x512xf32> {kfuse.name = "x"}) -> (tensor<4xf32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x512x512xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %w = arith.subi %i, %j : index
    %wi = arith.index_cast %w : index to i32
    %wf = arith.sitofp %wi : i32 to f32
    %m = arith.mulf %a, %wf : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @transposed(%x: tensor<4x512x512xf32> {kfuse.name = "x"}) -> (tensor<4xf32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x512x512xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @row_weight(%x: tensor<4x512x512xf32> {kfuse.name = "x"}, %w: tensor<512xf32> {kfuse.name = "w"}) -> (tensor<4xf32> {kfuse.name = "y"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %w : tensor<4x512x512xf32>, tensor<512xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
