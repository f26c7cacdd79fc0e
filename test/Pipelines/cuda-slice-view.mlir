// REQUIRES: ptxas
//
// A slice of a program argument that only linalg ops read stays a slice
// (fusion-fold-copies) and is bufferized to a view of the argument's
// buffer: the kernels take the argument and address the view through its
// strides and offset. A softmax over x[:, 1:1026] of x[4, 1027] and
// x[:, 2:] - x[:, 1:-1] are one row kernel (as gathers: a copy of the
// slice, then two row kernels); its rows of 1025 start at 1, 1028, 2055,
// ...: no vector boundary, so it moves single floats (its stores' rows of
// 1025 start elsewhere in their vectors than the view's: not shifted).
// Returned, a slice is copied (a gather, no view).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: func.func @sliced(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x1027xf32>
// CHECK-DAG: %[[V:.*]] = memref.subview %[[X]][0, 1] [4, 1025] [1, 1] : memref<4x1027xf32> to memref<4x1025xf32, strided<[1027, 1], offset: 1>>
// CHECK-DAG: %[[W:.*]] = memref.subview %[[X]][0, 2] [4, 1025] [1, 1] : memref<4x1027xf32> to memref<4x1025xf32, strided<[1027, 1], offset: 2>>
// CHECK: gpu.launch_func @kfuse_kernels::@sliced_g0 {{.*}} args(%[[V]] : memref<4x1025xf32, strided<[1027, 1], offset: 1>>, %{{.*}} : memref<4x1025xf32>, %[[W]] : memref<4x1025xf32, strided<[1027, 1], offset: 2>>
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK: gpu.func @sliced_g0(
// CHECK-NOT: vector.load
// CHECK: memref.load %{{.*}} : memref<4x1025xf32, strided<[1027, 1], offset: 1>>
// CHECK: gpu.return
//
// CHECK-LABEL: func.func @returned(
// CHECK-NOT: memref.subview
// CHECK: gpu.launch_func @kfuse_kernels::@returned_g0 {{.*}} args(%{{.*}} : memref<4x1025xf32>, %{{.*}} : memref<4x1027xf32>)
// CHECK-NEXT: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sliced(%x: tensor<4x1027xf32>) -> (tensor<4x1025xf32>, tensor<4x1025xf32>) {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %w = tensor.extract_slice %x[0, 2] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%v : tensor<4x1025xf32>) outs(%fm : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x1025xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %m : tensor<4x1025xf32>, tensor<4xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %q = math.exp %d : f32
    linalg.yield %q : f32
  } -> tensor<4x1025xf32>
  %fs = linalg.fill ins(%z : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x1025xf32>) outs(%fs : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x1025xf32>, tensor<4xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x1025xf32>
  %dd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %w : tensor<4x1025xf32>, tensor<4x1025xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %b, %a : f32
    linalg.yield %d : f32
  } -> tensor<4x1025xf32>
  return %y, %dd : tensor<4x1025xf32>, tensor<4x1025xf32>
}

func.func @returned(%x: tensor<4x1027xf32>) -> tensor<4x1025xf32> {
  %v = tensor.extract_slice %x[0, 1] [4, 1025] [1, 1] : tensor<4x1027xf32> to tensor<4x1025xf32>
  return %v : tensor<4x1025xf32>
}
