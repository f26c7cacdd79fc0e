#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: tensor<8x192xf32>) -> (tensor<8x64xf32>, tensor<8x96xf32>) {
  %s = tensor.extract_slice %x[0, 64] [8, 64] [1, 1] : tensor<8x192xf32> to tensor<8x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    %v = arith.addf %ex, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %r : tensor<8x64xf32>, tensor<8xf32>) outs(%e2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %d: f32, %out: f32):
    %ex = math.exp %in : f32
    %v = arith.divf %ex, %d : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %odd = tensor.extract_slice %x[0, 1] [8, 96] [1, 2] : tensor<8x192xf32> to tensor<8x96xf32>
  %e3 = tensor.empty() : tensor<8x96xf32>
  %n = linalg.negf ins(%odd : tensor<8x96xf32>) outs(%e3 : tensor<8x96xf32>) -> tensor<8x96xf32>
  return %t, %n : tensor<8x64xf32>, tensor<8x96xf32>
}
