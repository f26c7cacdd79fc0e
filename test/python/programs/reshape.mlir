func.func @r(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %r = linalg.exp ins(%c : tensor<32xf32>) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}
