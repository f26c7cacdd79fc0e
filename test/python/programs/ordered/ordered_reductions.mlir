// Reductions whose step is not an associative op, for the GPU test set: an
// alternating sum over rows, a Horner step over the same rows (its
// factor tanh(t), below 1: no overflow on normal inputs) with an epilogue
// over the rows' columns, and an alternating sum over a whole
// vector (one thread). On CUDA each runs as an ordered kernel (a thread per
// element written, the reduction loops in order).
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @ordered_reductions(%x: tensor<64x1000xf32>, %t: tensor<64xf32>, %v: tensor<5000xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x1000xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %alt = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x, %t : tensor<64x1000xf32>, tensor<64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%c: f32, %tt: f32, %acc: f32):
    %s = math.tanh %tt : f32
    %m = arith.mulf %acc, %s : f32
    %a = arith.addf %m, %c : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x1000xf32>
  %y = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<64x1000xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x1000xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %all = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%v : tensor<5000xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  return %alt, %p, %y, %all : tensor<64xf32>, tensor<64xf32>, tensor<64x1000xf32>, tensor<f32>
}
