#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0, d1) -> ()>
#map4 = affine_map<() -> ()>
module {
  func.func @torch_kl_div(%arg0: tensor<16x64xf32>, %arg1: tensor<16x64xf32>) -> tensor<f32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 1.600000e+01 : f32
    %0 = tensor.empty() : tensor<16xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<16xi64>) -> tensor<16xi64>
    %2 = tensor.empty() : tensor<16xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16xf32>) -> tensor<16xf32>
    %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<16x64xf32>) outs(%3, %1 : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_3: i64):
      %26 = linalg.index 1 : index
      %27 = arith.index_cast %26 : index to i64
      %28 = arith.maximumf %in, %out : f32
      %29 = arith.cmpf ogt, %in, %out : f32
      %30 = arith.select %29, %27, %out_3 : i64
      linalg.yield %28, %30 : f32, i64
    } -> (tensor<16xf32>, tensor<16xi64>)
    %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
    %5 = tensor.empty() : tensor<16x64xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %expanded : tensor<16x64xf32>, tensor<16x1xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.subf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<16x64xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.exp %in : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %8 = tensor.empty() : tensor<16x1xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<16x1xf32>) -> tensor<16x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<16x64xf32>) outs(%9 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<16x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<16x1xf32>) outs(%8 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.log %in : f32
      linalg.yield %26 : f32
    } -> tensor<16x1xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %11 : tensor<16x64xf32>, tensor<16x1xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.subf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %13:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x64xf32>) outs(%3, %1 : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_3: i64):
      %26 = linalg.index 1 : index
      %27 = arith.index_cast %26 : index to i64
      %28 = arith.maximumf %in, %out : f32
      %29 = arith.cmpf ogt, %in, %out : f32
      %30 = arith.select %29, %27, %out_3 : i64
      linalg.yield %28, %30 : f32, i64
    } -> (tensor<16xf32>, tensor<16xi64>)
    %expanded_2 = tensor.expand_shape %13#0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded_2 : tensor<16x64xf32>, tensor<16x1xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.subf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%14 : tensor<16x64xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.exp %in : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%15 : tensor<16x64xf32>) outs(%9 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<16x1xf32>) outs(%8 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.log %in : f32
      linalg.yield %26 : f32
    } -> tensor<16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%14, %17 : tensor<16x64xf32>, tensor<16x1xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.subf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%18, %12 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.subf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<16x64xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.exp %in : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%20, %19 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%5 : tensor<16x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %26 = arith.mulf %in, %in_3 : f32
      linalg.yield %26 : f32
    } -> tensor<16x64xf32>
    %22 = tensor.empty() : tensor<f32>
    %23 = linalg.fill ins(%cst_0 : f32) outs(%22 : tensor<f32>) -> tensor<f32>
    %24 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["reduction", "reduction"]} ins(%21 : tensor<16x64xf32>) outs(%23 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %25 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%24 : tensor<f32>) outs(%22 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.divf %in, %cst_1 : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    return %25 : tensor<f32>
  }
}
