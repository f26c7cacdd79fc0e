// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-hoist-reshapes))' \
// RUN:   | FileCheck %s

// fusion-hoist-reshapes: a tensor.expand_shape / tensor.collapse_shape of
// the only use (or of every use, all the same reshape) of an elementwise
// linalg.generic whose operands all use the
// identity map (and whose body does not read linalg.index) becomes the same
// generic over the reshaped space, on reshaped inputs. Repeated, reshapes
// reach the function's arguments, and the elementwise ops on both sides of a
// view meet. Producers with broadcasts, several uses or linalg.index keep
// their reshape, and reshapes that only add or drop unit dimensions are left
// to linalg-fold-unit-extent-dims.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// tanh(exp(x).view(24).view(2, 12)): both reshapes move above exp, onto the
// argument, and exp and tanh both run over [2, 12], exp directly feeding
// tanh.
// CHECK-LABEL: func.func @view_between_elementwise
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x6xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK-NEXT: %[[V:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [2, 12] : tensor<24xf32> into tensor<2x12xf32>
// CHECK-NOT: tensor.{{(collapse|expand)}}_shape
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[MAP:.*]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[V]] : tensor<2x12xf32>) outs(%{{.*}} : tensor<2x12xf32>)
// CHECK: math.exp
// CHECK: } -> tensor<2x12xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[E]] : tensor<2x12xf32>) outs(%{{.*}} : tensor<2x12xf32>)
// CHECK: math.tanh
// CHECK: } -> tensor<2x12xf32>
// CHECK-NEXT: return %[[T]] : tensor<2x12xf32>
func.func @view_between_elementwise(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %r = tensor.expand_shape %c [[0, 1]] output_shape [2, 12] : tensor<24xf32> into tensor<2x12xf32>
  %e2 = tensor.empty() : tensor<2x12xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<2x12xf32>) outs(%e2 : tensor<2x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<2x12xf32>
  return %t : tensor<2x12xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Through a chain of two elementwise producers with two inputs each (one of
// another element type): every input is reshaped with its own element type
// and both generics run over [2, 4]; the producers' attributes are kept.
// CHECK-LABEL: func.func @chain_two_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[Y:[^:]*]]: tensor<8xf16>, %[[Z:[^:]*]]: tensor<8xf32>) -> tensor<2x4xf32>
// CHECK-DAG: %[[XV:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK-DAG: %[[YV:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf16> into tensor<2x4xf16>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[XV]], %[[YV]] : tensor<2x4xf32>, tensor<2x4xf16>) outs(%{{.*}} : tensor<2x4xf32>) attrs = {tag = "first"}
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: } -> tensor<2x4xf32>
// CHECK-NOT: tensor.expand_shape %[[A]]
// CHECK: %[[ZV:.*]] = tensor.expand_shape %[[Z]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK-NOT: tensor.expand_shape %[[A]]
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[ZV]] : tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>) attrs = {tag = "second"}
// CHECK: arith.mulf
// CHECK: } -> tensor<2x4xf32>
// CHECK-NEXT: return %[[B]] : tensor<2x4xf32>
func.func @chain_two_inputs(%x: tensor<8xf32>, %y: tensor<8xf16>, %z: tensor<8xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf16>) outs(%e : tensor<8xf32>) attrs = {tag = "first"} {
  ^bb0(%in: f32, %in2: f16, %out: f32):
    %w = arith.extf %in2 : f16 to f32
    %v = arith.addf %in, %w : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%a, %z : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {tag = "second"} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.mulf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %b [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A collapse of a constant's consumer: the reshape lands on the constant,
// where it folds away (a reshaped constant is a constant).
// CHECK-LABEL: func.func @onto_constant
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-DAG: %[[CST:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>
// CHECK-DAG: %[[XV:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[XV]], %[[CST]] : tensor<8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[G]] : tensor<8xf32>
func.func @onto_constant(%x: tensor<2x4xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %v = arith.mulf %in, %k : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  %r = tensor.collapse_shape %s [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

// Negative: the producer broadcasts its input ((d0, d1) -> (d1)): it keeps
// its reshape, and still runs over [4, 6].
// CHECK-LABEL: func.func @broadcast_producer
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<6xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: } -> tensor<4x6xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK-NEXT: return %[[R]]
func.func @broadcast_producer(%x: tensor<6xf32>) -> tensor<24xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  return %c : tensor<24xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Negative: the producer transposes its input: it keeps its reshape.
// CHECK-LABEL: func.func @transpose_producer
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<6x4xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: } -> tensor<4x6xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose_producer(%x: tensor<6x4xf32>) -> tensor<24xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  return %c : tensor<24xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Negative: the producer's result has a second use (it is also returned):
// the reshape stays below it.
// CHECK-LABEL: func.func @two_uses
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: tensor.expand_shape %[[X]]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: } -> tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[G]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK-NEXT: return %[[R]], %[[G]] : tensor<2x4xf32>, tensor<8xf32>
func.func @two_uses(%x: tensor<8xf32>) -> (tensor<2x4xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r, %s : tensor<2x4xf32>, tensor<8xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// The producer's result is read through two copies of one reshape (what
// expanding each of its readers leaves): both become the hoisted generic.
// The readers' inits, reshapes of a tensor.empty, become empty tensors of
// the new shape (no operand anything reads).
// CHECK-LABEL: func.func @same_reshape_twice
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<2x4xf32>)
// CHECK: math.exp
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%[[G]], %[[G]] : tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @same_reshape_twice(%x: tensor<8xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %a = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %b = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %o = tensor.expand_shape %e [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x4xf32>, tensor<2x4xf32>) outs(%o : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %v = arith.mulf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// The producer's body reads linalg.index (its value is the position in the
// 1-D space): it runs over the reshaped space all the same, its old index
// the linearized new ones (i * 4 + j, in arith: upstream's expansion writes
// an affine.apply, which the pass expands).
// CHECK-LABEL: func.func @index_producer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-DAG: %[[J:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[I4:.*]] = arith.muli %[[I]], %[[C4]]
// CHECK: %[[P:.*]] = arith.addi %[[J]], %[[I4]] : index
// CHECK: arith.index_cast %[[P]] : index to i32
// CHECK-NOT: affine.apply
// CHECK: } -> tensor<2x4xf32>
// CHECK-NEXT: return %[[G]]
func.func @index_producer(%x: tensor<8xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %v = arith.addf %in, %f : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Negative: the reshape only adds a unit dimension (tensor<8xf32> to
// tensor<8x1xf32>): it is not moved (linalg-fold-unit-extent-dims removes
// unit dimensions; moving it would bring them back).
// CHECK-LABEL: func.func @unit_dim_only
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: tensor.expand_shape %[[X]]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: } -> tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[G]] {{\[}}[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @unit_dim_only(%x: tensor<8xf32>) -> tensor<8x1xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  return %r : tensor<8x1xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A collapse that only drops a unit dimension is not hoisted, but the unit
// loop is dropped (linalg-fold-unit-extent-dims' patterns run here too,
// for the unit loops expansion gives a generic): the generic reads x
// without its unit dimension.
// CHECK-LABEL: func.func @unit_dim_collapse
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x8xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: } -> tensor<8xf32>
// CHECK-NEXT: return %[[G]]
func.func @unit_dim_collapse(%x: tensor<1x8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<1x8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1x8xf32>
  %r = tensor.collapse_shape %s [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A producer whose body reads its outs operand (it updates %acc) is expanded
// with its init (upstream expansion): %acc is reshaped too, never dropped.
// CHECK-LABEL: func.func @reads_its_output
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[ACC:[^:]*]]: tensor<8xf32>)
// CHECK-DAG: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK-DAG: %[[AE:.*]] = tensor.expand_shape %[[ACC]] {{\[}}[0, 1]] output_shape [2, 4]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[XE]] : tensor<2x4xf32>) outs(%[[AE]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: return %[[G]]
func.func @reads_its_output(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<2x4xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Negative: an input of dynamic shape cannot be reshaped to the static
// result shape: the reshape stays.
// CHECK-LABEL: func.func @dynamic_input
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf32>)
// CHECK: tensor.expand_shape %[[G]]
func.func @dynamic_input(%x: tensor<?xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// An expand_shape of a contraction's epilogue with a broadcast operand moves
// above both (upstream expansion): the matmul runs over [2, 16, 64] reading
// an expanded view of %a, the bias keeps its own shape (only d2 reads it),
// and the residual add that follows meets the epilogue with no reshape in
// between.
// CHECK-LABEL: func.func @expand_contraction_epilogue
// CHECK-SAME: (%[[A:[^:]*]]: tensor<32x8xf32>, %[[W:[^:]*]]: tensor<8x64xf32>, %[[B:[^:]*]]: tensor<64xf32>, %[[R:[^:]*]]: tensor<2x16x64xf32>)
// CHECK: %[[AE:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [2, 16, 8]
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[AE]], %[[W]] : tensor<2x16x8xf32>, tensor<8x64xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[B]] : tensor<2x16x64xf32>, tensor<64xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[R]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>)
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#n2 = affine_map<(d0, d1) -> (d1)>
#id2b = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @expand_contraction_epilogue(%a: tensor<32x8xf32>, %w: tensor<8x64xf32>, %b: tensor<64xf32>, %r: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<32x8xf32>, tensor<8x64xf32>) outs(%f : tensor<32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>
  %eb = linalg.generic {indexing_maps = [#id2b, #n2, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<32x64xf32>, tensor<64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>
  %v = tensor.expand_shape %eb [[0, 1], [2]] output_shape [2, 16, 64] : tensor<32x64xf32> into tensor<2x16x64xf32>
  %e3 = tensor.empty() : tensor<2x16x64xf32>
  %out = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %r : tensor<2x16x64xf32>, tensor<2x16x64xf32>) outs(%e3 : tensor<2x16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  return %out : tensor<2x16x64xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>

// A per-(n, g, k) scale (group norm's rstd[n, g] * w[g, k]) collapsed to
// [n, c] and broadcast by an op over [n, c, p]: the collapse cannot move
// above the scale (a broadcast computed it), so it moves below its readers,
// which run over [n, g, k, p] on a view of x; the elementwise op after them
// follows (its operand is computed over the finer space), and the result is
// collapsed back once, at the return.
// CHECK-LABEL: func.func @collapse_sinks_below_broadcasts
// CHECK-SAME: (%[[R:[^:]*]]: tensor<2x2xf32>, %[[W:[^:]*]]: tensor<2x2xf32>, %[[X:[^:]*]]: tensor<2x4x3xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[W]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[XV:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XV]], %[[S]] : tensor<2x2x2x3xf32>, tensor<2x2x2xf32>) outs(%{{.*}} : tensor<2x2x2x3xf32>)
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x2x2x3xf32>) outs(%{{.*}} : tensor<2x2x2x3xf32>)
// CHECK: math.exp
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[Z]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x2x3xf32> into tensor<2x4x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @collapse_sinks_below_broadcasts(%r: tensor<2x2xf32>, %w: tensor<2x2xf32>, %x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %e = tensor.empty() : tensor<2x2x2xf32>
  %s = linalg.generic {indexing_maps = [#rows, #w, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<2x2x2xf32>
  %c = tensor.collapse_shape %s [[0], [1, 2]] : tensor<2x2x2xf32> into tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4x3xf32>
  %y = linalg.generic {indexing_maps = [#id3, #rows, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<2x4x3xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<2x4x3xf32>
  %z = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x4x3xf32>) outs(%e2 : tensor<2x4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<2x4x3xf32>
  return %z : tensor<2x4x3xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#o = affine_map<(i, j, k) -> (i, j)>

// Negative: a contraction keeps the collapse it reads (its loops are not
// split); an elementwise op reading a collapse of an elementwise result,
// returned, hoists it as before (onto the argument).
// CHECK-LABEL: func.func @collapses_that_stay
// CHECK-SAME: (%[[R:[^:]*]]: tensor<2x2xf32>, %[[M:[^:]*]]: tensor<4x3xf32>, %[[X:[^:]*]]: tensor<2x2xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<2x2x2xf32> into tensor<2x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]], %[[M]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[XC]] : tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>)
// CHECK: math.tanh
func.func @collapses_that_stay(%r: tensor<2x2xf32>, %m: tensor<4x3xf32>, %x: tensor<2x2xf32>) -> (tensor<2x3xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<2x2x2xf32>
  %s = linalg.generic {indexing_maps = [#rows, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<2x2xf32>) outs(%e : tensor<2x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<2x2x2xf32>
  %c = tensor.collapse_shape %s [[0], [1, 2]] : tensor<2x2x2xf32> into tensor<2x4xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %m : tensor<2x4xf32>, tensor<4x3xf32>) outs(%f : tensor<2x3xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %t = arith.mulf %u, %v : f32
    %n = arith.addf %acc, %t : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x2xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf32>) outs(%e3 : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  %qc = tensor.collapse_shape %q [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%qc : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %p, %t : tensor<2x3xf32>, tensor<4xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lead = affine_map<(d0, d1, d2) -> (d0, d1)>

// exp(x).view(8, 16, 196).sum(-1): the collapse can reach x (a free view),
// so it moves up and the sum runs over one column dimension of 196 (not
// (14, 14): 128-bit loads need the innermost extent a multiple of 4). Its
// reader reducing is no reason to move it down.
// CHECK-LABEL: func.func @collapse_to_the_input_before_a_sum
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16x14x14xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<8x16x14x14xf32> into tensor<8x16x196xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<8x16x196xf32>)
// CHECK: math.exp
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @collapse_to_the_input_before_a_sum(%x: tensor<8x16x14x14xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16x14x14xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x16x14x14xf32>) outs(%e : tensor<8x16x14x14xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = math.exp %i : f32
    linalg.yield %v : f32
  } -> tensor<8x16x14x14xf32>
  %c = tensor.collapse_shape %a [[0], [1], [2, 3]] : tensor<8x16x14x14xf32> into tensor<8x16x196xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id3, #lead], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c : tensor<8x16x196xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#lead4 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#s5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

// Group norm's x: summed through torch's view [2, 4, 3, 3] -> [2, 4, 9] ->
// [2, 2, 2, 9] (an expand of a collapse: a collapse of the finer
// [2, 2, 2, 3, 3] view) and read over that finer view by the epilogue. The
// finer view is read directly, so the collapse moves below the sum, which
// reduces over (2, 3, 3): both run over one space.
// CHECK-LABEL: func.func @views_meet_in_the_finer_space
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4x3x3xf32>, %[[S:[^:]*]]: tensor<2x2xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 3, 3]
// CHECK-NOT: tensor.collapse_shape %[[V]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[V]] : tensor<2x2x2x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[V]], %[[S]] : tensor<2x2x2x3x3xf32>, tensor<2x2xf32>)
func.func @views_meet_in_the_finer_space(%x: tensor<2x4x3x3xf32>, %s: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2x2x3x3xf32>) {
  %c = tensor.collapse_shape %x [[0], [1], [2, 3]] : tensor<2x4x3x3xf32> into tensor<2x4x9xf32>
  %v = tensor.expand_shape %c [[0], [1, 2], [3]] output_shape [2, 2, 2, 9] : tensor<2x4x9xf32> into tensor<2x2x2x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #lead4], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%v : tensor<2x2x2x9xf32>) outs(%f : tensor<2x2xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %i, %o : f32
    linalg.yield %a : f32
  } -> tensor<2x2xf32>
  %w = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 3, 3] : tensor<2x4x3x3xf32> into tensor<2x2x2x3x3xf32>
  %e5 = tensor.empty() : tensor<2x2x2x3x3xf32>
  %y = linalg.generic {indexing_maps = [#id5, #s5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%w, %s : tensor<2x2x2x3x3xf32>, tensor<2x2xf32>) outs(%e5 : tensor<2x2x2x3x3xf32>) {
  ^bb0(%i: f32, %m: f32, %o: f32):
    %d = arith.subf %i, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x2x2x3x3xf32>
  return %sum, %y : tensor<2x2xf32>, tensor<2x2x2x3x3xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#lead3 = affine_map<(d0, d1, d2) -> (d0)>
#lead4 = affine_map<(d0, d1, d2, d3) -> (d0)>

// The same at batch 1, after linalg-fold-unit-extent-dims dropped the batch:
// the sum reads [1, 2, 2, 3, 3] collapsed to [2, 2, 9], the epilogue the
// channels split after the batch was dropped (an expand of a unit-dim
// collapse, which upstream's bubble-up leaves as it is). The expand of the
// unit-dim collapse becomes a unit-dim collapse of the same [1, 2, 2, 3, 3]
// view the sum reads; that view read in the finer space, the sum's collapse
// moves below it, the unit loop it brings is dropped again, and both read
// [2, 2, 3, 3].
// CHECK-LABEL: func.func @views_meet_at_batch_one
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x3x3xf32>, %[[S:[^:]*]]: tensor<2xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 3]
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0, 1], [2], [3], [4]] : tensor<1x2x2x3x3xf32> into tensor<2x2x3x3xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%[[V]] : tensor<2x2x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[V]], %[[S]] : tensor<2x2x3x3xf32>, tensor<2xf32>)
func.func @views_meet_at_batch_one(%x: tensor<1x4x3x3xf32>, %s: tensor<2xf32>) -> (tensor<2xf32>, tensor<2x2x3x3xf32>) {
  %v5 = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 3] : tensor<1x4x3x3xf32> into tensor<1x2x2x3x3xf32>
  %v = tensor.collapse_shape %v5 [[0, 1], [2], [3, 4]] : tensor<1x2x2x3x3xf32> into tensor<2x2x9xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #lead3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%v : tensor<2x2x9xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %i, %o : f32
    linalg.yield %a : f32
  } -> tensor<2xf32>
  %c = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<1x4x3x3xf32> into tensor<4x3x3xf32>
  %w = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 2, 3, 3] : tensor<4x3x3xf32> into tensor<2x2x3x3xf32>
  %e4 = tensor.empty() : tensor<2x2x3x3xf32>
  %y = linalg.generic {indexing_maps = [#id4, #lead4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w, %s : tensor<2x2x3x3xf32>, tensor<2xf32>) outs(%e4 : tensor<2x2x3x3xf32>) {
  ^bb0(%i: f32, %m: f32, %o: f32):
    %d = arith.subf %i, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x2x3x3xf32>
  return %sum, %y : tensor<2xf32>, tensor<2x2x3x3xf32>
}

// -----

// An expand of a collapse that drops unit dimensions on both sides of the
// one it splits: x is split first, and each unit dimension joins the split
// dimension beside it.
// CHECK-LABEL: func.func @expand_of_unit_dim_collapse
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x6x1x5xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 1, 5] : tensor<1x6x1x5xf32> into tensor<1x2x3x1x5xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0, 1], [2, 3], [4]] : tensor<1x2x3x1x5xf32> into tensor<2x3x5xf32>
// CHECK-NEXT: return %[[C]]
func.func @expand_of_unit_dim_collapse(%x: tensor<1x6x1x5xf32>) -> tensor<2x3x5xf32> {
  %c = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<1x6x1x5xf32> into tensor<6x5xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
  return %e : tensor<2x3x5xf32>
}

// -----

// A fill over unit dimensions loses them (the unit-dim folding) and is not
// reshaped back into a fill at the unit shape (the two rewrites would undo
// each other without end).
// CHECK-LABEL: func.func @fill_of_unit_dims
// CHECK: %[[F:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = []} outs(%{{.*}} : tensor<f32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[F]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK-NEXT: return %[[E]]
func.func @fill_of_unit_dims() -> tensor<1x1xf32> {
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1x1xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<1x1xf32>) {
  ^bb0(%o: f32):
    linalg.yield %c : f32
  } -> tensor<1x1xf32>
  return %f : tensor<1x1xf32>
}

// -----

// Negative: an expand of a collapse that merges two dimensions of size > 1
// ([2, 6] -> [12] -> [3, 4]) has no common finer view: it stays.
// CHECK-LABEL: func.func @expand_of_merging_collapse
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x6xf32>)
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK-NEXT: return %[[E]]
func.func @expand_of_merging_collapse(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

// -----

// A reshape of a constant held as a resource blob (torch-mlir's weights) is
// the constant at the new shape: the same blob (upstream folds reshapes of
// dense constants only).
// CHECK-LABEL: func.func @reshaped_resource_constant
// CHECK: %[[C:.*]] = arith.constant dense_resource<weights> : tensor<2x2xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[C]] : tensor<2x2xf32>, tensor<2x2xf32>)
func.func @reshaped_resource_constant(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = arith.constant dense_resource<weights> : tensor<4xf32>
  %v = tensor.expand_shape %c [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A collapse of a slice of an argument (a causal language model's loss
// reads logits[:, :-1].reshape(-1, V)) is no view of the argument's buffer:
// the row reduction reading it runs over the slice's own loops instead,
// linalg.index of the column included, and its result is collapsed.
// CHECK-LABEL: func.func @collapse_of_argument_view
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x9x5xf32>, %[[L:[^:]*]]: tensor<2x9xi64>)
// CHECK-DAG: %[[XS:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 8, 5] [1, 1, 1]
// CHECK-DAG: %[[LS:.*]] = tensor.extract_slice %[[L]][0, 1] [2, 8] [1, 1]
// CHECK-NOT: tensor.collapse_shape %[[XS]]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XS]], %[[LS]] : tensor<2x8x5xf32>, tensor<2x8xi64>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: linalg.index 2 : index
// CHECK: } -> tensor<2x8xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<2x8xf32> into tensor<16xf32>
// CHECK-NEXT: return %[[R]]
func.func @collapse_of_argument_view(%x: tensor<2x9x5xf32>, %l: tensor<2x9xi64>) -> tensor<16xf32> {
  %xs = tensor.extract_slice %x[0, 0, 0] [2, 8, 5] [1, 1, 1] : tensor<2x9x5xf32> to tensor<2x8x5xf32>
  %xc = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x8x5xf32> into tensor<16x5xf32>
  %ls = tensor.extract_slice %l[0, 1] [2, 8] [1, 1] : tensor<2x9xi64> to tensor<2x8xi64>
  %lc = tensor.collapse_shape %ls [[0, 1]] : tensor<2x8xi64> into tensor<16xi64>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc, %lc : tensor<16x5xf32>, tensor<16xi64>) outs(%f : tensor<16xf32>) {
  ^bb0(%in: f32, %k: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %k : i64
    %v = arith.select %hit, %in, %z : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %p : tensor<16xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Negative: a collapse of a slice of a computed value stays where it is
// (fusion-fold-copies makes the slice a gather, which the collapse's
// reader evaluates).
// CHECK-LABEL: func.func @collapse_of_computed_slice
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<2x8x5xf32> into tensor<16x5xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<16x5xf32>)
func.func @collapse_of_computed_slice(%x: tensor<2x9x5xf32>) -> tensor<16xf32> {
  %ee = tensor.empty() : tensor<2x9x5xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x9x5xf32>) outs(%ee : tensor<2x9x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<2x9x5xf32>
  %xs = tensor.extract_slice %ex[0, 0, 0] [2, 8, 5] [1, 1, 1] : tensor<2x9x5xf32> to tensor<2x8x5xf32>
  %xc = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x8x5xf32> into tensor<16x5xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc : tensor<16x5xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}
