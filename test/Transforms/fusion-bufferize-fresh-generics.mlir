// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-bufferize-fresh-generics))' | FileCheck %s
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-bufferize-fresh-generics),one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map})' | FileCheck %s --check-prefix=BUF

// A generic writing two fresh tensors runs on buffers: an allocation where
// each empty tensor was, its inputs read-only, its attributes kept, its
// results the allocations as tensors (restrict, writable). A generic
// reading its result (through a reshape) is bufferized too. The arguments
// only those generics read are buffers now (their attributes kept); one
// also returned stays a tensor, read through a read-only to_buffer.
// One-shot bufferization then leaves the allocations returned.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: (%[[X:[^:]*]]: memref<8xf32> {kfuse.name = "x"}, %[[B:[^:]*]]: memref<8xf32>, %[[K:[^:]*]]: tensor<8xf32>)
// CHECK-SAME: -> (tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>)
// CHECK: %[[A0:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: %[[A1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only : tensor<8xf32> to memref<8xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]], %[[KB]] : memref<8xf32>, memref<8xf32>, memref<8xf32>) outs(%[[A1]], %[[A0]] : memref<8xf32>, memref<8xf32>)
// CHECK-SAME: fusion.kernel = "g0"
// CHECK: arith.addf
// CHECK: %[[T1:.*]] = bufferization.to_tensor %[[A1]] restrict writable : memref<8xf32> to tensor<8xf32>
// CHECK: %[[T0:.*]] = bufferization.to_tensor %[[A0]] restrict writable : memref<8xf32> to tensor<8xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[T1]]
// CHECK: %[[A2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4xf32>
// CHECK: %[[RB:.*]] = bufferization.to_buffer %[[R]] read_only : tensor<2x4xf32> to memref<2x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[RB]] : memref<2x4xf32>) outs(%[[A2]] : memref<2x4xf32>)
// CHECK: %[[T2:.*]] = bufferization.to_tensor %[[A2]] restrict writable
// CHECK-NOT: tensor.empty
// CHECK: return %[[T0]], %[[T2]], %[[K]]
// BUF-LABEL: func.func @fresh
// BUF-SAME: (%[[X:[^:]*]]: memref<8xf32> {kfuse.name = "x"}, %[[B:[^:]*]]: memref<8xf32>, %[[K:[^:]*]]: memref<8xf32>) -> (memref<8xf32>, memref<2x4xf32>, memref<8xf32>)
// BUF: %[[A0:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// BUF: %[[A1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// BUF: linalg.generic
// BUF-SAME: ins(%[[X]], %[[B]], %[[K]] : memref<8xf32>, memref<8xf32>, memref<8xf32>) outs(%[[A1]], %[[A0]] : memref<8xf32>, memref<8xf32>)
// BUF: %[[R:.*]] = memref.expand_shape %[[A1]]
// BUF: %[[A2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4xf32>
// BUF: linalg.generic
// BUF-SAME: ins(%[[R]] : memref<2x4xf32>) outs(%[[A2]] : memref<2x4xf32>)
// BUF-NOT: bufferization.
// BUF: return %[[A0]], %[[A2]], %[[K]]
#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @fresh(%x: tensor<8xf32> {kfuse.name = "x"}, %b: tensor<8xf32>, %k: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %y:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b, %k : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e1, %e0 : tensor<8xf32>, tensor<8xf32>)
      attrs = {fusion.kernel = "g0"} {
  ^bb0(%a: f32, %c: f32, %kk: f32, %o: f32, %p: f32):
    %v = arith.addf %a, %kk : f32
    %w = arith.mulf %a, %c : f32
    linalg.yield %v, %w : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  %r = tensor.expand_shape %y#0 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %y#1, %z, %k : tensor<8xf32>, tensor<2x4xf32>, tensor<8xf32>
}

// -----

// Left to one-shot bufferization: a generic writing into another's result
// (a reduction's filled accumulator: its buffer is the fill's, in place);
// one reading a slice (its buffer is strided); one whose empty tensor is
// shared (fusion-bufferization-boundary gives each use its own first).
// The fill itself writes a fresh tensor and runs on a buffer.
// CHECK-LABEL: func.func @left
// CHECK-SAME: (%{{[^:]*}}: tensor<4x8xf32>, %{{[^:]*}}: tensor<8xf32>)
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[F]] : memref<4xf32>)
// CHECK: %[[FT:.*]] = bufferization.to_tensor %[[F]] restrict writable
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<4x8xf32>) outs(%[[FT]] : tensor<4xf32>)
// CHECK: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<4xf32>)
// BUF-LABEL: func.func @left
// BUF: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// BUF: linalg.generic
// BUF-SAME: outs(%[[F]] : memref<4xf32>)
// BUF: linalg.generic
// BUF-SAME: outs(%[[F]] : memref<4xf32>)
// BUF: memref.subview
// BUF-NOT: bufferization.
// BUF: return %[[F]],
#r = affine_map<(d0, d1) -> (d0, d1)>
#rr = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
func.func @left(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  } -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#r, #rr], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %slice = tensor.extract_slice %s[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %shared = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%slice : tensor<4xf32>) outs(%shared : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%sum : tensor<4xf32>) outs(%shared : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %sum, %n, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
