#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> ()>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> ()>
module {
  func.func @torch_clip_grad_norm(%arg0: tensor<33x17xf32>, %arg1: tensor<100xf32>, %arg2: tensor<8x8x3xf32>, %arg3: tensor<1000xf32>) -> (tensor<33x17xf32>, tensor<100xf32>, tensor<8x8x3xf32>, tensor<1000xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %0 = tensor.empty() : tensor<33x17xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg0 : tensor<33x17xf32>, tensor<33x17xf32>) outs(%0 : tensor<33x17xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<33x17xf32>
    %2 = tensor.empty() : tensor<f32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<f32>) -> tensor<f32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%1 : tensor<33x17xf32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %5 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%4 : tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %cst : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %6 = tensor.empty() : tensor<100xf32>
    %7 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%arg1, %arg1 : tensor<100xf32>, tensor<100xf32>) outs(%6 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<100xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%7 : tensor<100xf32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %9 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%5, %8 : tensor<f32>, tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.addf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %10 = tensor.empty() : tensor<8x8x3xf32>
    %11 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2, %arg2 : tensor<8x8x3xf32>, tensor<8x8x3xf32>) outs(%10 : tensor<8x8x3xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<8x8x3xf32>
    %12 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["reduction", "reduction", "reduction"]} ins(%11 : tensor<8x8x3xf32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %13 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%9, %12 : tensor<f32>, tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.addf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %14 = tensor.empty() : tensor<1000xf32>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%arg3, %arg3 : tensor<1000xf32>, tensor<1000xf32>) outs(%14 : tensor<1000xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<1000xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction"]} ins(%15 : tensor<1000xf32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.addf %in, %out : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %17 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%13, %16 : tensor<f32>, tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.addf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %18 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%17 : tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = math.sqrt %in : f32
      linalg.yield %26 : f32
    } -> tensor<f32>
    %19 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%18 : tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.truncf %cst_1 : f64 to f32
      %27 = arith.addf %in, %26 : f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    %20 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%19 : tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.cmpf one, %in, %cst : f32
      cf.assert %26, "unimplemented: tensor with zero element"
      %27 = arith.divf %cst_0, %in : f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    %21 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%20 : tensor<f32>) outs(%2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %26 = arith.cmpf ugt, %in, %cst_0 : f32
      %27 = arith.select %26, %cst_0, %in : f32
      linalg.yield %27 : f32
    } -> tensor<f32>
    %22 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %21 : tensor<33x17xf32>, tensor<f32>) outs(%0 : tensor<33x17xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<33x17xf32>
    %23 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel"]} ins(%arg1, %21 : tensor<100xf32>, tensor<f32>) outs(%6 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<100xf32>
    %24 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2, %21 : tensor<8x8x3xf32>, tensor<f32>) outs(%10 : tensor<8x8x3xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<8x8x3xf32>
    %25 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel"]} ins(%arg3, %21 : tensor<1000xf32>, tensor<f32>) outs(%14 : tensor<1000xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %26 = arith.mulf %in, %in_2 : f32
      linalg.yield %26 : f32
    } -> tensor<1000xf32>
    return %22, %23, %24, %25 : tensor<33x17xf32>, tensor<100xf32>, tensor<8x8x3xf32>, tensor<1000xf32>
  }
}
