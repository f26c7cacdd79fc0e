// Batch 1, torch-mlir style: a keepdims row mean [1, 64, 1] and the centred
// rows [1, 64, 256] are both returned. The unit dimensions are folded away
// before planning; the kernel writes both outputs in place through views
// (fusion-results-in-place), no copies after it.
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @batch1_rows(%x: tensor<1x64x256xf32>) -> (tensor<1x64x1xf32>, tensor<1x64x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 256.0 : f32
  %e1 = tensor.empty() : tensor<1x64x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x64x1xf32>) -> tensor<1x64x1xf32>
  %s = linalg.generic {indexing_maps = [#x, #m], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x64x256xf32>) outs(%z : tensor<1x64x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<1x64x1xf32>
  %mean = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<1x64x1xf32>) outs(%e1 : tensor<1x64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<1x64x1xf32>
  %e2 = tensor.empty() : tensor<1x64x256xf32>
  %c = linalg.generic {indexing_maps = [#x, #m, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mean : tensor<1x64x256xf32>, tensor<1x64x1xf32>) outs(%e2 : tensor<1x64x256xf32>) {
  ^bb0(%in: f32, %mu: f32, %out: f32):
    %d = arith.subf %in, %mu : f32
    linalg.yield %d : f32
  } -> tensor<1x64x256xf32>
  return %mean, %c : tensor<1x64x1xf32>, tensor<1x64x256xf32>
}
