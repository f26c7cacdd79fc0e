// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-split-arg-reductions),canonicalize,cse)' \
// RUN:   | FileCheck %s

// fusion-split-arg-reductions: a generic carrying an extremum and its column
// becomes one-result reductions: the first NaN column p, the extremum v of
// the columns before it, the first (or last) column j holding v, and a row
// epilogue; the extremum, if read, is a reduction of its own.

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// torch.max(x, dim) with both results read, as torch-mlir writes it.
// CHECK-LABEL: func.func @argmax_first
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-DAG: %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[I0:.*]] = linalg.fill ins(%{{.*}} : i64)
// CHECK: %[[NONES:.*]] = linalg.generic {{.*}} ins(%[[NONE]] : i32)
// p: the first NaN column
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x16xf32>) outs(%[[NONES]] : tensor<4xi32>)
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno
// CHECK: %[[C:.*]] = arith.select %[[NAN]], %[[K]], %[[NONE]] : i32
// CHECK: arith.minsi %[[C]]
// v: the maximum before it
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[P]] : tensor<4x16xf32>, tensor<4xi32>)
// CHECK: arith.cmpi slt
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NINF]] : f32
// CHECK: arith.maximumf
// j: the first column holding v
// CHECK: %[[J:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[V]], %[[P]] : tensor<4x16xf32>, tensor<4xf32>, tensor<4xi32>) outs(%[[NONES]] : tensor<4xi32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi slt
// CHECK: arith.andi
// CHECK: arith.minsi
// the epilogue: j where v > m0 (the original compare), else i0
// CHECK: %[[IDX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[V]], %[[J]], %[[M0]] : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) outs(%[[I0]] : tensor<4xi64>)
// CHECK: ^bb0(%[[IV:[^:]*]]: f32, %[[IJ:[^:]*]]: i32, %[[IM:[^:]*]]: f32, %[[IO:[^:]*]]: i64):
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[IV]], %[[IM]] : f32
// CHECK: %[[FOUND:.*]] = arith.cmpi ne, %[[IJ]], %[[NONE]] : i32
// CHECK: %[[OK:.*]] = arith.andi %[[GT]], %[[FOUND]] : i1
// CHECK: %[[EXT:.*]] = arith.extsi %[[IJ]] : i32 to i64
// CHECK: arith.select %[[OK]], %[[EXT]], %[[IO]] : i64
// the maximum, as the original computed it
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xf32>) outs(%[[M0]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32):
// CHECK-NEXT: arith.maximumf %[[A]], %[[B]] : f32
// CHECK: return %[[MAX]], %[[IDX]] : tensor<4xf32>, tensor<4xi64>
func.func @argmax_first(%x: tensor<4x16xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// The index result first, the compare written m >= x (x <= m: the last
// column of the minimum), i32 indices, the minimum unread.
// CHECK-LABEL: func.func @argmin_last
// CHECK-DAG: %[[NONE:.*]] = arith.constant -2147483648 : i32
// CHECK-DAG: %[[PINF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: arith.minsi
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[PINF]] : f32
// CHECK: arith.minimumf
// CHECK: %[[J:.*]] = linalg.generic
// CHECK: arith.cmpf oeq
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NONE]] : i32
// CHECK: arith.maxsi
// CHECK: %[[IDX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK: ^bb0(%[[IV:[^:]*]]: f32, %[[IJ:[^:]*]]: i32, %[[IM:[^:]*]]: f32, %[[IO:[^:]*]]: i32):
// CHECK: arith.cmpf oge, %[[IM]], %[[IV]] : f32
// CHECK: arith.cmpi ne, %[[IJ]], %[[NONE]] : i32
// CHECK-NOT: arith.extsi
// CHECK: arith.select %{{.*}}, %[[IJ]], %[[IO]] : i32
// CHECK-NOT: linalg.generic
// CHECK: return %[[IDX]] : tensor<4xi32>
func.func @argmin_last(%x: tensor<4x16xf32>) -> tensor<4xi32> {
  %c0 = arith.constant 0 : i32
  %pinf = arith.constant 0x7F800000 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%pinf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xi32>
  %i0 = linalg.fill ins(%c0 : i32) outs(%e1 : tensor<4xi32>) -> tensor<4xi32>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%i0, %m0 : tensor<4xi32>, tensor<4xf32>) {
  ^bb0(%in: f32, %i: i32, %m: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %mn = arith.minimumf %m, %in : f32
    %ge = arith.cmpf oge, %m, %in : f32
    %sel = arith.select %ge, %ji, %i : i32
    linalg.yield %sel, %mn : i32, f32
  } -> (tensor<4xi32>, tensor<4xf32>)
  return %r#0 : tensor<4xi32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Integers need no NaN column; the element is computed in the body (its
// ops are cloned into each reduction).
// CHECK-LABEL: func.func @int_argmax
// CHECK-NOT: arith.cmpf uno
// CHECK: %[[V:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.fptosi
// CHECK: arith.maxsi
// CHECK: %[[J:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[V]] : tensor<4x16xf32>, tensor<4xi32>)
// CHECK: arith.fptosi
// CHECK: arith.cmpi eq
// CHECK: arith.minsi
// CHECK: linalg.generic {{.*}} ins(%[[V]], %[[J]], %{{.*}} : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>)
// CHECK: arith.cmpi sgt
func.func @int_argmax(%x: tensor<4x16xf32>) -> tensor<4xi64> {
  %c0 = arith.constant 0 : i64
  %min = arith.constant -2147483648 : i32
  %e0 = tensor.empty() : tensor<4xi32>
  %m0 = linalg.fill ins(%min : i32) outs(%e0 : tensor<4xi32>) -> tensor<4xi32>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xi32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: i32, %i: i64):
    %v = arith.fptosi %in : f32 to i32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maxsi %v, %m : i32
    %gt = arith.cmpi sgt, %v, %m : i32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : i32, i64
  } -> (tensor<4xi32>, tensor<4xi64>)
  return %r#1 : tensor<4xi64>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// numpy's argmax (kfuse's builder writes it so): the index moves while m is
