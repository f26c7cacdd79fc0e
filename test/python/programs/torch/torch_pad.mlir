#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @torch_pad(%arg0: tensor<3x5x7xf32>) -> tensor<3x8x10xf32> {
    %cst = arith.constant -1.000000e+00 : f32
    %cst_0 = arith.constant 2.000000e+00 : f32
    %0 = tensor.empty() : tensor<3x5x7xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<3x5x7xf32>) outs(%0 : tensor<3x5x7xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = math.exp %in : f32
      linalg.yield %4 : f32
    } -> tensor<3x5x7xf32>
    %padded = tensor.pad %1 low[0, 0, 2] high[0, 3, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index):
      tensor.yield %cst : f32
    } : tensor<3x5x7xf32> to tensor<3x8x10xf32>
    %2 = tensor.empty() : tensor<3x8x10xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%padded : tensor<3x8x10xf32>) outs(%2 : tensor<3x8x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.mulf %in, %cst_0 : f32
      linalg.yield %4 : f32
    } -> tensor<3x8x10xf32>
    return %3 : tensor<3x8x10xf32>
  }
}
