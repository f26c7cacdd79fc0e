#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @attention(%x: tensor<16x24xf32>, %w: tensor<24x96xf32>) -> tensor<16x32xf32> {
  %z = arith.constant 0.0 : f32
  %c = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<16x96xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<16x96xf32>) -> tensor<16x96xf32>
  %qkv = linalg.matmul ins(%x, %w : tensor<16x24xf32>, tensor<24x96xf32>) outs(%f0 : tensor<16x96xf32>) -> tensor<16x96xf32>
  %q = tensor.extract_slice %qkv[0, 0] [16, 32] [1, 1] : tensor<16x96xf32> to tensor<16x32xf32>
  %k = tensor.extract_slice %qkv[0, 32] [16, 32] [1, 1] : tensor<16x96xf32> to tensor<16x32xf32>
  %v = tensor.extract_slice %qkv[0, 64] [16, 32] [1, 1] : tensor<16x96xf32> to tensor<16x32xf32>
  %e1 = tensor.empty() : tensor<32x16xf32>
  %kt = linalg.transpose ins(%k : tensor<16x32xf32>) outs(%e1 : tensor<32x16xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<16x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<16x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %sc = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<16x16xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %o = linalg.matmul ins(%sc, %v : tensor<16x16xf32>, tensor<16x32xf32>) outs(%f3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %o : tensor<16x32xf32>
}
