#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @torch_adam_step(%arg0: tensor<64x33xf32>, %arg1: tensor<64x33xf32>, %arg2: tensor<64x33xf32>, %arg3: tensor<64x33xf32>, %arg4: tensor<100xf32>, %arg5: tensor<100xf32>, %arg6: tensor<100xf32>, %arg7: tensor<100xf32>, %arg8: tensor<8x3x5xf32>, %arg9: tensor<8x3x5xf32>, %arg10: tensor<8x3x5xf32>, %arg11: tensor<8x3x5xf32>) -> (tensor<64x33xf32>, tensor<64x33xf32>, tensor<64x33xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<8x3x5xf32>, tensor<8x3x5xf32>, tensor<8x3x5xf32>) {
    %cst = arith.constant 1.000000e-08 : f64
    %cst_0 = arith.constant 1.000000e-03 : f64
    %cst_1 = arith.constant 0.99899999999999999 : f64
    %cst_2 = arith.constant 1.000000e-01 : f64
    %cst_3 = arith.constant 9.000000e-01 : f64
    %0 = tensor.empty() : tensor<64x33xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_3 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %2 : tensor<64x33xf32>, tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_1 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %arg1 : tensor<64x33xf32>, tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.mulf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%4, %6 : tensor<64x33xf32>, tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = math.sqrt %in : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst : f64 to f32
      %46 = arith.addf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<64x33xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %12 : tensor<64x33xf32>, tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.divf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %13 : tensor<64x33xf32>, tensor<64x33xf32>) outs(%0 : tensor<64x33xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.subf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<64x33xf32>
    %15 = tensor.empty() : tensor<100xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%arg6 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_3 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%arg5 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%16, %17 : tensor<100xf32>, tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%arg7 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_1 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%arg5 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%20, %arg5 : tensor<100xf32>, tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.mulf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %22 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%19, %21 : tensor<100xf32>, tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%18 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%23 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%22 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %26 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%25 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = math.sqrt %in : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%26 : tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst : f64 to f32
      %46 = arith.addf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<100xf32>
    %28 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%24, %27 : tensor<100xf32>, tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.divf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %29 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg4, %28 : tensor<100xf32>, tensor<100xf32>) outs(%15 : tensor<100xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.subf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<100xf32>
    %30 = tensor.empty() : tensor<8x3x5xf32>
    %31 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg10 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_3 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %32 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg9 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %33 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %32 : tensor<8x3x5xf32>, tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    %34 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg11 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_1 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %35 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg9 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %36 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%35, %arg9 : tensor<8x3x5xf32>, tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.mulf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    %37 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34, %36 : tensor<8x3x5xf32>, tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.addf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    %38 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%33 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_2 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %39 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%38 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %40 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%37 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_0 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %41 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%40 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = math.sqrt %in : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    %42 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%41 : tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst : f64 to f32
      %46 = arith.addf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<8x3x5xf32>
    %43 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39, %42 : tensor<8x3x5xf32>, tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.divf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    %44 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg8, %43 : tensor<8x3x5xf32>, tensor<8x3x5xf32>) outs(%30 : tensor<8x3x5xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %45 = arith.subf %in, %in_4 : f32
      linalg.yield %45 : f32
    } -> tensor<8x3x5xf32>
    return %14, %3, %7, %29, %18, %22, %44, %33, %37 : tensor<64x33xf32>, tensor<64x33xf32>, tensor<64x33xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<8x3x5xf32>, tensor<8x3x5xf32>, tensor<8x3x5xf32>
  }
}
