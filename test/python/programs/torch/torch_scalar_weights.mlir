#map = affine_map<() -> ()>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @torch_scalar_weights(%arg0: tensor<64x128xf32>, %arg1: tensor<64x128xf32>, %arg2: tensor<f32>, %arg3: tensor<f32>) -> tensor<64x128xf32> {
    %cst = arith.constant 9.000000e-01 : f64
    %cst_0 = arith.constant 5.000000e-01 : f64
    %cst_1 = arith.constant 1.000000e+00 : f32
    %cst_2 = arith.constant dense<1> : tensor<i64>
    %0 = tensor.empty() : tensor<f32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg2 : tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %14 = math.absf %in : f32
      linalg.yield %14 : f32
    } -> tensor<f32>
    %2 = tensor.empty() : tensor<i1>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%1 : tensor<f32>) outs(%2 : tensor<i1>) {
    ^bb0(%in: f32, %out: i1):
      %14 = arith.extf %in : f32 to f64
      %15 = arith.cmpf oge, %14, %cst_0 : f64
      linalg.yield %15 : i1
    } -> tensor<i1>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg2 : tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %14 = arith.subf %in, %cst_1 : f32
      linalg.yield %14 : f32
    } -> tensor<f32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = []} ins(%3, %4, %arg2 : tensor<i1>, tensor<f32>, tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: i1, %in_3: f32, %in_4: f32, %out: f32):
      %14 = arith.select %in, %in_3, %in_4 : f32
      linalg.yield %14 : f32
    } -> tensor<f32>
    %6 = tensor.empty() : tensor<64x128xf32>
    %7 = linalg.generic {indexing_maps = [#map1, #map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%3, %arg1, %arg0 : tensor<i1>, tensor<64x128xf32>, tensor<64x128xf32>) outs(%6 : tensor<64x128xf32>) {
    ^bb0(%in: i1, %in_3: f32, %in_4: f32, %out: f32):
      %14 = arith.select %in, %in_3, %in_4 : f32
      linalg.yield %14 : f32
    } -> tensor<64x128xf32>
    %8 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg1, %arg0 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%6 : tensor<64x128xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.subf %in, %in_3 : f32
      linalg.yield %14 : f32
    } -> tensor<64x128xf32>
    %9 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%5, %8 : tensor<f32>, tensor<64x128xf32>) outs(%6 : tensor<64x128xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.mulf %in, %in_3 : f32
      linalg.yield %14 : f32
    } -> tensor<64x128xf32>
    %10 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%9, %7 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%6 : tensor<64x128xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.addf %in, %in_3 : f32
      linalg.yield %14 : f32
    } -> tensor<64x128xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = []} ins(%arg3 : tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %14 = arith.truncf %cst : f64 to f32
      %15 = math.powf %14, %in : f32
      linalg.yield %15 : f32
    } -> tensor<f32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []} ins(%cst_2, %11 : tensor<i64>, tensor<f32>) outs(%0 : tensor<f32>) {
    ^bb0(%in: i64, %in_3: f32, %out: f32):
      %14 = arith.sitofp %in : i64 to f32
      %15 = arith.subf %14, %in_3 : f32
      linalg.yield %15 : f32
    } -> tensor<f32>
    %13 = linalg.generic {indexing_maps = [#map2, #map1, #map2], iterator_types = ["parallel", "parallel"]} ins(%10, %12 : tensor<64x128xf32>, tensor<f32>) outs(%6 : tensor<64x128xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.divf %in, %in_3 : f32
      linalg.yield %14 : f32
    } -> tensor<64x128xf32>
    return %13 : tensor<64x128xf32>
  }
}
