// Few very long rows (2 x 2^17) with several reductions each: a variance
// (the mean, then the mean square deviation from it), numpy's argmax (one
// maximum of (value, column) keys) and the range (max - min). One block per row would leave all but two SMs idle:
// on CUDA the reductions run in waves of a partials kernel over row slices
// and a finishing kernel (generated with kfuse's builder).
module {
  func.func @long_rows(%arg0: tensor<2x131072xf32> {kfuse.name = "x"}) -> (tensor<2xf32> {kfuse.name = "var"}, tensor<2xi64> {kfuse.name = "top"}, tensor<2xf32> {kfuse.name = "range"}) {
    %c2 = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<2xf32>
    %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x131072xf32>) outs(%i2 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<2xf32>
    %e3 = tensor.empty() : tensor<2xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<2xf32>) outs(%e3 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 131072.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<2xf32>
    %e4 = tensor.empty() : tensor<2x131072xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t3 : tensor<2x131072xf32>, tensor<2xf32>) outs(%e4 : tensor<2x131072xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.subf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<2x131072xf32>
    %e5 = tensor.empty() : tensor<2x131072xf32>
    %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4 : tensor<2x131072xf32>) outs(%e5 : tensor<2x131072xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.mulf %in0, %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<2x131072xf32>
    %c6 = arith.constant 0.0 : f32
    %e6 = tensor.empty() : tensor<2xf32>
    %i6 = linalg.fill ins(%c6 : f32) outs(%e6 : tensor<2xf32>) -> tensor<2xf32>
    %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t5 : tensor<2x131072xf32>) outs(%i6 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.addf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<2xf32>
    %e7 = tensor.empty() : tensor<2xf32>
    %t7 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6 : tensor<2xf32>) outs(%e7 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 131072.0 : f32
      %v1 = arith.divf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<2xf32>
    %cm8 = arith.constant 0xFF800000 : f32
    %ci8 = arith.constant 0 : i64
    %em8 = tensor.empty() : tensor<2xf32>
    %m8 = linalg.fill ins(%cm8 : f32) outs(%em8 : tensor<2xf32>) -> tensor<2xf32>
    %ei8 = tensor.empty() : tensor<2xi64>
    %i8 = linalg.fill ins(%ci8 : i64) outs(%ei8 : tensor<2xi64>) -> tensor<2xi64>
    %t8:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x131072xf32>) outs(%m8, %i8 : tensor<2xf32>, tensor<2xi64>) {
    ^bb0(%in0: f32, %m: f32, %i: i64):
      %v0 = arith.cmpf ugt, %in0, %m : f32
      %v1 = arith.cmpf ord, %m, %m : f32
      %v2 = arith.andi %v0, %v1 : i1
      %v3 = arith.maximumf %in0, %m : f32
      %col = linalg.index 1 : index
      %coli = arith.index_cast %col : index to i64
      %idx = arith.select %v2, %coli, %i : i64
      linalg.yield %v3, %idx : f32, i64
    } -> (tensor<2xf32>, tensor<2xi64>)
    %c9 = arith.constant 0xFF800000 : f32
    %e9 = tensor.empty() : tensor<2xf32>
    %i9 = linalg.fill ins(%c9 : f32) outs(%e9 : tensor<2xf32>) -> tensor<2xf32>
    %t9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x131072xf32>) outs(%i9 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.maximumf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<2xf32>
    %c10 = arith.constant 0x7F800000 : f32
    %e10 = tensor.empty() : tensor<2xf32>
    %i10 = linalg.fill ins(%c10 : f32) outs(%e10 : tensor<2xf32>) -> tensor<2xf32>
    %t10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x131072xf32>) outs(%i10 : tensor<2xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.minimumf %in0, %out : f32
      linalg.yield %v0 : f32
    } -> tensor<2xf32>
    %e11 = tensor.empty() : tensor<2xf32>
    %t11 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t9, %t10 : tensor<2xf32>, tensor<2xf32>) outs(%e11 : tensor<2xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.subf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<2xf32>
    return %t7, %t8#1, %t11 : tensor<2xf32>, tensor<2xi64>, tensor<2xf32>
  }
}
