// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s

// A row group that grows one op at a time: each op joining a group of a
// row reduction and the ops placed beside it is checked against the group's
// rows and the values it passes to and from the members, without walking
// the group again (RowSpaceChecks in fusion-form-groups). These cases grow
// a group of two or three ops by one more, which must stay out where the
// merged group would not run over one row space (the first two of each
// group are checked whole).

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#scalar = affine_map<(d0) -> ()>

// Positive: a row sum, its epilogue over the full space, a second epilogue
// and a second row sum of the first epilogue join one group, one op at a
// time.
// CHECK-LABEL: func.func @grows
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]}
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]}
// CHECK: fusion.yield
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @grows(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.subf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %q = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %c, %q : tensor<8x16xf32>, tensor<8xf32>
}

// Negative: the group {r = rowsum(x), c = x / r} over 8 x 8 grows by an op
// that reads c through (d0, d1) -> (d1, d0): its loops run over the rows x
// columns, but it would read c at the transposed point, which another
// block's row computes. It starts a group of its own.
// CHECK-LABEL: func.func @square_transposed
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x8xf32>)
// CHECK: %[[G0:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x8xf32>)
// CHECK: arith.divf
// CHECK-NOT: math.exp
// CHECK: fusion.yield
// CHECK: fusion.group "g1" "elementwise" ins(%[[G0]] : tensor<8x8xf32>) attributes {decisions = ["operand #0 stays unfused: the merged group would not run over one row space"]}
// CHECK: math.exp
func.func @square_transposed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.divf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %d = linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

// Negative: the group {r = rowsum(x), c = x - r} over 8 rows of 16 grows by
// an op over 8 x 32 that reads r along its rows: it runs over neither the
// rows nor the rows x columns, and is not inlined into readers inside the
// group (it is returned). It starts a group of its own.
// CHECK-LABEL: func.func @other_columns
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x32xf32>)
// CHECK: %[[G0:.*]]:2 = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>)
// CHECK: arith.subf
// CHECK-NOT: arith.mulf
// CHECK: fusion.yield
// CHECK: fusion.group "g1" "elementwise" ins(%[[Y]], %[[G0]]#0 : tensor<8x32xf32>, tensor<8xf32>) attributes {decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]}
// CHECK: arith.mulf
func.func @other_columns(%x: tensor<8x16xf32>, %y: tensor<8x32xf32>)
    -> (tensor<8x16xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.subf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %r : tensor<8x32xf32>, tensor<8xf32>) outs(%e3 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x32xf32>
  return %c, %d : tensor<8x16xf32>, tensor<8x32xf32>
}
