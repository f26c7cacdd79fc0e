// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-bufferization-boundary))' | FileCheck %s

// Tensor arguments are the caller's inputs: never written in place.
// A computed value returned twice is copied for the repeat (each result is
// a buffer of its own); a returned argument is left to bufferization, which
// copies it.
// CHECK-LABEL: func.func @boundary
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32> {bufferization.writable = false}, %[[S:[^:]*]]: f32)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<8xf32>
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: return %[[Y]], %[[X]], %[[C]], %[[X]]
#id = affine_map<(d0) -> (d0)>
func.func @boundary(%x: tensor<8xf32>, %s: f32) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %s : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %y, %x, %y, %x : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// An argument only read as a structured op's input is not marked (nothing
// writes into it in place); non-tensor arguments get no mark. One
// tensor.empty per use: the first use in program order keeps the original,
// the others get a copy each (CSE had left one for all three).
// CHECK-LABEL: func.func @empties
// CHECK-SAME: (%{{[^:]*}}: tensor<4xf32> {kfuse.name = "x"}, %{{[^:]*}}: f32 {kfuse.name = "s"})
// CHECK: %[[C1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[C2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]], %[[C1]] :
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[C2]] :
#id1 = affine_map<(d0) -> (d0)>
func.func @empties(%x: tensor<4xf32> {kfuse.name = "x"}, %s: f32 {kfuse.name = "s"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y:2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %v = arith.mulf %a, %s : f32
    %w = arith.addf %a, %s : f32
    linalg.yield %v, %w : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %z = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%y#0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %y#1, %z, %y#0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Marked: an argument given as `outs` (written in place unless marked), one
// reshaped (its readers are not checked), one returned; an argument's own
// attributes stay beside the mark. Not marked: one only read as inputs.
// CHECK-LABEL: func.func @marks
// CHECK-SAME: (%{{[^:]*}}: tensor<4xf32> {kfuse.name = "read"},
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {bufferization.writable = false, kfuse.name = "acc"},
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {bufferization.writable = false},
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {bufferization.writable = false})
#id2 = affine_map<(d0) -> (d0)>
func.func @marks(%read: tensor<4xf32> {kfuse.name = "read"}, %acc: tensor<4xf32> {kfuse.name = "acc"},
                 %shaped: tensor<4xf32>, %ret: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel"]}
      ins(%read, %read : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r = tensor.expand_shape %shaped [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %y, %r, %ret : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}
