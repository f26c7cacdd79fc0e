// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-fuse-group-bodies))' | FileCheck %s

// Row groups whose values over the full space are gathers indexed by ids
// over the rows (BERT's embeddings): nothing but a gather's own result
// gives the hidden loop an extent. A gather fused into a reduction would
// stay a second result of it, dead or not, so an op is fused into a
// reduction only where tensors that stay (inputs, inits, and results whose
// extents come from such) give every loop of the reduction an extent.
// What is not fused stays an op of its own, which the row kernel evaluates
// where it is read; one over fewer loops than its readers (the position
// table, looked up over (position, hidden)) is recomputed over the loops of
// the reductions that read it, one copy for readers over the same loops.

#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#full = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @embeddings_norm
// The sum of the gathers is one op over (b, s, h) of its own (the gathers
// fused into it): nothing but its result gives h an extent.
// CHECK: %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x8xi64>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK-DAG: tensor.extract %{{.*}} : tensor<50x16xf32>
// CHECK-DAG: tensor.extract %{{.*}} : tensor<8x16xf32>
// CHECK: arith.addf
// Both sums read it and have one result each.
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: } -> tensor<2x8xf32>
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: } -> tensor<2x8xf32>
// The output, elementwise, fuses the gathers too (its own result gives
// every loop its extent).
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]], %[[SQ]] : tensor<2x8xi64>, tensor<2x8xf32>, tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield
func.func @embeddings_norm(%ids: tensor<2x8xi64>, %wt: tensor<50x16xf32>,
                           %pt: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %r = fusion.group "g0" "reduction" ins(%ids, %wt, %pt : tensor<2x8xi64>, tensor<50x16xf32>, tensor<8x16xf32>) {
  ^bb0(%a: tensor<2x8xi64>, %words: tensor<50x16xf32>, %positions: tensor<8x16xf32>):
    %zero = arith.constant 0.0 : f32
    %n = arith.constant 16.0 : f32
    %ef = tensor.empty() : tensor<2x8x16xf32>
    %ep = tensor.empty() : tensor<8x16xf32>
    %er = tensor.empty() : tensor<2x8xf32>
    %w = linalg.generic {indexing_maps = [#rows, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%a : tensor<2x8xi64>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%id: i64, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %c = linalg.index 2 : index
      %v = tensor.extract %words[%i, %c] : tensor<50x16xf32>
      linalg.yield %v : f32
    } -> tensor<2x8x16xf32>
    %p = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%ep : tensor<8x16xf32>) {
    ^bb0(%out: f32):
      %s = linalg.index 0 : index
      %c = linalg.index 1 : index
      %v = tensor.extract %positions[%s, %c] : tensor<8x16xf32>
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %e = linalg.generic {indexing_maps = [#full, #pos, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%w, %p : tensor<2x8x16xf32>, tensor<8x16xf32>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %v = arith.addf %x, %y : f32
      linalg.yield %v : f32
    } -> tensor<2x8x16xf32>
    %fill = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%out: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %sum = linalg.generic {indexing_maps = [#full, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%e : tensor<2x8x16xf32>) outs(%fill : tensor<2x8xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %v = arith.addf %x, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2x8xf32>
    %fill2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%o: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %sq = linalg.generic {indexing_maps = [#full, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%e : tensor<2x8x16xf32>) outs(%fill2 : tensor<2x8xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %x2 = arith.mulf %x, %x : f32
      %v = arith.addf %x2, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2x8xf32>
    %out = linalg.generic {indexing_maps = [#full, #rows, #rows, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%e, %sum, %sq : tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%x: f32, %s: f32, %q: f32, %o: f32):
      %m = arith.divf %s, %n : f32
      %v = arith.subf %x, %m : f32
      %vq = arith.mulf %v, %q : f32
      linalg.yield %vq : f32
    } -> tensor<2x8x16xf32>
    fusion.yield %out : tensor<2x8x16xf32>
  } -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#full = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Sums whose bodies multiply a word gather by a position gather read over
// (s, h) (an einsum of embeddings): neither gather fuses into them, and
// the position gather, over fewer loops than the row kernel runs, is
// recomputed over (b, s, h), one copy for both sums, its position loop 1
// and its column loop 2.
// CHECK-LABEL: func.func @gathered_dot
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x8xi64>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK: %[[POS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 2 : index
// CHECK-NEXT: tensor.extract %{{.*}}[%[[S]], %[[C]]] : tensor<8x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[W]], %[[POS]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[W]], %[[POS]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK-NOT: tensor<8x16xf32>)
// CHECK: fusion.yield
func.func @gathered_dot(%ids: tensor<2x8xi64>, %wt: tensor<50x16xf32>,
                        %pt: tensor<8x16xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %r:2 = fusion.group "g0" "reduction" ins(%ids, %wt, %pt : tensor<2x8xi64>, tensor<50x16xf32>, tensor<8x16xf32>) {
  ^bb0(%a: tensor<2x8xi64>, %words: tensor<50x16xf32>, %positions: tensor<8x16xf32>):
    %zero = arith.constant 0.0 : f32
    %ef = tensor.empty() : tensor<2x8x16xf32>
    %ep = tensor.empty() : tensor<8x16xf32>
    %er = tensor.empty() : tensor<2x8xf32>
    %w = linalg.generic {indexing_maps = [#rows, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%a : tensor<2x8xi64>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%id: i64, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %c = linalg.index 2 : index
      %v = tensor.extract %words[%i, %c] : tensor<50x16xf32>
      linalg.yield %v : f32
    } -> tensor<2x8x16xf32>
    %p = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%ep : tensor<8x16xf32>) {
    ^bb0(%out: f32):
      %s = linalg.index 0 : index
      %c = linalg.index 1 : index
      %v = tensor.extract %positions[%s, %c] : tensor<8x16xf32>
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %fill = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%o: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %dot = linalg.generic {indexing_maps = [#full, #pos, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%w, %p : tensor<2x8x16xf32>, tensor<8x16xf32>) outs(%fill : tensor<2x8xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %t = arith.mulf %x, %y : f32
      %v = arith.addf %t, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2x8xf32>
    %fill2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%o: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %max = linalg.generic {indexing_maps = [#full, #pos, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%w, %p : tensor<2x8x16xf32>, tensor<8x16xf32>) outs(%fill2 : tensor<2x8xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %t = arith.subf %x, %y : f32
      %v = arith.maximumf %t, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2x8xf32>
    fusion.yield %dot, %max : tensor<2x8xf32>, tensor<2x8xf32>
  } -> tensor<2x8xf32>, tensor<2x8xf32>
  return %r#0, %r#1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#full = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// An op over the rows themselves (a value per row from its indices) read
// by a sum of a gather through a broadcast stays as it is: the row kernel
// computes it once per row.
// CHECK-LABEL: func.func @row_value_stays
// CHECK: %[[ROW:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: linalg.index 1
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[ROW]] : tensor<2x8x16xf32>, tensor<2x8xf32>)
func.func @row_value_stays(%ids: tensor<2x8xi64>, %wt: tensor<50x16xf32>) -> tensor<2x8xf32> {
  %r = fusion.group "g0" "reduction" ins(%ids, %wt : tensor<2x8xi64>, tensor<50x16xf32>) {
  ^bb0(%a: tensor<2x8xi64>, %words: tensor<50x16xf32>):
    %zero = arith.constant 0.0 : f32
    %ef = tensor.empty() : tensor<2x8x16xf32>
    %er = tensor.empty() : tensor<2x8xf32>
    %w = linalg.generic {indexing_maps = [#rows, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%a : tensor<2x8xi64>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%id: i64, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %c = linalg.index 2 : index
      %v = tensor.extract %words[%i, %c] : tensor<50x16xf32>
      linalg.yield %v : f32
    } -> tensor<2x8x16xf32>
    %scale = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%out: f32):
      %s = linalg.index 1 : index
      %i = arith.index_cast %s : index to i32
      %v = arith.sitofp %i : i32 to f32
      linalg.yield %v : f32
    } -> tensor<2x8xf32>
    %fill = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%out: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %sum = linalg.generic {indexing_maps = [#full, #rows, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%w, %scale : tensor<2x8x16xf32>, tensor<2x8xf32>) outs(%fill : tensor<2x8xf32>) {
    ^bb0(%v: f32, %s: f32, %acc: f32):
      %t = arith.mulf %v, %s : f32
      %u = arith.addf %t, %acc : f32
      linalg.yield %u : f32
    } -> tensor<2x8xf32>
    fusion.yield %sum : tensor<2x8xf32>
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#full = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A gather over fewer loops that the group also yields stays: its result
// leaves the group as it is.
// CHECK-LABEL: func.func @yielded_gather_stays
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[P]] : tensor<2x8x16xf32>, tensor<8x16xf32>)
// CHECK: fusion.yield %{{.*}}, %[[P]] : tensor<2x8xf32>, tensor<8x16xf32>
func.func @yielded_gather_stays(%ids: tensor<2x8xi64>, %wt: tensor<50x16xf32>, %pt: tensor<8x16xf32>) -> (tensor<2x8xf32>, tensor<8x16xf32>) {
  %r:2 = fusion.group "g0" "reduction" ins(%ids, %wt, %pt : tensor<2x8xi64>, tensor<50x16xf32>, tensor<8x16xf32>) {
  ^bb0(%a: tensor<2x8xi64>, %words: tensor<50x16xf32>, %positions: tensor<8x16xf32>):
    %zero = arith.constant 0.0 : f32
    %ef = tensor.empty() : tensor<2x8x16xf32>
    %ep = tensor.empty() : tensor<8x16xf32>
    %er = tensor.empty() : tensor<2x8xf32>
    %w = linalg.generic {indexing_maps = [#rows, #full], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%a : tensor<2x8xi64>) outs(%ef : tensor<2x8x16xf32>) {
    ^bb0(%id: i64, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %c = linalg.index 2 : index
      %v = tensor.extract %words[%i, %c] : tensor<50x16xf32>
      linalg.yield %v : f32
    } -> tensor<2x8x16xf32>
    %p = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%ep : tensor<8x16xf32>) {
    ^bb0(%out: f32):
      %s = linalg.index 0 : index
      %c = linalg.index 1 : index
      %v = tensor.extract %positions[%s, %c] : tensor<8x16xf32>
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    %fill = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
        outs(%er : tensor<2x8xf32>) {
    ^bb0(%out: f32):
      linalg.yield %zero : f32
    } -> tensor<2x8xf32>
    %sum = linalg.generic {indexing_maps = [#full, #pos, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%w, %p : tensor<2x8x16xf32>, tensor<8x16xf32>) outs(%fill : tensor<2x8xf32>) {
    ^bb0(%v: f32, %q: f32, %acc: f32):
      %t = arith.addf %v, %q : f32
      %u = arith.addf %t, %acc : f32
      linalg.yield %u : f32
    } -> tensor<2x8xf32>
    fusion.yield %sum, %p : tensor<2x8xf32>, tensor<8x16xf32>
  } -> tensor<2x8xf32>, tensor<8x16xf32>
  return %r#0, %r#1 : tensor<2x8xf32>, tensor<8x16xf32>
}

// -----

#v1 = affine_map<(d0) -> (d0)>

// A member's result gathered inside another member's body (not read as an
// operand), over the same loops as the group's result, is not fused in one
// step (the fused op would read its own result): the producer is
// recomputed at the gathered index instead, and the gathered tensor is the
// group's input.
// CHECK-LABEL: func.func @gathered_member
// CHECK: ^bb0(%[[A:[^:]*]]: tensor<4xf32>, %[[I:[^:]*]]: tensor<4xi64>):
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[I]] : tensor<4xi64>)
// CHECK: %[[K:.*]] = arith.index_cast
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[A]][%[[K]]] : tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: arith.addf %[[E]], %[[E]] : f32
// CHECK-NOT: linalg.generic
// CHECK: fusion.yield %[[G]] : tensor<4xf32>
func.func @gathered_member(%x: tensor<4xf32>, %ids: tensor<4xi64>) -> tensor<4xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x, %ids : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: tensor<4xf32>, %i: tensor<4xi64>):
    %e4x = tensor.empty() : tensor<4xf32>
    %e4 = tensor.empty() : tensor<4xf32>
    %t = linalg.generic {indexing_maps = [#v1, #v1], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e4x : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    %g = linalg.generic {indexing_maps = [#v1, #v1], iterator_types = ["parallel"]}
        ins(%i : tensor<4xi64>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%id: i64, %out: f32):
      %k = arith.index_cast %id : i64 to index
      %v = tensor.extract %t[%k] : tensor<4xf32>
      %w = arith.addf %v, %v : f32
      linalg.yield %w : f32
    } -> tensor<4xf32>
    fusion.yield %g : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
