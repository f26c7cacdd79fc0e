// Arg-reductions in the forms torch-mlir and hand-written linalg give them,
// on values with many ties and a few NaNs: t = floor(2 x), with a NaN at
// column (13 r) mod 1000 of every row r = 3 (mod 8).
//   %amax: first column of each row's maximum (cmpf ogt), and the maximum,
//          from initial values 3 * thr (some above the row's maximum: those
//          rows keep the initial index -1)
//   %amin: last column of each row's minimum (cmpf oge with the operands
//          swapped: m >= x), index result first, i32 indices
//   %imax: first column of the maximum of the integers fptosi(floor(2 x))
//          (maxsi / cmpi sgt), computed in the reduction's own body
//   %cmax: first row of each column's maximum (a reduction over the rows)
#full = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @arg_rows(%x: tensor<64x1000xf32>, %thr: tensor<64xf32>)
    -> (tensor<64xi64>, tensor<64xf32>, tensor<64xi32>, tensor<64xi64>, tensor<1000xi64>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c13 = arith.constant 13 : index
  %c1000 = arith.constant 1000 : index
  %m1 = arith.constant -1 : i64
  %z64 = arith.constant 0 : i64
  %z32 = arith.constant 0 : i32
  %imin = arith.constant -2147483648 : i32
  %ef = tensor.empty() : tensor<64x1000xf32>
  %t = linalg.generic {indexing_maps = [#full, #full], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x1000xf32>) outs(%ef : tensor<64x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %s = arith.mulf %in, %two : f32
    %f = math.floor %s : f32
    %rm = arith.remui %r, %c8 : index
    %is3 = arith.cmpi eq, %rm, %c3 : index
    %r13 = arith.muli %r, %c13 : index
    %at = arith.remui %r13, %c1000 : index
    %isc = arith.cmpi eq, %c, %at : index
    %hit = arith.andi %is3, %isc : i1
    %v = arith.select %hit, %nan, %f : f32
    linalg.yield %v : f32
  } -> tensor<64x1000xf32>

  %e64f = tensor.empty() : tensor<64xf32>
  %m0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%thr : tensor<64xf32>) outs(%e64f : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %three : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e64i = tensor.empty() : tensor<64xi64>
  %i0 = linalg.fill ins(%m1 : i64) outs(%e64i : tensor<64xi64>) -> tensor<64xi64>
  %amax:2 = linalg.generic {indexing_maps = [#full, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<64x1000xf32>) outs(%m0, %i0 : tensor<64xf32>, tensor<64xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<64xf32>, tensor<64xi64>)

  %pinf0 = linalg.fill ins(%pinf : f32) outs(%e64f : tensor<64xf32>) -> tensor<64xf32>
  %e64i32 = tensor.empty() : tensor<64xi32>
  %z0 = linalg.fill ins(%z32 : i32) outs(%e64i32 : tensor<64xi32>) -> tensor<64xi32>
  %amin:2 = linalg.generic {indexing_maps = [#full, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<64x1000xf32>) outs(%z0, %pinf0 : tensor<64xi32>, tensor<64xf32>) {
  ^bb0(%in: f32, %i: i32, %m: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %mn = arith.minimumf %m, %in : f32
    %ge = arith.cmpf oge, %m, %in : f32
    %sel = arith.select %ge, %ji, %i : i32
    linalg.yield %sel, %mn : i32, f32
  } -> (tensor<64xi32>, tensor<64xf32>)

  %imin0 = linalg.fill ins(%imin : i32) outs(%e64i32 : tensor<64xi32>) -> tensor<64xi32>
  %iz = linalg.fill ins(%z64 : i64) outs(%e64i : tensor<64xi64>) -> tensor<64xi64>
  %imax:2 = linalg.generic {indexing_maps = [#full, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1000xf32>) outs(%imin0, %iz : tensor<64xi32>, tensor<64xi64>) {
  ^bb0(%in: f32, %m: i32, %i: i64):
    %s = arith.mulf %in, %two : f32
    %f = math.floor %s : f32
    %v = arith.fptosi %f : f32 to i32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maxsi %v, %m : i32
    %gt = arith.cmpi sgt, %v, %m : i32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : i32, i64
  } -> (tensor<64xi32>, tensor<64xi64>)

  %e1000f = tensor.empty() : tensor<1000xf32>
  %ninf0 = linalg.fill ins(%ninf : f32) outs(%e1000f : tensor<1000xf32>) -> tensor<1000xf32>
  %e1000i = tensor.empty() : tensor<1000xi64>
  %cz = linalg.fill ins(%z64 : i64) outs(%e1000i : tensor<1000xi64>) -> tensor<1000xi64>
  %cmax:2 = linalg.generic {indexing_maps = [#tr, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<64x1000xf32>) outs(%ninf0, %cz : tensor<1000xf32>, tensor<1000xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<1000xf32>, tensor<1000xi64>)
  return %amax#1, %amax#0, %amin#0, %imax#1, %cmax#1 : tensor<64xi64>, tensor<64xf32>, tensor<64xi32>, tensor<64xi64>, tensor<1000xi64>
}
