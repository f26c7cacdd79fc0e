func.func @r(%x: tensor<4x8xf32>, %y: tensor<32xf32>) -> (tensor<32xf32>, tensor<2x16xf32>) {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %r = linalg.add ins(%c, %y : tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.exp ins(%r : tensor<32xf32>) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %x2 = tensor.expand_shape %s [[0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
  %e2 = tensor.empty() : tensor<2x16xf32>
  %t = linalg.negf ins(%x2 : tensor<2x16xf32>) outs(%e2 : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %r, %t : tensor<32xf32>, tensor<2x16xf32>
}
