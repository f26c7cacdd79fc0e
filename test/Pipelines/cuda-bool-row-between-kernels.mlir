// A boolean row value a group passes between its kernels: "is every
// element of the row masked?" (an andi reduction) beside a reduction whose
// step is not associative (acc / x, an ordered kernel), so that the group
// runs as a row kernel and ordered kernels that read the booleans back.
// The buffer between them holds bytes (fusion-bool-bytes in
// fusion-codegen-cuda: i8, extui before the store, trunci after the load);
// as memref<4xi1> it stopped the target's LLVM lowering (now an error
// there, see cuda-target-bit-buffers.mlir).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o /dev/null

// CHECK-LABEL: func.func @masked_ordered
// CHECK: %[[ALL:.*]] = memref.alloc() {{.*}} : memref<4xi8>
// (the row kernel runs packed with the ordered kernel that does not read
// its booleans: fusion-pack-launches)
// CHECK: gpu.launch_func @kfuse_kernels::@masked_ordered_g0_rows0 {{.*}} args({{.*}}%[[ALL]] : memref<4xi8>
// CHECK: gpu.launch_func @kfuse_kernels::@masked_ordered_g0_ordered2 {{.*}} args(%[[ALL]] : memref<4xi8>,
// CHECK-NOT: xi1>
// CHECK: gpu.func @masked_ordered_g0_rows0
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: memref.store %{{.*}} : memref<4xi8>
// CHECK: gpu.func @masked_ordered_g0_ordered2
// CHECK: memref.load %{{.*}} : memref<4xi8>
// CHECK-NEXT: arith.trunci %{{.*}} : i8 to i1
func.func @masked_ordered(%x: tensor<4x16xf32>, %m: tensor<4x16xi1>) -> tensor<4xf32> {
  %true = arith.constant true
  %e0 = tensor.empty() : tensor<4xi1>
  %i0 = linalg.fill ins(%true : i1) outs(%e0 : tensor<4xi1>) -> tensor<4xi1>
  %all = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<4x16xi1>) outs(%i0 : tensor<4xi1>) {
  ^bb0(%a: i1, %acc: i1):
    %r = arith.andi %a, %acc : i1
    linalg.yield %r : i1
  } -> tensor<4xi1>
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %i1 = linalg.fill ins(%one : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%i1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.divf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%all, %q : tensor<4xi1>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: i1, %b: f32, %o: f32):
    %r = arith.select %a, %zero, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
