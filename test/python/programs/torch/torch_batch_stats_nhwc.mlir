#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
module {
  func.func @torch_batch_stats_nhwc(%arg0: tensor<4x6x6x32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f64
    %cst_1 = arith.constant 1.440000e+02 : f32
    %cst_2 = arith.constant 1.440000e+02 : f64
    %0 = tensor.empty() : tensor<32xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32xf32>) -> tensor<32xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%arg0 : tensor<4x6x6x32xf32>) outs(%1 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %17 = arith.addf %in, %out : f32
      linalg.yield %17 : f32
    } -> tensor<32xf32>
    %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%2 : tensor<32xf32>) outs(%0 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %17 = arith.divf %in, %cst_1 : f32
      linalg.yield %17 : f32
    } -> tensor<32xf32>
    %4 = tensor.empty() : tensor<4x6x6x32xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x6x6x32xf32>) outs(%4 : tensor<4x6x6x32xf64>) {
    ^bb0(%in: f32, %out: f64):
      %17 = arith.extf %in : f32 to f64
      linalg.yield %17 : f64
    } -> tensor<4x6x6x32xf64>
    %6 = tensor.empty() : tensor<1x1x1x32xf64>
    %7 = linalg.fill ins(%cst_0 : f64) outs(%6 : tensor<1x1x1x32xf64>) -> tensor<1x1x1x32xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%5 : tensor<4x6x6x32xf64>) outs(%7 : tensor<1x1x1x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %17 = arith.addf %in, %out : f64
      linalg.yield %17 : f64
    } -> tensor<1x1x1x32xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x1x1x32xf64>) outs(%6 : tensor<1x1x1x32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %17 = arith.divf %in, %cst_2 : f64
      linalg.yield %17 : f64
    } -> tensor<1x1x1x32xf64>
    %10 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %9 : tensor<4x6x6x32xf64>, tensor<1x1x1x32xf64>) outs(%4 : tensor<4x6x6x32xf64>) {
    ^bb0(%in: f64, %in_3: f64, %out: f64):
      %17 = arith.subf %in, %in_3 : f64
      linalg.yield %17 : f64
    } -> tensor<4x6x6x32xf64>
    %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %10 : tensor<4x6x6x32xf64>, tensor<4x6x6x32xf64>) outs(%4 : tensor<4x6x6x32xf64>) {
    ^bb0(%in: f64, %in_3: f64, %out: f64):
      %17 = arith.mulf %in, %in_3 : f64
      linalg.yield %17 : f64
    } -> tensor<4x6x6x32xf64>
    %12 = tensor.empty() : tensor<32xf64>
    %13 = linalg.fill ins(%cst_0 : f64) outs(%12 : tensor<32xf64>) -> tensor<32xf64>
    %14 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%11 : tensor<4x6x6x32xf64>) outs(%13 : tensor<32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %17 = arith.addf %in, %out : f64
      linalg.yield %17 : f64
    } -> tensor<32xf64>
    %15 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%14 : tensor<32xf64>) outs(%12 : tensor<32xf64>) {
    ^bb0(%in: f64, %out: f64):
      %17 = arith.divf %in, %cst_2 : f64
      linalg.yield %17 : f64
    } -> tensor<32xf64>
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%15 : tensor<32xf64>) outs(%0 : tensor<32xf32>) {
    ^bb0(%in: f64, %out: f32):
      %17 = arith.truncf %in : f64 to f32
      linalg.yield %17 : f32
    } -> tensor<32xf32>
    return %3, %16 : tensor<32xf32>, tensor<32xf32>
  }
}
