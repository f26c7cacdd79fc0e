func.func @bmm(%a: tensor<3x16x8xf32>, %b: tensor<3x8x12xf32>) -> tensor<3x16x12xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x16x12xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x16x12xf32>) -> tensor<3x16x12xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<3x16x8xf32>, tensor<3x8x12xf32>) outs(%f : tensor<3x16x12xf32>) -> tensor<3x16x12xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<3x16x12xf32>) outs(%e : tensor<3x16x12xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c = arith.constant 0.125 : f32
    %y = arith.mulf %v, %c : f32
    linalg.yield %y : f32
  } -> tensor<3x16x12xf32>
  return %r : tensor<3x16x12xf32>
}
