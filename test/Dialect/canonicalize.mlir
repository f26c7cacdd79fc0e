// RUN: fuse-opt %s -canonicalize | FileCheck %s

// Canonicalization of fusion.group: each distinct tensor is read once,
// unused inputs and results disappear, results that merely yield an input
// are forwarded to that input, and a group nobody reads is removed.

#id = affine_map<(d0) -> (d0)>

// Duplicate inputs are merged into the first occurrence.
// CHECK-LABEL: func.func @duplicate_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK: fusion.group "g0" "elementwise" ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32>):
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]], %[[A]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @duplicate_inputs(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%i0: f32, %i1: f32, %i2: f32, %out: f32):
      %s = arith.addf %i0, %i1 : f32
      %m = arith.mulf %s, %i2 : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    fusion.yield %0 : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Inputs whose block argument is unused are dropped, wherever they are.
// CHECK-LABEL: func.func @unused_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf16>, %[[Z:[^:]*]]: tensor<4xi1>)
// CHECK: fusion.group "g0" "elementwise" ins(%[[Y]] : tensor<4xf16>) {
// CHECK-NEXT: ^bb0(%[[B:[^:]*]]: tensor<4xf16>):
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[B]] : tensor<4xf16>)
func.func @unused_inputs(%x: tensor<4xf32>, %y: tensor<4xf16>, %z: tensor<4xi1>) -> tensor<4xf16> {
  %r = fusion.group "g0" "elementwise" ins(%x, %y, %z : tensor<4xf32>, tensor<4xf16>, tensor<4xi1>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf16>, %c: tensor<4xi1>):
    %e = tensor.empty() : tensor<4xf16>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%b : tensor<4xf16>) outs(%e : tensor<4xf16>) {
    ^bb0(%i0: f16, %out: f16):
      %n = arith.negf %i0 : f16
      linalg.yield %n : f16
    } -> tensor<4xf16>
    fusion.yield %0 : tensor<4xf16>
  } -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// A result that yields a block argument is replaced by the group's input;
// a result nobody uses is removed; the other results, the name, decisions
// and strategy survive. The input read only by the forwarded result goes too.
// CHECK-LABEL: func.func @forward_and_drop_results
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = fusion.group "k" "elementwise" ins(%[[X]] : tensor<4xf32>)
// CHECK-SAME: attributes {decisions = ["kept"], strategy = #fusion.strategy<threads = 64, vector = 4, unroll = 1, blocks = 1>} {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<4xf32>):
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<4xf32>)
// CHECK: fusion.yield %[[G]] : tensor<4xf32>
// CHECK-NEXT: } -> tensor<4xf32>{{$}}
// CHECK-NEXT: return %[[Y]], %[[R]], %[[X]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @forward_and_drop_results(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:4 = fusion.group "k" "elementwise" ins(%x, %y : tensor<4xf32>, tensor<4xf32>)
      attributes {decisions = ["kept"], strategy = #fusion.strategy<threads = 64, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%i0: f32, %out: f32):
      %n = arith.negf %i0 : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    fusion.yield %b, %0, %0, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %r#0, %r#2, %r#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A group that only forwards its inputs disappears entirely.
// CHECK-LABEL: func.func @only_forwards
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK-NOT: fusion.group
// CHECK: return %[[X]], %[[X]] : tensor<4xf32>, tensor<4xf32>
func.func @only_forwards(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// A group whose results are all unused is dead.
// CHECK-LABEL: func.func @dead_group
// CHECK-NOT: fusion.group
// CHECK-NOT: linalg.generic
// CHECK: return{{$}}
func.func @dead_group(%x: tensor<4xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%i0: f32, %out: f32):
      %n = arith.negf %i0 : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    fusion.yield %0 : tensor<4xf32>
  } -> tensor<4xf32>
  return
}

// A canonical group is left alone.
// CHECK-LABEL: func.func @already_canonical
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK: %[[R:.*]]:2 = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<4xf32>) {
// CHECK: fusion.yield %[[G:.*]], %[[G]] : tensor<4xf32>, tensor<4xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @already_canonical(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%i0: f32, %out: f32):
      %n = arith.negf %i0 : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    fusion.yield %0, %0 : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// A guard whose condition is true everywhere folds to its value; one whose
// condition may fail stays.
// CHECK-LABEL: func.func @guards
// CHECK-SAME: (%[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<4xf32>, %[[OK:[^:]*]]: i1)
// CHECK: %[[G:.*]] = fusion.guard %[[X]] if %[[OK]]
// CHECK-NOT: fusion.guard
// CHECK: return %[[X]], %[[V]], %[[G]]
func.func @guards(%x: f32, %v: vector<4xf32>, %ok: i1) -> (f32, vector<4xf32>, f32) {
  %true = arith.constant true
  %trues = arith.constant dense<true> : vector<4xi1>
  %a = fusion.guard %x if %true, "m" : f32, i1
  %b = fusion.guard %v if %trues, "m" : vector<4xf32>, vector<4xi1>
  %c = fusion.guard %x if %ok, "m" : f32, i1
  return %a, %b, %c : f32, vector<4xf32>, f32
}
