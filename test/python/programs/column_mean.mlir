func.func @colsum(%x: tensor<512x96xf32>) -> tensor<96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<96xf32>) -> tensor<96xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x96xf32>) outs(%f : tensor<96xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : tensor<96xf32>) outs(%e : tensor<96xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant 0.001953125 : f32
    %v = arith.mulf %in, %c : f32
    linalg.yield %v : f32
  } -> tensor<96xf32>
  return %r : tensor<96xf32>
}
