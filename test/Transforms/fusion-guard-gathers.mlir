// RUN: fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-guard-gathers))' \
// RUN:   | FileCheck %s

// fusion-guard-gathers: a tensor.extract in a generic body whose indices
// come from the data (an embedding's token ids) reads at index 0 where an
// index is out of range (compared unsigned: a negative id fails too), and
// its value carries a fusion.guard with a message naming the tensor and the
// dimension. Indices the pass can bound (loop indices, constants, clamps,
// remainders) are left as they are.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The token id is checked and clamped; the column index (linalg.index 1,
// within 0..63) is not.
// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[C100:.*]] = arith.constant 100 : index
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I]], %[[C100]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[K:.*]] = arith.select %[[OK]], %[[I]], %[[C0]] : index
// CHECK: %[[E:.*]] = tensor.extract %{{.*}}[%[[K]], %[[J]]] : tensor<100x64xf32>
// The index it reports where it fails: the token id, as i64.
// CHECK: %[[BAD:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[G:.*]] = fusion.guard %[[E]] if %[[OK]], "index out of range in a gather from input #1 (tensor<100x64xf32>): dimension 0 (size 100) (tensor.extract at {{.*}}fusion-guard-gathers.mlir:{{[0-9]+}}:{{[0-9]+}})" index %[[BAD]] : f32, i1, i64
// CHECK: linalg.yield %[[G]]
func.func @embedding(%ids: tensor<8xi64>, %table: tensor<100x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<100x64xf32>
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Indices the pass bounds: a clamp (what fusion-pad-to-generic writes), a
// remainder by the size, a loop index, a constant, and a select of two of
// them. No guard.
// CHECK-LABEL: func.func @bounded
// CHECK-NOT: fusion.guard
// CHECK-NOT: arith.cmpi ult
// CHECK: return
func.func @bounded(%x: tensor<4x6xi32>, %t: tensor<6x5xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xi32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: i32, %o: f32):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %i = arith.index_cast %in : i32 to index
    %lo = arith.maxsi %i, %c0 : index
    %clamped = arith.minsi %lo, %c5 : index
    %iu = arith.index_castui %in : i32 to index
    %rem = arith.remui %iu, %c5 : index
    %d1 = linalg.index 1 : index
    %pos = arith.cmpi sgt, %in, %in : i32
    %pick = arith.select %pos, %c2, %c4 : index
    %a = tensor.extract %t[%clamped, %rem] : tensor<6x5xf32>
    %b = tensor.extract %t[%d1, %pick] : tensor<6x5xf32>
    %c = tensor.extract %t[%c5, %c4] : tensor<6x5xf32>
    %s = arith.addf %a, %b : f32
    %u = arith.addf %s, %c : f32
    linalg.yield %u : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Both indices of a constant table come from the data: one guard with the
// two checks, naming both dimensions. A loop index past a dimension
// (d0 runs to 15, the table has 8 rows) is checked too.
// It reports the first index out of range: i where it is, else j.
// CHECK-LABEL: func.func @two_dims
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %{{.*}}: f32):
// CHECK: %[[OK0:.*]] = arith.cmpi ult, %[[I]]
// CHECK: %[[OK1:.*]] = arith.cmpi ult, %[[J]]
// CHECK: %[[OK:.*]] = arith.andi %[[OK0]], %[[OK1]] : i1
// CHECK: %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[BAD:.*]] = arith.select %[[OK0]], %[[J64]], %[[I64]] : i64
// CHECK: fusion.guard %{{.*}} if %[[OK]], "index out of range in a gather from a constant tensor<8x3xf32>: dimensions 0 (size 8), 1 (size 3){{.*}}" index %[[BAD]] : f32, i1, i64
// CHECK: %[[D:.*]] = linalg.index 0
// CHECK: %[[OKD:.*]] = arith.cmpi ult, %[[D]]
// CHECK: fusion.guard %{{.*}} if %[[OKD]], "index out of range in a gather from a constant tensor<8x3xf32>: dimension 0 (size 8)
func.func @two_dims(%a: tensor<16xindex>, %b: tensor<16xindex>) -> (tensor<16xf32>, tensor<16xf32>) {
  %t = arith.constant dense<1.0> : tensor<8x3xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<16xindex>, tensor<16xindex>) outs(%e : tensor<16xf32>) {
  ^bb0(%i: index, %j: index, %o: f32):
    %v = tensor.extract %t[%i, %j] : tensor<8x3xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<16xf32>) {
  ^bb0(%o: f32):
    %d = linalg.index 0 : index
    %c1 = arith.constant 1 : index
    %v = tensor.extract %t[%d, %c1] : tensor<8x3xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %r, %s : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A table with no elements: nothing to read, the value is 0 and its guard
// fails wherever it is used.
// CHECK-LABEL: func.func @empty_table
// CHECK-NOT: tensor.extract
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = arith.constant false
// CHECK: fusion.guard %[[Z]] if %[[F]], "index out of range in a gather from input #1 (tensor<0x4xf32>): it has no elements
func.func @empty_table(%ids: tensor<4xindex>, %t: tensor<0x4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: index, %o: f32):
    %v = tensor.extract %t[%i, %i] : tensor<0x4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A table of dynamic size: its size is taken (tensor.dim) before the generic.
// CHECK-LABEL: func.func @dynamic_table
// CHECK-SAME: (%{{.*}}: tensor<4xindex>, %[[T:.*]]: tensor<?xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[T]], %{{.*}} : tensor<?xf32>
// CHECK: linalg.generic
// CHECK: %[[OK:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: fusion.guard %{{.*}} if %[[OK]], "index out of range in a gather from input #1 (tensor<?xf32>): dimension 0 (dynamic size)
func.func @dynamic_table(%ids: tensor<4xindex>, %t: tensor<?xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: index, %o: f32):
    %v = tensor.extract %t[%i] : tensor<?xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
