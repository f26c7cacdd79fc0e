#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map4 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @torch_masked_mean_pool(%arg0: tensor<4x50x96xf32>, %arg1: tensor<4x50xi1>) -> tensor<4x96xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x50xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4x50xi1>) outs(%0 : tensor<4x50xf32>) {
    ^bb0(%in: i1, %out: f32):
      %12 = arith.uitofp %in : i1 to f32
      linalg.yield %12 : f32
    } -> tensor<4x50xf32>
    %expanded = tensor.expand_shape %1 [[0], [1, 2]] output_shape [4, 50, 1] : tensor<4x50xf32> into tensor<4x50x1xf32>
    %2 = tensor.empty() : tensor<4x50x96xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded : tensor<4x50x96xf32>, tensor<4x50x1xf32>) outs(%2 : tensor<4x50x96xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.mulf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<4x50x96xf32>
    %4 = tensor.empty() : tensor<4x96xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<4x96xf32>) -> tensor<4x96xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "reduction", "parallel"]} ins(%3 : tensor<4x50x96xf32>) outs(%5 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %in, %out : f32
      linalg.yield %12 : f32
    } -> tensor<4x96xf32>
    %7 = tensor.empty() : tensor<4x1xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map4], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x50xf32>) outs(%8 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %in, %out : f32
      linalg.yield %12 : f32
    } -> tensor<4x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<4x1xf32>) outs(%7 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.cmpf ult, %in, %cst_0 : f32
      %13 = arith.select %12, %cst_0, %in : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map4, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %10 : tensor<4x96xf32>, tensor<4x1xf32>) outs(%4 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.divf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<4x96xf32>
    return %11 : tensor<4x96xf32>
  }
}
