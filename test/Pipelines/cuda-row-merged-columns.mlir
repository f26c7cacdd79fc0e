// REQUIRES: ptxas
//
// Row kernels load and store chunks of consecutive columns inside the
// innermost column loop, so its extent bounds the vector width. Where the
// trailing column loops are read by every operand as consecutive dimensions
// of an identity-layout buffer, in order, they are one loop over collapsed
// views (memref.collapse_shape, no copy) when that loop takes wider chunks:
// group norm over 6 x 6 images with per-(group, channel) weights reads its
// rows (k, h, w) 128 bits at a time (36 columns) instead of 64 (6 columns).
// An input that reads a leading part of the run (@leading_part_weight: w
// reads (k, h) but not w) does not stop the merge: it is read lane by lane
// at the merged index divided back (72 columns: x still 128 bits at a
// time). Not merged: a run an operand reads in another order
// (@transposed_weight) and a row whose innermost loop already takes 4
// floats (@wide_enough).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: func.func @group_norm_core(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x4x2x6x6xf32>
// CHECK: memref.collapse_shape %[[X]] {{\[\[}}0], [1], [2], [3, 4]] : memref<2x4x2x6x6xf32> into memref<2x4x2x36xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@group_norm_core_g0
// CHECK-NEXT: return

// CHECK-LABEL: func.func @leading_part_weight(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x4x2x6x6xf32>, %[[W:[^:]*]]: memref<2x6xf32>
// CHECK: %[[XV:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0], [1], [2, 3, 4]] : memref<2x4x2x6x6xf32> into memref<2x4x72xf32>
// CHECK-NOT: memref.collapse_shape %[[W]]
// CHECK: gpu.launch_func @kfuse_kernels::@leading_part_weight_g0 {{.*}}args(%[[XV]] : memref<2x4x72xf32>, %[[W]] : memref<2x6xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @transposed_weight(
// CHECK-NOT: memref.collapse_shape
// CHECK: gpu.launch_func @kfuse_kernels::@transposed_weight_g0
// CHECK-NEXT: return

// CHECK-LABEL: func.func @wide_enough(
// CHECK-NOT: memref.collapse_shape
// CHECK: gpu.launch_func @kfuse_kernels::@wide_enough_g0
// CHECK-NEXT: return

// PTX-LABEL: .entry group_norm_core_g0(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry leading_part_weight_g0(
// PTX: ld.global.v4.b32
// PTX-LABEL: .entry transposed_weight_g0(
// PTX-NOT: ld.global.v4
// PTX: ld.global.v2.b32
// PTX-NOT: ld.global.v4
// PTX-LABEL: .entry wide_enough_g0(
// PTX: ld.global.v4.b32

#x5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#r5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#gk5 = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
#kh5 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
#hw5t = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>

func.func @group_norm_core(%x: tensor<2x4x2x6x6xf32>, %w: tensor<4x2xf32>) -> tensor<2x4x2x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 72.0 : f32
  %es = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x5, #r5], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x2x6x6xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4x2x6x6xf32>
  %y = linalg.generic {indexing_maps = [#x5, #r5, #gk5, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<2x4x2x6x6xf32>, tensor<2x4xf32>, tensor<4x2xf32>) outs(%e : tensor<2x4x2x6x6xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %r = arith.mulf %d, %ww : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x6x6xf32>
  return %y : tensor<2x4x2x6x6xf32>
}

func.func @leading_part_weight(%x: tensor<2x4x2x6x6xf32>, %w: tensor<2x6xf32>) -> tensor<2x4x2x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x5, #r5], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x2x6x6xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4x2x6x6xf32>
  %y = linalg.generic {indexing_maps = [#x5, #r5, #kh5, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<2x4x2x6x6xf32>, tensor<2x4xf32>, tensor<2x6xf32>) outs(%e : tensor<2x4x2x6x6xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %d = arith.subf %a, %s : f32
    %r = arith.mulf %d, %ww : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x6x6xf32>
  return %y : tensor<2x4x2x6x6xf32>
}

func.func @transposed_weight(%x: tensor<2x4x2x6x6xf32>, %w: tensor<6x6xf32>) -> tensor<2x4x2x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x5, #r5], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x2x6x6xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4x2x6x6xf32>
  %y = linalg.generic {indexing_maps = [#x5, #r5, #hw5t, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<2x4x2x6x6xf32>, tensor<2x4xf32>, tensor<6x6xf32>) outs(%e : tensor<2x4x2x6x6xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %d = arith.subf %a, %s : f32
    %r = arith.mulf %d, %ww : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x6x6xf32>
  return %y : tensor<2x4x2x6x6xf32>
}

func.func @wide_enough(%x: tensor<2x4x2x6x8xf32>, %w: tensor<4x2xf32>) -> tensor<2x4x2x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x5, #r5], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x2x6x8xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4x2x6x8xf32>
  %y = linalg.generic {indexing_maps = [#x5, #r5, #gk5, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<2x4x2x6x8xf32>, tensor<2x4xf32>, tensor<4x2xf32>) outs(%e : tensor<2x4x2x6x8xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %d = arith.subf %a, %s : f32
    %r = arith.mulf %d, %ww : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x6x8xf32>
  return %y : tensor<2x4x2x6x8xf32>
}
