#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
module {
  func.func @torch_gelu_tanh_bwd(%arg0: tensor<32x64xf32>, %arg1: tensor<32x64xf32>) -> tensor<32x64xf32> {
    %c2_i64 = arith.constant 2 : i64
    %c3_i64 = arith.constant 3 : i64
    %cst = arith.constant 1.341450e-01 : f64
    %cst_0 = arith.constant 0.79788456080286541 : f64
    %cst_1 = arith.constant 4.471500e-02 : f64
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_4 = arith.constant dense<1> : tensor<i64>
    %0 = tensor.empty() : tensor<32x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = math.fpowi %in, %c3_i64 : f32, i64
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.truncf %cst_1 : f64 to f32
      %20 = arith.mulf %in, %19 : f32
      linalg.yield %20 : f32
    } -> tensor<32x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.addf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.truncf %cst_0 : f64 to f32
      %20 = arith.mulf %in, %19 : f32
      linalg.yield %20 : f32
    } -> tensor<32x64xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = math.tanh %in : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.addf %in, %cst_2 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.mulf %in, %cst_3 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.mulf %in, %cst_3 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %5 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.mulf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%cst_4, %9 : tensor<i64>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: i64, %in_5: f32, %out: f32):
      %19 = arith.sitofp %in : i64 to f32
      %20 = arith.subf %19, %in_5 : f32
      linalg.yield %20 : f32
    } -> tensor<32x64xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %10 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.mulf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.truncf %cst_0 : f64 to f32
      %20 = arith.mulf %in, %19 : f32
      linalg.yield %20 : f32
    } -> tensor<32x64xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.truncf %cst : f64 to f32
      %20 = arith.mulf %in, %19 : f32
      linalg.yield %20 : f32
    } -> tensor<32x64xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%14 : tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.addf %in, %cst_2 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %15 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.mulf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %16 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.addf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %17 : tensor<32x64xf32>, tensor<32x64xf32>) outs(%0 : tensor<32x64xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %19 = arith.mulf %in, %in_5 : f32
      linalg.yield %19 : f32
    } -> tensor<32x64xf32>
    return %18 : tensor<32x64xf32>
  }
}
