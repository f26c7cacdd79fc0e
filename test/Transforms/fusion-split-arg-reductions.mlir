// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-split-arg-reductions),canonicalize,cse)' \
// RUN:   | FileCheck %s

// fusion-split-arg-reductions: a generic carrying an extremum and its column
// becomes one-result reductions. Elements of up to 32 bits: the maximum of
// 64-bit keys (the element's order above its column: ~k for the first
// column, k + 1 for the last), after the first NaN column p where a NaN
// stops the updates, and a row epilogue decoding the key; wider elements:
// p, the extremum v of the columns before it, the first (or last) column j
// holding v, and the epilogue. The extremum, if read, is a reduction of its
// own.

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// torch.max(x, dim) with both results read, as torch-mlir writes it.
// CHECK-LABEL: func.func @argmax_first
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-DAG: %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[NOKEY:.*]] = arith.constant -9223372036854775808 : i64
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[I0:.*]] = linalg.fill ins(%{{.*}} : i64)
// CHECK: %[[NONES:.*]] = linalg.generic {{.*}} ins(%[[NONE]] : i32)
// p: the first NaN column
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x16xf32>) outs(%[[NONES]] : tensor<4xi32>)
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno
// CHECK: %[[C:.*]] = arith.select %[[NAN]], %[[K]], %[[NONE]] : i32
// CHECK: arith.minsi %[[C]]
// the key of each column before it: the bits in signed order, -0 as +0,
// above the inverted column
// CHECK: %[[NOKEYS:.*]] = linalg.generic {{.*}} ins(%[[NOKEY]] : i64)
// CHECK: %[[KEY:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[P]] : tensor<4x16xf32>, tensor<4xi32>) outs(%[[NOKEYS]] : tensor<4xi64>)
// CHECK-NEXT: ^bb0(%[[KX:[^:]*]]: f32, %[[KP:[^:]*]]: i32, %[[KACC:[^:]*]]: i64):
// CHECK: %[[KK:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[KX]] : f32 to i32
// CHECK-NEXT: %[[SIGN:.*]] = arith.shrsi %[[BITS]]
// CHECK-NEXT: %[[FLIP:.*]] = arith.andi %[[SIGN]], %[[NONE]]
// CHECK-NEXT: %[[ORD:.*]] = arith.xori %[[BITS]], %[[FLIP]]
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpi eq, %[[ORD]], %[[ONES]]
// CHECK-NEXT: %[[ORD0:.*]] = arith.select %[[NZ]], %{{.*}}, %[[ORD]] : i32
// CHECK-NEXT: %[[HI:.*]] = arith.extsi %[[ORD0]] : i32 to i64
// CHECK-NEXT: %[[HIS:.*]] = arith.shli %[[HI]]
// CHECK-NEXT: %[[LO:.*]] = arith.xori %[[KK]], %[[ONES]] : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.extui %[[LO]] : i32 to i64
// CHECK-NEXT: %[[KV:.*]] = arith.ori %[[HIS]], %[[LOW]] : i64
// CHECK-NEXT: %[[BEFORE:.*]] = arith.cmpi slt, %[[KK]], %[[KP]] : i32
// CHECK-NEXT: %[[MASKED:.*]] = arith.select %[[BEFORE]], %[[KV]], %[[NOKEY]] : i64
// CHECK-NEXT: arith.maxsi %[[MASKED]], %[[KACC]] : i64
// the epilogue: the key's column where its element passes the original
// compare against m0, else i0
// CHECK: %[[IDX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[KEY]], %[[M0]] : tensor<4xi64>, tensor<4xf32>) outs(%[[I0]] : tensor<4xi64>)
// CHECK-NEXT: ^bb0(%[[EK:[^:]*]]: i64, %[[EM:[^:]*]]: f32, %[[EO:[^:]*]]: i64):
// CHECK-NEXT: %[[FOUND:.*]] = arith.cmpi ne, %[[EK]], %[[NOKEY]] : i64
// CHECK-NEXT: %[[EHI:.*]] = arith.shrui %[[EK]]
// CHECK-NEXT: %[[EORD:.*]] = arith.trunci %[[EHI]] : i64 to i32
// CHECK-NEXT: %[[ELO:.*]] = arith.trunci %[[EK]] : i64 to i32
// CHECK-NEXT: %[[COL:.*]] = arith.xori %[[ELO]], %[[ONES]] : i32
// CHECK-NEXT: %[[ESIGN:.*]] = arith.shrsi %[[EORD]]
// CHECK-NEXT: %[[EFLIP:.*]] = arith.andi %[[ESIGN]], %[[NONE]]
// CHECK-NEXT: %[[EBITS:.*]] = arith.xori %[[EORD]], %[[EFLIP]]
// CHECK-NEXT: %[[V:.*]] = arith.bitcast %[[EBITS]] : i32 to f32
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[EM]] : f32
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[GT]], %[[FOUND]] : i1
// CHECK-NEXT: %[[EXT:.*]] = arith.extsi %[[COL]] : i32 to i64
// CHECK-NEXT: arith.select %[[OK]], %[[EXT]], %[[EO]] : i64
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
// column of the minimum: k + 1 in the key's low half), i32 indices, the
// minimum unread: the order complemented (the largest key holds the
// minimum).
// CHECK-LABEL: func.func @argmin_last
// CHECK-DAG: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: arith.cmpf uno
// CHECK: arith.minsi
// CHECK: %[[KEY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<4xi64>)
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[ORD:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[NOT:.*]] = arith.xori %[[ORD]], %[[ONES]] : i32
// CHECK-NEXT: %[[HI:.*]] = arith.extsi %[[NOT]] : i32 to i64
// CHECK-NEXT: arith.shli %[[HI]]
// CHECK-NEXT: %[[LO:.*]] = arith.addi %[[K]], %[[ONE]] : i32
// CHECK-NEXT: arith.extui %[[LO]] : i32 to i64
// CHECK: arith.maxsi
// CHECK: %[[IDX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[KEY]], %{{.*}} : tensor<4xi64>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[EK:[^:]*]]: i64, %[[EM:[^:]*]]: f32, %[[EO:[^:]*]]: i32):
// CHECK: %[[ELO:.*]] = arith.trunci %[[EK]] : i64 to i32
// CHECK-NEXT: %[[COL:.*]] = arith.subi %[[ELO]], %[[ONE]] : i32
// CHECK-NEXT: arith.xori %{{.*}}, %[[ONES]] : i32
// CHECK: %[[V:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: arith.cmpf oge, %[[EM]], %[[V]] : f32
// CHECK-NOT: arith.extsi
// CHECK: arith.select %{{.*}}, %[[COL]], %[[EO]] : i32
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

