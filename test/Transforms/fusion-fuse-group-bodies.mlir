// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-fuse-group-bodies))' | FileCheck %s

// Inside each fusion.group, every producer is fused into its consumers and
// independent ops over the same loops are merged: one linalg.generic per
// group, whose results are everything the group yields.

#id = affine_map<(d0) -> (d0)>

// CHECK-DAG: #[[$ID2:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>

// A chain of three becomes one generic computing exp, add, log in order.
// CHECK-LABEL: func.func @chain
// CHECK: fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<1024xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<1024xf32>):
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<1024xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %{{.*}} : f32
// CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[L]] : f32
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]] : tensor<1024xf32>
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf32>) {
  ^bb0(%a: tensor<1024xf32>):
    %cst = arith.constant 1.000000e+00 : f32
    %e = tensor.empty() : tensor<1024xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%0 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %cst : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%1 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.log %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    fusion.yield %2 : tensor<1024xf32>
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// An intermediate the group yields stays a result of the merged generic.
// CHECK-LABEL: func.func @yielded_intermediate
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: math.log
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: } -> (tensor<1024xf32>, tensor<1024xf32>)
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]]#{{[01]}}, %[[G]]#{{[01]}} : tensor<1024xf32>, tensor<1024xf32>
func.func @yielded_intermediate(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf32>) {
  ^bb0(%a: tensor<1024xf32>):
    %e = tensor.empty() : tensor<1024xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%0 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.log %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    fusion.yield %0, %1 : tensor<1024xf32>, tensor<1024xf32>
  } -> tensor<1024xf32>, tensor<1024xf32>
  return %r#0, %r#1 : tensor<1024xf32>, tensor<1024xf32>
}

// A producer with two consumers: after producer fusion the consumers are
// siblings, merged into one generic with all three results.
// CHECK-LABEL: func.func @siblings
// CHECK: %[[G:.*]]:3 = linalg.generic
// CHECK-DAG: math.exp
// CHECK-DAG: arith.addf
// CHECK-DAG: arith.mulf
// CHECK: } -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>)
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]]#0, %[[G]]#1, %[[G]]#2 :
func.func @siblings(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %r:3 = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf32>) {
  ^bb0(%a: tensor<1024xf32>):
    %e = tensor.empty() : tensor<1024xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%0 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%0 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.mulf %in, %in : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    fusion.yield %0, %1, %2 : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
  } -> tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
  return %r#0, %r#1, %r#2 : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

// Two unrelated ops over the same loops (horizontal fusion): one generic
// reading both inputs, results in the order of the ops.
// CHECK-LABEL: func.func @independent
// CHECK: ^bb0(%[[A:[^:]*]]: tensor<64xf32>, %[[B:[^:]*]]: tensor<64xf16>):
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<64xf32>, tensor<64xf16>)
// CHECK-NEXT: ^bb0(%[[I0:[^:]*]]: f32, %[[I1:[^:]*]]: f16, %{{.*}}: f32, %{{.*}}: f16):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[I0]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[I1]] : f16
// CHECK-NEXT: linalg.yield %[[E]], %[[N]] : f32, f16
// CHECK: fusion.yield %[[G]]#0, %[[G]]#1 : tensor<64xf32>, tensor<64xf16>
func.func @independent(%x: tensor<64xf32>, %y: tensor<64xf16>) -> (tensor<64xf32>, tensor<64xf16>) {
  %r:2 = fusion.group "g0" "elementwise" ins(%x, %y : tensor<64xf32>, tensor<64xf16>) {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf16>):
    %e0 = tensor.empty() : tensor<64xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<64xf32>) outs(%e0 : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %e1 = tensor.empty() : tensor<64xf16>
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%b : tensor<64xf16>) outs(%e1 : tensor<64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %v = arith.negf %in : f16
      linalg.yield %v : f16
    } -> tensor<64xf16>
    fusion.yield %0, %1 : tensor<64xf32>, tensor<64xf16>
  } -> tensor<64xf32>, tensor<64xf16>
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf16>
}

// A broadcast operand keeps its indexing map in the fused op.
// CHECK-LABEL: func.func @broadcast_bias
// CHECK: ^bb0(%[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>):
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$COL]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield
func.func @broadcast_bias(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x, %bias : tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %e = tensor.empty() : tensor<4x8xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %bi: f32, %out: f32):
      %v = arith.addf %in, %bi : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.tanh %in : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    fusion.yield %1 : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A named op cannot be part of an elementwise kernel.
