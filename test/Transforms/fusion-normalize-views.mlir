// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-views))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-views{max-rounds=1}))' \
// RUN:   | FileCheck %s --check-prefix=ONE

// fusion-fold-copies splits the loop of a gather at i floordiv 2 (the weight
// becomes an input of the op over [4, 2]; x and the result go through
// views); the collapse of the result is then below an op that broadcasts,
// so fusion-hoist-reshapes moves it below the exp that reads it. The second
// move needs a second round: the rounds go on until nothing changes.
// CHECK-LABEL: func.func @split_then_sink
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[W:[^:]*]]: tensor<4xf32>)
// CHECK: %[[XV:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [4, 2]
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[XV]], %[[W]] : tensor<4x2xf32>, tensor<4xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4x2xf32>)
// CHECK: math.exp
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
// CHECK-NEXT: return %[[R]]

// With one round the exp still reads the collapse.
// ONE-LABEL: func.func @split_then_sink
// ONE: %[[M:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2xf32>)
// ONE: %[[C:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
// ONE: linalg.generic {{.*}} ins(%[[C]] : tensor<8xf32>)
// ONE: math.exp
func.func @split_then_sink(%x: tensor<8xf32>, %w: tensor<4xf32>) -> tensor<8xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %q = arith.divui %i, %c2 : index
    %v = tensor.extract %w[%q] : tensor<4xf32>
    %m = arith.mulf %a, %v : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %t : tensor<8xf32>
}