// Integers need no NaN column: one reduction. The element is computed in
// the body (its ops are cloned into the reduction); an i32 is its own
// order, and the epilogue compares it as the original did.
// CHECK-LABEL: func.func @int_argmax
// CHECK-NOT: arith.cmpf uno
// CHECK: %[[KEY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4xi64>)
// CHECK: %[[V:.*]] = arith.fptosi
// CHECK: arith.extsi %[[V]] : i32 to i64
// CHECK: arith.maxsi
// CHECK-NOT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%[[KEY]], %{{.*}} : tensor<4xi64>, tensor<4xi32>)
// CHECK: %[[ORD:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: arith.cmpi sgt, %[[ORD]], %{{.*}} : i32
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
// not NaN when x ugt m, so the first NaN's column wins. Every NaN's order is
// the top (INT32_MAX): one reduction, no p. The epilogue keeps i0 if m0 is
// NaN; a NaN found passes `ugt`.
// CHECK-LABEL: func.func @numpy_argmax
// CHECK-DAG: %[[TOP:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[KEY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[ORD0:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno
// CHECK-NEXT: arith.select %[[NAN]], %[[TOP]], %[[ORD0]] : i32
// CHECK: arith.maxsi
// CHECK-NOT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[KEY]], %{{.*}} : tensor<4xi64>, tensor<4xf32>)
// CHECK: ^bb0(%[[EK:[^:]*]]: i64, %[[EM:[^:]*]]: f32, %[[EO:[^:]*]]: i64):
// CHECK: %[[FOUND:.*]] = arith.cmpi ne, %[[EK]]
// CHECK: %[[V:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ugt, %[[V]], %[[EM]] : f32
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[GT]], %[[FOUND]] : i1
// CHECK-NEXT: %[[ORDERED:.*]] = arith.cmpf ord, %[[EM]], %[[EM]] : f32
// CHECK-NEXT: %[[TAKE:.*]] = arith.andi %[[ORDERED]], %[[OK]] : i1
// CHECK-NEXT: %[[EXT:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK-NEXT: arith.select %[[TAKE]], %[[EXT]], %[[EO]] : i64
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
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<2x8xi64>)
// CHECK: arith.maxsi
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} {{.*}} outs(%{{.*}} : tensor<2x8xi64>)
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

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// f64 and i64 elements leave no room for a column beside them in 64 bits:
// p (floats), the extremum v before it, the first column j holding it, and
// the epilogue comparing v.
// CHECK-LABEL: func.func @wide_elements
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x16xf64>, %[[Y:[^:]*]]: tensor<4x16xi64>)
// CHECK-DAG: %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFFF0000000000000 : f64
// CHECK-NOT: arith.bitcast
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xf64>) outs(%{{.*}} : tensor<4xi32>)
// CHECK: arith.cmpf uno
// CHECK: arith.minsi
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[P]] : tensor<4x16xf64>, tensor<4xi32>)
// CHECK: arith.cmpi slt
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NINF]] : f64
// CHECK: arith.maximumf
// CHECK: %[[J:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[V]], %[[P]] : tensor<4x16xf64>, tensor<4xf64>, tensor<4xi32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.minsi
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[V]], %[[J]], %{{.*}} : tensor<4xf64>, tensor<4xi32>, tensor<4xf64>)
// CHECK: arith.cmpf ogt
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<4x16xi64>) outs(%{{.*}} : tensor<4xi64>)
// CHECK: arith.maxsi
// CHECK: %[[JW:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[W]] : tensor<4x16xi64>, tensor<4xi64>)
// CHECK: arith.cmpi eq
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[W]], %[[JW]], %{{.*}} : tensor<4xi64>, tensor<4xi32>, tensor<4xi64>)
// CHECK: arith.cmpi sgt
// CHECK-NOT: arith.bitcast
// CHECK: return
func.func @wide_elements(%x: tensor<4x16xf64>, %y: tensor<4x16xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %min = arith.constant -9223372036854775808 : i64
  %e0 = tensor.empty() : tensor<4xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%e0 : tensor<4xf64>) -> tensor<4xf64>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %w0 = linalg.fill ins(%min : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf64>) outs(%m0, %i0 : tensor<4xf64>, tensor<4xi64>) {
  ^bb0(%in: f64, %m: f64, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %m : f64
    %gt = arith.cmpf ogt, %in, %m : f64
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : f64, i64
  } -> (tensor<4xf64>, tensor<4xi64>)
  %s:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x16xi64>) outs(%w0, %i0 : tensor<4xi64>, tensor<4xi64>) {
  ^bb0(%in: i64, %m: i64, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maxsi %in, %m : i64
    %gt = arith.cmpi sgt, %in, %m : i64
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : i64, i64
  } -> (tensor<4xi64>, tensor<4xi64>)
  return %r#1, %s#1 : tensor<4xi64>, tensor<4xi64>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Narrow elements: an f16 widens to f32 for its bits (numpy's argmin: the
// order complemented, NaN still on top), and the epilogue narrows the
// decoded element back; an unsigned i8 is zero-extended and moved into the
// signed range (xor INT32_MIN), and moved back before its compare.
// CHECK-LABEL: func.func @narrow_elements
// CHECK-DAG: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x16xf16>) outs(%{{.*}} : tensor<4xi64>)
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.bitcast %[[W]] : f32 to i32
// CHECK: arith.xori
// CHECK: arith.cmpf uno, %{{.*}}, %{{.*}} : f16
// CHECK: arith.maxsi
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK: %[[V:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: arith.cmpf ult, %[[V]], %{{.*}} : f16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x16xi8>) outs(%{{.*}} : tensor<4xi64>)
// CHECK: %[[Z:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK-NEXT: arith.xori %[[Z]], %[[MIN]] : i32
// CHECK: arith.maxsi
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK: %[[U:.*]] = arith.xori %{{.*}}, %[[MIN]] : i32
// CHECK-NEXT: %[[N:.*]] = arith.trunci %[[U]] : i32 to i8
// CHECK-NEXT: arith.cmpi ugt, %[[N]], %{{.*}} : i8
func.func @narrow_elements(%x: tensor<4x16xf16>, %y: tensor<4x16xi8>) -> (tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : i64
  %pinf = arith.constant 0x7C00 : f16
  %zero = arith.constant 0 : i8
  %e0 = tensor.empty() : tensor<4xf16>
  %m0 = linalg.fill ins(%pinf : f16) outs(%e0 : tensor<4xf16>) -> tensor<4xf16>
  %e1 = tensor.empty() : tensor<4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %e2 = tensor.empty() : tensor<4xi8>
  %u0 = linalg.fill ins(%zero : i8) outs(%e2 : tensor<4xi8>) -> tensor<4xi8>
  %r:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf16>) outs(%m0, %i0 : tensor<4xf16>, tensor<4xi64>) {
  ^bb0(%in: f16, %m: f16, %i: i64):
    %lt = arith.cmpf ult, %in, %m : f16
    %ord = arith.cmpf ord, %m, %m : f16
    %moves = arith.andi %lt, %ord : i1
    %mn = arith.minimumf %in, %m : f16
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %sel = arith.select %moves, %ji, %i : i64
    linalg.yield %mn, %sel : f16, i64
  } -> (tensor<4xf16>, tensor<4xi64>)
  %s:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x16xi8>) outs(%u0, %i0 : tensor<4xi8>, tensor<4xi64>) {
  ^bb0(%in: i8, %m: i8, %i: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maxui %in, %m : i8
    %gt = arith.cmpi ugt, %in, %m : i8
    %sel = arith.select %gt, %ji, %i : i64
    linalg.yield %mx, %sel : i8, i64
  } -> (tensor<4xi8>, tensor<4xi64>)
  return %r#1, %s#1 : tensor<4xi64>, tensor<4xi64>
}
