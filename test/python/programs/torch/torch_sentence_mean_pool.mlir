#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @torch_sentence_mean_pool(%arg0: tensor<4x50x96xf32>, %arg1: tensor<4x50xi64>) -> tensor<4x96xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e-09 : f64
    %0 = tensor.empty() : tensor<4x50x96xi64>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<4x50xi64>) outs(%0 : tensor<4x50x96xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<4x50x96xi64>
    %2 = tensor.empty() : tensor<4x50x96xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<4x50x96xi64>) outs(%2 : tensor<4x50x96xf32>) {
    ^bb0(%in: i64, %out: f32):
      %11 = arith.sitofp %in : i64 to f32
      linalg.yield %11 : f32
    } -> tensor<4x50x96xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %3 : tensor<4x50x96xf32>, tensor<4x50x96xf32>) outs(%2 : tensor<4x50x96xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %11 = arith.mulf %in, %in_1 : f32
      linalg.yield %11 : f32
    } -> tensor<4x50x96xf32>
    %5 = tensor.empty() : tensor<4x96xf32>
    %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<4x96xf32>) -> tensor<4x96xf32>
    %7 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%4 : tensor<4x50x96xf32>) outs(%6 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %out: f32):
      %11 = arith.addf %in, %out : f32
      linalg.yield %11 : f32
    } -> tensor<4x96xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%3 : tensor<4x50x96xf32>) outs(%6 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %out: f32):
      %11 = arith.addf %in, %out : f32
      linalg.yield %11 : f32
    } -> tensor<4x96xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<4x96xf32>) outs(%5 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %out: f32):
      %11 = arith.truncf %cst_0 : f64 to f32
      %12 = arith.cmpf ult, %in, %11 : f32
      %13 = arith.select %12, %11, %in : f32
      linalg.yield %13 : f32
    } -> tensor<4x96xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%7, %9 : tensor<4x96xf32>, tensor<4x96xf32>) outs(%5 : tensor<4x96xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %11 = arith.divf %in, %in_1 : f32
      linalg.yield %11 : f32
    } -> tensor<4x96xf32>
    return %10 : tensor<4x96xf32>
  }
}
