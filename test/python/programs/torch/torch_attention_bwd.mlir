#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @torch_attention_bwd(%arg0: tensor<2x16x32xf32>, %arg1: tensor<2x16x32xf32>, %arg2: tensor<2x16x32xf32>, %arg3: tensor<2x16x32xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<2x16x32xf32>
    %cst_2 = arith.constant 1.250000e-01 : f32
    %0 = tensor.empty() : tensor<2x32x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<2x16x32xf32>) outs(%0 : tensor<2x32x16xf32>) permutation = [0, 2, 1] 
    %1 = tensor.empty() : tensor<2x16x16xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %3 = linalg.batch_matmul ins(%arg0, %transposed : tensor<2x16x32xf32>, tensor<2x32x16xf32>) outs(%2 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.mulf %in, %cst_2 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %5 = tensor.empty() : tensor<2x16xi64>
    %6 = linalg.fill ins(%c0_i64 : i64) outs(%5 : tensor<2x16xi64>) -> tensor<2x16xi64>
    %7 = tensor.empty() : tensor<2x16xf32>
    %8 = linalg.fill ins(%cst_0 : f32) outs(%7 : tensor<2x16xf32>) -> tensor<2x16xf32>
    %9:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%4 : tensor<2x16x16xf32>) outs(%8, %6 : tensor<2x16xf32>, tensor<2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_7: i64):
      %29 = linalg.index 2 : index
      %30 = arith.index_cast %29 : index to i64
      %31 = arith.maximumf %in, %out : f32
      %32 = arith.cmpf ogt, %in, %out : f32
      %33 = arith.select %32, %30, %out_7 : i64
      linalg.yield %31, %33 : f32, i64
    } -> (tensor<2x16xf32>, tensor<2x16xi64>)
    %expanded = tensor.expand_shape %9#0 [[0], [1, 2]] output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4, %expanded : tensor<2x16x16xf32>, tensor<2x16x1xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.subf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10 : tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = math.exp %in : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %12 = tensor.empty() : tensor<2x16x1xf32>
    %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%11 : tensor<2x16x16xf32>) outs(%13 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.addf %in, %out : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<2x16x16xf32>, tensor<2x16x1xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.divf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %16 = tensor.empty() : tensor<2x16x32xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1, %arg3 : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%16 : tensor<2x16x32xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.mulf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x32xf32>
    %transposed_3 = linalg.transpose ins(%15 : tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) permutation = [0, 2, 1] 
    %18 = linalg.fill ins(%cst : f32) outs(%16 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %19 = linalg.batch_matmul ins(%transposed_3, %17 : tensor<2x16x16xf32>, tensor<2x16x32xf32>) outs(%18 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %transposed_4 = linalg.transpose ins(%arg2 : tensor<2x16x32xf32>) outs(%0 : tensor<2x32x16xf32>) permutation = [0, 2, 1] 
    %20 = linalg.batch_matmul ins(%17, %transposed_4 : tensor<2x16x32xf32>, tensor<2x32x16xf32>) outs(%2 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20, %15 : tensor<2x16x16xf32>, tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.mulf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%21 : tensor<2x16x16xf32>) outs(%13 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.addf %in, %out : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x1xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %22 : tensor<2x16x16xf32>, tensor<2x16x1xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.mulf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %24 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %23 : tensor<2x16x16xf32>, tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.subf %in, %in_7 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24 : tensor<2x16x16xf32>) outs(%1 : tensor<2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.mulf %in, %cst_2 : f32
      linalg.yield %29 : f32
    } -> tensor<2x16x16xf32>
    %transposed_5 = linalg.transpose ins(%arg0 : tensor<2x16x32xf32>) outs(%0 : tensor<2x32x16xf32>) permutation = [0, 2, 1] 
    %26 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
    %27 = linalg.batch_matmul ins(%transposed_5, %25 : tensor<2x32x16xf32>, tensor<2x16x16xf32>) outs(%26 : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
    %28 = linalg.batch_matmul ins(%25, %arg1 : tensor<2x16x16xf32>, tensor<2x16x32xf32>) outs(%18 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %transposed_6 = linalg.transpose ins(%27 : tensor<2x32x16xf32>) outs(%16 : tensor<2x16x32xf32>) permutation = [0, 2, 1] 
    return %28, %transposed_6, %19 : tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>
  }
}
