// c + a @ b with the caller's c as the matmul's outs: c must stay unchanged.
func.func @acc(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}