// not NaN when x ugt m, so the first NaN's column wins. The epilogue keeps
// i0 if m0 is NaN, else takes p where there is a NaN, else as above.
// CHECK-LABEL: func.func @numpy_argmax
// CHECK-DAG: %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpf uno
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[P]] : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>)
// CHECK: ^bb0(%[[IV:[^:]*]]: f32, %[[IJ:[^:]*]]: i32, %[[IM:[^:]*]]: f32, %[[IP:[^:]*]]: i32, %[[IO:[^:]*]]: i64):
// CHECK: %[[GT:.*]] = arith.cmpf ugt, %[[IV]], %[[IM]] : f32
// CHECK: %[[FOUND:.*]] = arith.cmpi ne, %[[IJ]], %[[NONE]] : i32
// CHECK: %[[OK:.*]] = arith.andi %[[GT]], %[[FOUND]] : i1
// CHECK: %[[NAN:.*]] = arith.cmpi ne, %[[IP]], %[[NONE]] : i32
// CHECK: %[[COL:.*]] = arith.select %[[NAN]], %[[IP]], %[[IJ]] : i32
// CHECK: %[[ORD:.*]] = arith.cmpf ord, %[[IM]], %[[IM]] : f32
// CHECK: %[[EITHER:.*]] = arith.ori %[[NAN]], %[[OK]] : i1
// CHECK: %[[TAKE:.*]] = arith.andi %[[ORD]], %[[EITHER]] : i1
// CHECK: %[[EXT:.*]] = arith.extsi %[[COL]] : i32 to i64
// CHECK: arith.select %[[TAKE]], %[[EXT]], %[[IO]] : i64
func.func @numpy_argmax(%x: tensor<4x16xf32>) -> tensor<4xi64> {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %gt = arith.cmpf ugt, %in, %m : f32
    %ord = arith.cmpf ord, %m, %m : f32
    %moves = arith.andi %gt, %ord : i1
    %mx = arith.maximumf %in, %m : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %sel = arith.select %moves, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#1 : tensor<4xi64>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Not arg-reductions, left alone: maxnumf (NaNs skipped, not propagated);
// a compare that disagrees with the extremum (max with olt); a select of
// something other than the column; an element that reads the accumulator;
// ugt without the guard that m is not NaN (every later column would win).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK-NOT: arith.cmpf uno
func.func @left_alone(%x: tensor<4x16xf32>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : i64
  %c7 = arith.constant 7 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %a:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maxnumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %b:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %lt = arith.cmpf olt, %in, %m : f32
    %sel = arith.select %lt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %c:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %c7, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %d:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %y = arith.addf %in, %m : f32
    %mx = arith.maximumf %y, %m : f32
    %gt = arith.cmpf ogt, %y, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %u:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ugt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %a#1, %b#1, %c#1, %d#1, %u#1 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>

// Two reduction loops, or the column of a loop other than the reduced one:
// left alone. A reduction over a middle dimension is split, its epilogue
// indexed by the remaining loops.
// CHECK-LABEL: func.func @dims
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xi64>)
// CHECK: arith.cmpf uno
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} {{.*}} outs(%{{.*}} : tensor<2x8xi64>)
// CHECK: return
func.func @dims(%x: tensor<2x4x8xf32>) -> (tensor<2xi64>, tensor<2x8xi64>, tensor<2x8xi64>) {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<2xf32>) -> tensor<2xf32>
  %e1 = tensor.empty() : tensor<2xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<2xi64>) -> tensor<2xi64>
  %a:2 = linalg.generic {indexing_maps = [#in, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%m0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  %e2 = tensor.empty() : tensor<2x8xf32>
  %m2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %e3 = tensor.empty() : tensor<2x8xi64>
  %i2 = linalg.fill ins(%c0 : i64) outs(%e3 : tensor<2x8xi64>) -> tensor<2x8xi64>
  %b:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x4x8xf32>) outs(%m2, %i2 : tensor<2x8xf32>, tensor<2x8xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<2x8xf32>, tensor<2x8xi64>)
  %c:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x4x8xf32>) outs(%m2, %i2 : tensor<2x8xf32>, tensor<2x8xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<2x8xf32>, tensor<2x8xi64>)
  return %a#1, %b#1, %c#1 : tensor<2xi64>, tensor<2x8xi64>, tensor<2x8xi64>
}