func.func @matmul_inside(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = fusion.group "mm" "elementwise" ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    // expected-error @+1 {{fusion-fuse-group-bodies: 'linalg.matmul' in group 'mm' cannot be part of an elementwise kernel}}
    %m = linalg.matmul ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    fusion.yield %m : tensor<4x4xf32>
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Independent ops over different loops stay two generics: a multi-tensor
// group (fusion-form-groups), one launch with blocks for each.
// CHECK-LABEL: func.func @two_shapes
// CHECK: fusion.group "pair" "elementwise"
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>)
// CHECK: math.exp
// CHECK: fusion.yield
#id = affine_map<(d0) -> (d0)>
func.func @two_shapes(%a: tensor<4xf32>, %b: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %r:2 = fusion.group "pair" "elementwise" ins(%a, %b : tensor<4xf32>, tensor<8xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<8xf32>):
    %e0 = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<8xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%y : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    fusion.yield %0, %1 : tensor<4xf32>, tensor<8xf32>
  } -> tensor<4xf32>, tensor<8xf32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<8xf32>
}

// -----

// But not an op with reduction loops beside them: an elementwise kernel
// has none.
#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @reduction_beside(%a: tensor<4xf32>, %b: tensor<8xf32>) -> (tensor<4xf32>, tensor<f32>) {
  // expected-error @+1 {{fusion-fuse-group-bodies: group 'pair' still has 2 linalg.generic ops after fusion (expected 1, or independent ones over different loops)}}
  %r:2 = fusion.group "pair" "elementwise" ins(%a, %b : tensor<4xf32>, tensor<8xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<8xf32>):
    %e0 = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<f32>
    %1 = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
        ins(%y : tensor<8xf32>) outs(%e1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<f32>
    fusion.yield %0, %1 : tensor<4xf32>, tensor<f32>
  } -> tensor<4xf32>, tensor<f32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<f32>
}

// -----

// A group left with no generic (folding removed all of its work, such as
// min(x, +inf)) only forwards its input: accepted, it needs no kernel.
// CHECK-LABEL: func.func @no_generic
// CHECK: fusion.group "empty"
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT: fusion.yield %[[X]]
func.func @no_generic(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = fusion.group "empty" "elementwise" ins(%a : tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    fusion.yield %x : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A row-wise group whose reduction folds away (the row minimum only chooses
// between two zeros) is an elementwise kernel from here on: it is marked so,
// and fusion-select-strategy gives it a strategy.
#row = affine_map<(d0, d1) -> (d0, d1)>
#rowred = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @reduction_folded_away
// CHECK: fusion.group "rows" "elementwise"
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-NOT: reduction
// CHECK: fusion.yield
func.func @reduction_folded_away(%a: tensor<16x64xf32>) -> tensor<16xi64> {
  %r = fusion.group "rows" "reduction" ins(%a : tensor<16x64xf32>) {
  ^bb0(%x: tensor<16x64xf32>):
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0 : i64
    %e = tensor.empty() : tensor<16xf32>
    %ei = tensor.empty() : tensor<16xi64>
    %init = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%inf : f32) outs(%e : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16xf32>
    %zeros = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : i64) outs(%ei : tensor<16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<16xi64>
    %min = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.minimumf %in, %out : f32
      linalg.yield %m : f32
    } -> tensor<16xf32>
    %pick = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%min, %zeros : tensor<16xf32>, tensor<16xi64>) outs(%ei : tensor<16xi64>) {
    ^bb0(%m: f32, %z: i64, %out: i64):
      %neg = arith.cmpf olt, %m, %inf : f32
      %s = arith.select %neg, %zero, %z : i64
      linalg.yield %s : i64
    } -> tensor<16xi64>
    fusion.yield %pick : tensor<16xi64>
  } -> tensor<16xi64>
  return %r : tensor<16xi64>
}

// A row-wise group that still reduces keeps its kind.
// CHECK-LABEL: func.func @reduction_kept
// CHECK: fusion.group "rows" "reduction"
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @reduction_kept(%a: tensor<16x64xf32>) -> tensor<16xi64> {
  %r = fusion.group "rows" "reduction" ins(%a : tensor<16x64xf32>) {
  ^bb0(%x: tensor<16x64xf32>):
    %inf = arith.constant 0x7F800000 : f32
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %e = tensor.empty() : tensor<16xf32>
    %ei = tensor.empty() : tensor<16xi64>
    %init = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%inf : f32) outs(%e : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16xf32>
    %min = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.minimumf %in, %out : f32
      linalg.yield %m : f32
    } -> tensor<16xf32>
    %pick = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%min : tensor<16xf32>) outs(%ei : tensor<16xi64>) {
    ^bb0(%m: f32, %out: i64):
      %neg = arith.cmpf olt, %m, %inf : f32
      %s = arith.select %neg, %zero, %one : i64
      linalg.yield %s : i64
    } -> tensor<16xi64>
    fusion.yield %pick : tensor<16xi64>
  } -> tensor<16xi64>
  return %r : tensor<16xi64>
}

