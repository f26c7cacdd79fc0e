// Slices of an argument that only linalg ops read are views of it: a softmax
// over x[:, 1:4098] (one row kernel over the view: its rows start 4 bytes
// past a vector boundary, then 8, 12, 0, ...) and x[:, 2:] - x[:, 1:-1] (one
// elementwise kernel reading two views, lane by lane).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sliced_rows(%x: tensor<64x4099xf32>) -> (tensor<64x4097xf32>, tensor<64x4097xf32>) {
  %v = tensor.extract_slice %x[0, 1] [64, 4097] [1, 1] : tensor<64x4099xf32> to tensor<64x4097xf32>
  %w = tensor.extract_slice %x[0, 2] [64, 4097] [1, 1] : tensor<64x4099xf32> to tensor<64x4097xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%v : tensor<64x4097xf32>) outs(%fm : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %ee = tensor.empty() : tensor<64x4097xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %m : tensor<64x4097xf32>, tensor<64xf32>) outs(%ee : tensor<64x4097xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %q = math.exp %d : f32
    linalg.yield %q : f32
  } -> tensor<64x4097xf32>
  %fs = linalg.fill ins(%z : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<64x4097xf32>) outs(%fs : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<64x4097xf32>, tensor<64xf32>) outs(%ee : tensor<64x4097xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x4097xf32>
  %dd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %w : tensor<64x4097xf32>, tensor<64x4097xf32>) outs(%ee : tensor<64x4097xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %b, %a : f32
    linalg.yield %d : f32
  } -> tensor<64x4097xf32>
  return %y, %dd : tensor<64x4097xf32>, tensor<64x4097xf32>
}
