#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @torch_layernorm_bwd(%arg0: tensor<64x256xf32>, %arg1: tensor<64x256xf32>, %arg2: tensor<256xf32>) -> (tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e-05 : f64
    %cst_1 = arith.constant 2.560000e+02 : f32
    %0 = tensor.empty() : tensor<64x1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x1xf32>) -> tensor<64x1xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x256xf32>) outs(%1 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_1 : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %4 = tensor.empty() : tensor<64x256xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %3 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.subf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %5 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%6 : tensor<64x256xf32>) outs(%1 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_1 : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.truncf %cst_0 : f64 to f32
      %28 = arith.addf %in, %27 : f32
      linalg.yield %28 : f32
    } -> tensor<64x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.rsqrt %in : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %10 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %arg2 : tensor<64x256xf32>, tensor<256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%12 : tensor<64x256xf32>) outs(%1 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_1 : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %14 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.subf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %11 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%16 : tensor<64x256xf32>) outs(%1 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<64x1xf32>) outs(%0 : tensor<64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_1 : f32
      linalg.yield %27 : f32
    } -> tensor<64x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%11, %18 : tensor<64x256xf32>, tensor<64x1xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%15, %19 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.subf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%10, %20 : tensor<64x1xf32>, tensor<64x256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %11 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%4 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %27 = arith.mulf %in, %in_2 : f32
      linalg.yield %27 : f32
    } -> tensor<64x256xf32>
    %23 = tensor.empty() : tensor<256xf32>
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<256xf32>) -> tensor<256xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["reduction", "parallel"]} ins(%22 : tensor<64x256xf32>) outs(%24 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<256xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["reduction", "parallel"]} ins(%arg1 : tensor<64x256xf32>) outs(%24 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<256xf32>
    return %21, %25, %26 : tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32>
  }
}
