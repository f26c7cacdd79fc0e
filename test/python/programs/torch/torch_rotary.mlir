#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
module {
  func.func @torch_rotary(%arg0: tensor<2x8x16x32xf32>, %arg1: tensor<16x32xf32>, %arg2: tensor<16x32xf32>) -> tensor<2x8x16x32xf32> {
    %0 = tensor.empty() : tensor<2x8x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x8x16x32xf32>, tensor<16x32xf32>) outs(%0 : tensor<2x8x16x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %6 = arith.mulf %in, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<2x8x16x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 8, 16, 16] [1, 1, 1, 1] : tensor<2x8x16x32xf32> to tensor<2x8x16x16xf32>
    %2 = tensor.empty() : tensor<2x8x16x16xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice : tensor<2x8x16x16xf32>) outs(%2 : tensor<2x8x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = arith.negf %in : f32
      linalg.yield %6 : f32
    } -> tensor<2x8x16x16xf32>
    %extracted_slice_0 = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 8, 16, 16] [1, 1, 1, 1] : tensor<2x8x16x32xf32> to tensor<2x8x16x16xf32>
    %concat = tensor.concat dim(3) %3, %extracted_slice_0 : (tensor<2x8x16x16xf32>, tensor<2x8x16x16xf32>) -> tensor<2x8x16x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat, %arg2 : tensor<2x8x16x32xf32>, tensor<16x32xf32>) outs(%0 : tensor<2x8x16x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %6 = arith.mulf %in, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<2x8x16x32xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %4 : tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>) outs(%0 : tensor<2x8x16x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %6 = arith.addf %in, %in_1 : f32
      linalg.yield %6 : f32
    } -> tensor<2x8x16x32xf32>
    return %5 : tensor<2x8x16x32xf32>
  }
}
