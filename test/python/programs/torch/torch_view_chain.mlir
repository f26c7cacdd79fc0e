#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @torch_view_chain(%arg0: tensor<4x8x8xf32>) -> tensor<2x16x8xf32> {
    %cst = arith.constant 1.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x8x8xf32>) outs(%0 : tensor<4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.negf %in : f32
      %6 = math.exp %5 : f32
      %7 = arith.addf %6, %cst : f32
      %8 = arith.divf %cst, %7 : f32
      linalg.yield %8 : f32
    } -> tensor<4x8x8xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2]] : tensor<4x8x8xf32> into tensor<32x8xf32>
    %expanded = tensor.expand_shape %collapsed [[0, 1], [2]] output_shape [2, 16, 8] : tensor<32x8xf32> into tensor<2x16x8xf32>
    %2 = tensor.empty() : tensor<2x16x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x16x8xf32>) outs(%2 : tensor<2x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = math.tanh %in : f32
      linalg.yield %5 : f32
    } -> tensor<2x16x8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x16x8xf32>) outs(%2 : tensor<2x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.addf %in, %cst : f32
      linalg.yield %5 : f32
    } -> tensor<2x16x8xf32>
    return %4 : tensor<2x16x8xf32>
  }
}