// -----

// A chain whose every value is read twice by the next step (x * exp(x),
// eight times): each value is computed once in the fused body, not once per
// path to it (a body that doubled at each step took 17 s to compile at ten
// stacked SiLUs written out, 116 s at eleven).
// CHECK-LABEL: func.func @reread_chain
// CHECK: linalg.generic
// CHECK-COUNT-8: math.exp
// CHECK-NOT: math.exp
// CHECK: fusion.yield
#id = affine_map<(d0) -> (d0)>
func.func @reread_chain(%a: tensor<64xf32>) -> tensor<64xf32> {
  %r = fusion.group "chain" "elementwise" ins(%a : tensor<64xf32>) {
  ^bb0(%x: tensor<64xf32>):
    %e = tensor.empty() : tensor<64xf32>
    %s0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%x, %s0 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m0, %s1 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m1 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m1, %s2 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m2 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m2, %s3 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m3 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m3, %s4 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m4 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m4, %s5 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m5 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m5, %s6 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %s7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%m6 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %m7 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m6, %s7 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %v = arith.mulf %in, %s : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    fusion.yield %m7 : tensor<64xf32>
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Members over one space that pass each other values at the point they were
// computed are fused in one step: each body once, in program order (exp
// read by two members is computed once), and each outside operand read
// once per map (the bias, read by two members through one map).
// CHECK-LABEL: func.func @diamond
// CHECK: ^bb0(%[[X:[^:]*]]: tensor<8x16xf32>, %[[B:[^:]*]]: tensor<16xf32>):
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<8x16xf32>, tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %[[BIAS:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[E]], %[[BIAS]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[E]], %[[BIAS]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[P]], %[[Q]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]] : tensor<8x16xf32>
func.func @diamond(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<8x16xf32>, %bias: tensor<16xf32>):
    %e = tensor.empty() : tensor<8x16xf32>
    %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%0, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%in: f32, %c: f32, %out: f32):
      %v = arith.addf %in, %c : f32
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%0, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%in: f32, %c: f32, %out: f32):
      %v = arith.mulf %in, %c : f32
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %3 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%1, %2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%p: f32, %q: f32, %out: f32):
      %v = arith.subf %p, %q : f32
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    fusion.yield %3 : tensor<8x16xf32>
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

#id2b = affine_map<(d0, d1) -> (d0, d1)>
#colb = affine_map<(d0, d1) -> (d1)>
#rowb = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>

// A member over fewer loops (a generic over 8 positions, computing each
// from its linalg.index) is evaluated at each point it is read at: read
// along the columns and along the rows of a square space, its body appears
// twice (first at the later reader's view), its index once the fused op's
// d0, once its d1.
// CHECK-LABEL: func.func @lower_rank_views
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<8x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C0:.*]] = arith.index_cast %[[I0]] : index to i32
// CHECK-NEXT: %[[F0:.*]] = arith.sitofp %[[C0]] : i32 to f32
// CHECK-NEXT: %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C1:.*]] = arith.index_cast %[[I1]] : index to i32
// CHECK-NEXT: %[[F1:.*]] = arith.sitofp %[[C1]] : i32 to f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[IN]], %[[F1]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[F0]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]] : tensor<8x8xf32>
func.func @lower_rank_views(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<8x8xf32>) {
  ^bb0(%a: tensor<8x8xf32>):
    %e1 = tensor.empty() : tensor<8xf32>
    %e2 = tensor.empty() : tensor<8x8xf32>
    %pos = linalg.generic {indexing_maps = [#vec], iterator_types = ["parallel"]}
        outs(%e1 : tensor<8xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %c = arith.index_cast %i : index to i32
      %f = arith.sitofp %c : i32 to f32
      linalg.yield %f : f32
    } -> tensor<8xf32>
    %0 = linalg.generic {indexing_maps = [#id2b, #colb, #id2b], iterator_types = ["parallel", "parallel"]}
        ins(%a, %pos : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %p: f32, %out: f32):
      %v = arith.addf %in, %p : f32
      linalg.yield %v : f32
    } -> tensor<8x8xf32>
    %1 = linalg.generic {indexing_maps = [#id2b, #rowb, #id2b], iterator_types = ["parallel", "parallel"]}
        ins(%0, %pos : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %p: f32, %out: f32):
      %v = arith.mulf %in, %p : f32
      linalg.yield %v : f32
    } -> tensor<8x8xf32>
    fusion.yield %1 : tensor<8x8xf32>
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
