// Two matmuls over the same loop nest and an epilogue adding them: one
// contraction kernel (a thread per output computes both dot products).
func.func @mm2(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>, %c: tensor<64x32xf32>, %d: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>) outs(%f : tensor<64x16xf32>) -> tensor<64x16xf32>
  %m2 = linalg.matmul ins(%c, %d : tensor<64x32xf32>, tensor<32x16xf32>) outs(%f : tensor<64x16xf32>) -> tensor<64x16xf32>
  %s = linalg.add ins(%m1, %m2 : tensor<64x16xf32>, tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %s : tensor<64x16xf32>
}
