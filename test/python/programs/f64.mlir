func.func @d(%x: tensor<16xf64>) -> tensor<16xf64> {
  %e = tensor.empty() : tensor<16xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<16xf64>) outs(%e : tensor<16xf64>) {
  ^bb0(%a: f64, %o: f64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %v = arith.addf %a, %f : f64
    linalg.yield %v : f64
  } -> tensor<16xf64>
  return %r : tensor<16xf64>
}
