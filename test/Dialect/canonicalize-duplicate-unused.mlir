// RUN: fuse-opt %s -canonicalize | FileCheck %s

// Regression: an input that appears twice, whose first block argument is
// unused while the second one is used. Merging the duplicate into the first
// argument makes that argument used, so it must not also be dropped as
// unused (SimplifyGroupInputs used to erase it anyway and crash with
// "Cannot destroy a value that still has uses!").

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @duplicate_first_unused
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<4xf32>):
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: fusion.yield %[[G]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @duplicate_first_unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x, %x : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    fusion.yield %0 : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
