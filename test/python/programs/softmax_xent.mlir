// Per-row softmax cross-entropy of logits [256, 1000] with int64 labels, as
// linalg on tensors: loss = log(sum(exp(x - max))) + max - x[label].
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>
func.func @xent(%x: tensor<256x1000xf32>, %labels: tensor<256xi64>) -> tensor<256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x1000xf32>) outs(%m0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<256x1000xf32>, tensor<256xf32>) outs(%s0 : tensor<256xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<256x1000xf32>, tensor<256xi64>) outs(%p0 : tensor<256xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %loss = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%s, %m, %picked : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e1 : tensor<256xf32>) {
  ^bb0(%sum: f32, %mx: f32, %pk: f32, %o: f32):
    %l = math.log %sum : f32
    %a = arith.addf %l, %mx : f32
    %r = arith.subf %a, %pk : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  return %loss : tensor<256xf32>
}
