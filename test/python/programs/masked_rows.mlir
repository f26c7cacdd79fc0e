// Boolean row reductions: "all" (arith.andi) and "any" (arith.ori) over the
// rows of x, read by a select and returned as a boolean (torch's safe
// softmax asks whether every score of a row is masked). With standard normal
// inputs about half the rows hold a value below -3 (`all` false there) and
// about half a value above 3.2 (`any` true there).
#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @masked_rows(%x: tensor<64x1024xf32>) -> (tensor<64x1024xf32>, tensor<64xi1>) {
  %lo = arith.constant -3.0 : f32
  %hi = arith.constant 3.2 : f32
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  %eb = tensor.empty() : tensor<64x1024xi1>
  %above = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x1024xf32>) outs(%eb : tensor<64x1024xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf ogt, %in, %lo : f32
    linalg.yield %c : i1
  } -> tensor<64x1024xi1>
  %er = tensor.empty() : tensor<64xi1>
  %t0 = linalg.fill ins(%true : i1) outs(%er : tensor<64xi1>) -> tensor<64xi1>
  %all = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%above : tensor<64x1024xi1>) outs(%t0 : tensor<64xi1>) {
  ^bb0(%in: i1, %acc: i1):
    %a = arith.andi %in, %acc : i1
    linalg.yield %a : i1
  } -> tensor<64xi1>
  %f0 = linalg.fill ins(%false : i1) outs(%er : tensor<64xi1>) -> tensor<64xi1>
  %any = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%f0 : tensor<64xi1>) {
  ^bb0(%in: f32, %acc: i1):
    %n = arith.cmpf ogt, %in, %hi : f32
    %o = arith.ori %n, %acc : i1
    linalg.yield %o : i1
  } -> tensor<64xi1>
  %ef = tensor.empty() : tensor<64x1024xf32>
  %y = linalg.generic {indexing_maps = [#row, #red, #row], iterator_types = ["parallel", "parallel"]} ins(%x, %all : tensor<64x1024xf32>, tensor<64xi1>) outs(%ef : tensor<64x1024xf32>) {
  ^bb0(%in: f32, %a: i1, %out: f32):
    %s = arith.select %a, %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<64x1024xf32>
  return %y, %any : tensor<64x1024xf32>, tensor<64xi1>
}
