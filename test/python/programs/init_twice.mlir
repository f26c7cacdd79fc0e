// A bias broadcast that is both a matmul's accumulator init and an output.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
func.func @init_twice(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %e = tensor.empty() : tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m, %init : tensor<64x128xf32>, tensor<64x128xf32>
}
