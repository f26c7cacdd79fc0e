// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-split-full-reductions))' | FileCheck %s
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' | FileCheck %s --check-prefix=PLAN

// fusion-split-full-reductions: a full reduction whose terms read a value
// computed by a reduction, broadcast along some loops (the rows), reduces
// over the other loops into a tensor of the rows first (from the combiner's
// neutral element), then that tensor into the original accumulator. The
// first joins the rows' group: the [rows, columns] terms are never written.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @kl_like
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[Z]] : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[T]] : tensor<4x64xf32>) outs(%[[F]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.addf %[[A]], %[[O]] : f32
// CHECK-NEXT: linalg.yield %[[V]]
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[R]] : tensor<4xf32>) outs(%[[I0:.*]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A2:.*]]: f32, %[[O2:.*]]: f32):
// CHECK-NEXT: %[[V2:.*]] = arith.addf %[[A2]], %[[O2]] : f32
// CHECK-NEXT: linalg.yield %[[V2]]
// CHECK: return %[[S]]
// One row group (the max, the terms, their row sums) and the sum of the
// row sums, which reads 4 floats:
// PLAN-LABEL: func.func @kl_like
// PLAN: fusion.group "g0" "reduction" ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>) attributes {decisions = [{{.*}}"reduces each of its 4 rows here for a reduction over every element (64 per row) that reads row values: the terms are not written (fusion-split-full-reductions)"]}
// PLAN: fusion.yield %{{.*}} : tensor<4xf32>
// PLAN: fusion.group "g1" "reduction" ins(%{{.*}} : tensor<4xf32>)
// PLAN-NOT: fusion.group
func.func @kl_like(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %i1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%i1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %y : tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    %v = arith.mulf %ex, %c : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Rows along the second loop (a value reduced over dim 0, broadcast along
// it), two steps of elementwise producers away, and a max: the row
// reduction reads the terms transposed, its parallel loop first, and starts
// from -inf; the outer max starts from the original accumulator.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>
// (the terms read transposed by the row reduction)
// CHECK: affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @columns_max
// CHECK: arith.divf
// CHECK: %[[U:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[U]] : tensor<32x64xf32>) outs(%[[F]] : tensor<64xf32>)
// CHECK: arith.maximumf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[R]] : tensor<64xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: return %[[S]]
// The column sum, the terms and their maxes over the rows (64 values: the
// columns are the rows once the reductions take their loops last) in one
// group, the max of those in a second:
// PLAN-LABEL: func.func @columns_max
// PLAN: fusion.group "g0" "reduction" ins(%{{.*}} : tensor<32x64xf32>)
// PLAN: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<32x64xf32>) outs(%{{.*}} : tensor<64xf32>)
// PLAN: arith.addf
// PLAN: arith.divf
// PLAN: math.absf
// PLAN: arith.maximumf
// PLAN: fusion.yield %{{.*}} : tensor<64xf32>
// PLAN: fusion.group "g1" "reduction" ins(%{{.*}}, %{{.*}} : tensor<64xf32>, tensor<f32>)
// PLAN-NOT: fusion.group
func.func @columns_max(%x: tensor<32x64xf32>, %init: tensor<f32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<32x64xf32>) outs(%z1 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<32x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<32x64xf32>, tensor<64xf32>) outs(%e2 : tensor<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<32x64xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<32x64xf32>) outs(%e2 : tensor<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.absf %a : f32
    linalg.yield %v : f32
  } -> tensor<32x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%u : tensor<32x64xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Negative: no value computed by a reduction reaches the terms (a plain sum
// of squares, and a broadcast of a function argument): one full reduction.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
// PLAN-LABEL: func.func @no_row_values
// CHECK-LABEL: func.func @no_row_values
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @no_row_values(%x: tensor<4x64xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<4x64xf32>, tensor<4xf32>) outs(%e2 : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Negative: rows of 8 elements (partials per row would cost 1/8 of the
// reads), and a body that is not `acc (op) term` (the accumulator read
// twice): left alone.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @short_rows
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK-NOT: linalg.generic
func.func @short_rows(%x: tensor<64x8xf32>, %y: tensor<4x64xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x8xf32>) outs(%z1 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x64xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<64x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<64x8xf32>, tensor<64xf32>) outs(%e2 : tensor<64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<64x8xf32>
  %e0 = tensor.empty() : tensor<f32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<64x8xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<4x64xf32>
  %t4 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %r4 : tensor<4x64xf32>, tensor<4xf32>) outs(%e3 : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t4 : tensor<4x64xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %o, %o : f32
    %v = arith.addf %a, %sq : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %s, %s2 : tensor<f32>, tensor<f32>
}
