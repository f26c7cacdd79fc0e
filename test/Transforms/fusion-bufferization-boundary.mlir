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
