// RUN: fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-picks-as-gathers))' \
// RUN:   | FileCheck %s
// After it, fusion-guard-gathers finds every gathered index bounded: the
// pick reads at min(k, n - 1), and guards nothing.
// RUN: fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-picks-as-gathers,fusion-guard-gathers))' \
// RUN:   | FileCheck %s --check-prefix=GUARDS

// fusion-picks-as-gathers: a sum over loop j of `j == k ? f(j) : 0` (k not
// computed from j) is f(k) where 0 <= k < n and 0 elsewhere; the generic
// loses loop j, and the inputs read along it are gathered at k. Left with
// no reduction loop, it reads the sum's start as an input (its output a
// tensor.empty): elementwise fusion takes the fill then.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A cross-entropy's label pick: i64 labels compared with index_cast(j).
// CHECK-LABEL: func.func @label_pick
// CHECK-SAME: (%[[X:.*]]: tensor<64x1000xf32>, %[[L:.*]]: tensor<64xi64>)
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[L]], %[[FILL]] : tensor<64xi64>, tensor<64xf32>) outs(%[[E]] : tensor<64xf32>)
// CHECK-NEXT: ^bb0(%[[LAB:.*]]: i64, %[[ACC:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[LAB]] : i64 to index
// CHECK-NEXT: %[[N:.*]] = arith.constant 1000 : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[K]], %[[N]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 999 : index
// CHECK-NEXT: %[[AT:.*]] = arith.minui %[[K]], %[[LAST]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[AT]]] : tensor<64x1000xf32>
// CHECK-NEXT: %[[T:.*]] = arith.select %[[IN]], %[[V]], %{{.*}} : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[ACC]] fastmath<contract> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: linalg.generic
// GUARDS-LABEL: func.func @label_pick
// GUARDS-NOT: fusion.guard
func.func @label_pick(%x: tensor<64x1000xf32>, %labels: tensor<64xi64>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<64x1000xf32>, tensor<64xi64>) outs(%p0 : tensor<64xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.addf %v, %acc fastmath<contract> : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %picked : tensor<64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// `ne` with the branches swapped, the key on the left, the index compared
// as an index (i32 labels cast to it), a term computed from the element
// and the column (x * j), and the accumulator first in the sum: the same
// pick, the column index being the key wherever the term reads it.
// CHECK-LABEL: func.func @ne_swapped
// CHECK-SAME: (%[[X:.*]]: tensor<8x50xf32>, %[[L:.*]]: tensor<8xi32>)
// CHECK: ^bb0(%[[LAB:.*]]: i32, %[[ACC:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[K32:.*]] = arith.index_cast %[[LAB]] : i32 to index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[K32]], %{{.*}} : index
// CHECK: %[[AT:.*]] = arith.minui %[[K32]], %{{.*}} : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[AT]]] : tensor<8x50xf32>
// CHECK-NEXT: %[[JI:.*]] = arith.index_cast %[[AT]] : index to i32
// CHECK-NEXT: %[[JF:.*]] = arith.sitofp %[[JI]] : i32 to f32
// CHECK-NEXT: %[[XJ:.*]] = arith.mulf %[[V]], %[[JF]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[IN]], %[[XJ]], %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
func.func @ne_swapped(%x: tensor<8x50xf32>, %labels: tensor<8xi32>) -> tensor<8xf32> {
  %zero = arith.constant -0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x50xf32>, tensor<8xi32>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i32, %acc: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %lab : i32 to index
    %miss = arith.cmpi ne, %k, %j : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %xj = arith.mulf %in, %jf : f32
    %v = arith.select %miss, %zero, %xj : f32
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %picked : tensor<8xf32>
}

// -----

// An integer sum over two reduction loops (the rows and the columns): the
// columns' loop goes, the rows' stays a reduction, its accumulator the
// output's. The labels are i16, wide enough for 300 columns.
// CHECK-LABEL: func.func @integer_total
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[L:.*]], #[[O:.*]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : tensor<4x16xi16>) outs(%[[FILL]] : tensor<4xi32>)
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<4x16x300xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.addi
#x3 = affine_map<(b, r, c) -> (b, r, c)>
#l3 = affine_map<(b, r, c) -> (b, r)>
#o3 = affine_map<(b, r, c) -> (b)>
func.func @integer_total(%x: tensor<4x16x300xi32>, %labels: tensor<4x16xi16>) -> tensor<4xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4xi32>
  %p0 = linalg.fill ins(%zero : i32) outs(%e : tensor<4xi32>) -> tensor<4xi32>
  %t = linalg.generic {indexing_maps = [#x3, #l3, #o3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %labels : tensor<4x16x300xi32>, tensor<4x16xi16>) outs(%p0 : tensor<4xi32>) {
  ^bb0(%in: i32, %lab: i16, %acc: i32):
    %c = linalg.index 2 : index
    %ci = arith.index_cast %c : index to i16
    %hit = arith.cmpi eq, %lab, %ci : i16
    %v = arith.select %hit, %in, %zero : i32
    %r = arith.addi %acc, %v : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %t : tensor<4xi32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left as they are: i8 labels, too narrow for 1000 columns (index_cast
// wraps j: j = 256 + k would match too); a term that is not zero
// elsewhere; a key computed from j; a one-hot product (NaN where any x
// is infinite); a max, not a sum.
// CHECK-LABEL: func.func @not_picks
// CHECK-COUNT-5: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: tensor.extract
func.func @not_picks(%x: tensor<8x1000xf32>, %l8: tensor<8xi8>, %labels: tensor<8xi64>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %narrow = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %l8 : tensor<8x1000xf32>, tensor<8xi8>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i8, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i8
    %hit = arith.cmpi eq, %ji, %lab : i8
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %ones = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x1000xf32>, tensor<8xi64>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %hit, %in, %one : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %moving = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x1000xf32>, tensor<8xi64>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %k = arith.addi %lab, %ji : i64
    %hit = arith.cmpi eq, %ji, %k : i64
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %product = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x1000xf32>, tensor<8xi64>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %h = arith.uitofp %hit : i1 to f32
    %v = arith.mulf %h, %in : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x1000xf32>, tensor<8xi64>) outs(%p0 : tensor<8xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %narrow, %ones, %moving, %product, %max : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
