#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @torch_bias_gelu(%arg0: tensor<16x128xf32>, %arg1: tensor<128xf32>) -> tensor<16x128xf32> {
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 5.000000e-01 : f32
    %cst_1 = arith.constant 1.41421354 : f32
    %0 = tensor.empty() : tensor<16x128xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<16x128xf32>, tensor<128xf32>) outs(%0 : tensor<16x128xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %3 = arith.addf %in, %in_2 : f32
      linalg.yield %3 : f32
    } -> tensor<16x128xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<16x128xf32>) outs(%0 : tensor<16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.divf %in, %cst_1 : f32
      %4 = math.erf %3 : f32
      %5 = arith.addf %4, %cst : f32
      %6 = arith.mulf %5, %cst_0 : f32
      %7 = arith.mulf %in, %6 : f32
      linalg.yield %7 : f32
    } -> tensor<16x128xf32>
    return %2 : tensor<16x128xf32>
  }
}
