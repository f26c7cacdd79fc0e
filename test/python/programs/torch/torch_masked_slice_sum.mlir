#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @torch_masked_slice_sum(%arg0: tensor<8x65xf32>, %arg1: tensor<8x65xi1>) -> tensor<8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %extracted_slice = tensor.extract_slice %arg0[0, 1] [8, 64] [1, 1] : tensor<8x65xf32> to tensor<8x64xf32>
    %extracted_slice_0 = tensor.extract_slice %arg1[0, 1] [8, 64] [1, 1] : tensor<8x65xi1> to tensor<8x64xi1>
    %0 = tensor.empty() : tensor<8x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%extracted_slice, %extracted_slice_0 : tensor<8x64xf32>, tensor<8x64xi1>) outs(%0 : tensor<8x64xf32>) {
    ^bb0(%in: f32, %in_1: i1, %out: f32):
      %5 = arith.uitofp %in_1 : i1 to f32
      %6 = arith.mulf %in, %5 : f32
      linalg.yield %6 : f32
    } -> tensor<8x64xf32>
    %2 = tensor.empty() : tensor<8xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8xf32>) -> tensor<8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<8x64xf32>) outs(%3 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.addf %in, %out : f32
      linalg.yield %5 : f32
    } -> tensor<8xf32>
    return %4 : tensor<8xf32>
  }
}
