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
// Returned, a slice is copied (a gather, no view). A loss over
// x[:, :-1].reshape(-1, V) (a causal language model's: a reshape of a view,
// itself no view) runs over the view's own (batch, position) rows: one row
// kernel over the 3-D view, the label's logit gathered from x (the label
// checked: the status buffer of its guard is the last argument; the gather,
// loaded before the row's loop, is the kernel's first read of x), the
// losses written through a view of the output.
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
//
// CHECK-LABEL: func.func @shifted_rows_loss(
// CHECK-SAME: %[[LG:[^:]*]]: memref<2x9x1003xf32>, %[[LB:[^:]*]]: memref<2x9xi64>, %[[OUT:[^:]*]]: memref<16xf32>
// CHECK-DAG: %[[XV:.*]] = memref.subview %[[LG]][0, 0, 0] [2, 8, 1003] [1, 1, 1] : memref<2x9x1003xf32> to memref<2x8x1003xf32, strided<[9027, 1003, 1]>>
// CHECK-DAG: %[[LV:.*]] = memref.subview %[[LB]][0, 1] [2, 8] [1, 1] : memref<2x9xi64> to memref<2x8xi64, strided<[9, 1], offset: 1>>
// CHECK-DAG: %[[OV:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[ST:.*]] = memref.get_global @kfuse_status : memref<2xi64>
// CHECK: gpu.launch_func @kfuse_kernels::@shifted_rows_loss_g0 blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[LV]] : {{.*}}, %[[LG]] : {{.*}}, %[[XV]] : {{.*}}, %[[OV]] : memref<2x8xf32>, %[[ST]] : memref<2xi64>)
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

#vec = affine_map<(d0) -> (d0)>
func.func @shifted_rows_loss(%lg: tensor<2x9x1003xf32>, %lb: tensor<2x9xi64>) -> tensor<16xf32> {
  %xs = tensor.extract_slice %lg[0, 0, 0] [2, 8, 1003] [1, 1, 1] : tensor<2x9x1003xf32> to tensor<2x8x1003xf32>
  %x = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x8x1003xf32> into tensor<16x1003xf32>
  %ls = tensor.extract_slice %lb[0, 1] [2, 8] [1, 1] : tensor<2x9xi64> to tensor<2x8xi64>
  %labels = tensor.collapse_shape %ls [[0, 1]] : tensor<2x8xi64> into tensor<16xi64>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x1003xf32>) outs(%m0 : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<16x1003xf32>, tensor<16xf32>) outs(%s0 : tensor<16xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %picked = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%labels : tensor<16xi64>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %lab : i64 to index
    %v = tensor.extract %x[%i, %j] : tensor<16x1003xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %loss = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%s, %m, %picked : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%sum: f32, %mx: f32, %pk: f32, %o: f32):
    %l = math.log %sum : f32
    %a = arith.addf %l, %mx : f32
    %r = arith.subf %a, %pk : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %loss : tensor<16xf32>
}
