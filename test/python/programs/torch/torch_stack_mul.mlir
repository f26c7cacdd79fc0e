#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @torch_stack_mul(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
    %concat = tensor.concat dim(1) %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
    %expanded = tensor.expand_shape %concat [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
    %0 = tensor.empty() : tensor<4x2x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %arg2 : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%0 : tensor<4x2x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<4x2x8xf32>
    return %1 : tensor<4x2x8xf32>
  }
}
