// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-reductions-last))' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' | FileCheck %s --check-prefix=PLAN

// A reduction with a reduced loop before a parallel one (torch-mlir's
// x.sum(0)) takes its parallel loops first, then the reduced ones, each in
// their original order; the maps follow, linalg.index is renumbered.

// CHECK-DAG: #[[$T2:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$D0:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$NHWC:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
// CHECK-DAG: #[[$C4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[$MID:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$LEAD2:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$IL:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3, d1)>
// CHECK-DAG: #[[$IL2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[$QA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$QB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$QO:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#[[$T2]], #[[$D0]]], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[IN]], %[[OUT]] : f32

// Batch statistics of NHWC: the channel loop first, (n, h, w) reduced.
// CHECK-LABEL: func.func @nhwc_channel_sum
// CHECK: linalg.generic {indexing_maps = [#[[$NHWC]], #[[$C4]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}

// CHECK-LABEL: func.func @middle_sum
// CHECK: linalg.generic {indexing_maps = [#[[$MID]], #[[$LEAD2]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.maximumf

// (loops r0 p1 r2 p3 become p1 p3 r0 r2)
// CHECK-LABEL: func.func @interleaved
// CHECK: linalg.generic {indexing_maps = [#[[$IL]], #[[$IL2]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}

// The old loop 0 (reduced) is the new loop 1 and the other way round.
// CHECK-LABEL: func.func @index_in_body
// CHECK: linalg.generic {indexing_maps = [#[[$T2]], #[[$D0]]], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 0 : index
// CHECK-NEXT: arith.muli %[[I]], %[[J]] : index
// CHECK-NOT: affine.apply
// CHECK-NOT: linalg.index
// CHECK: linalg.yield

// A contraction that writes its result transposed (batch, j, i) takes its
// parallel loops in the result's order: the result map becomes the
// identity, the reads follow (the CUDA contraction kernels, like the row
// kinds, index their output in loop order).
// CHECK-LABEL: func.func @written_transposed
// CHECK: linalg.generic {indexing_maps = [#[[$QA]], #[[$QB]], #[[$QO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2x16x32xf32>)

// Negative: reductions already in that order, a full reduction and an
// elementwise generic are left as they are.
// CHECK-LABEL: func.func @untouched
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x8xf32>)
// CHECK: iterator_types = ["reduction"]}
// CHECK: iterator_types = ["parallel", "parallel"]}

// Planned: exp of x, its column sum (linalg.reduce over dimension 0) and
// the log of the sum form one "reduction" group. With its reduced loop
// first the sum would be a "contraction", which takes no producers.
// PLAN-LABEL: func.func @exp_column_sum
// PLAN-SAME: (%[[X:[^:]*]]: tensor<64x32xf32>)
// PLAN-NOT: fusion.group
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<64x32xf32>) {
// PLAN: math.exp
// PLAN: iterator_types = ["parallel", "reduction"]
// PLAN: math.log
// PLAN: fusion.yield
// PLAN-NOT: fusion.group
// PLAN: return %[[G]]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#outer = affine_map<(d0, d1, d2) -> (d0, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c4 = affine_map<(d0, d1, d2, d3) -> (d3)>
#bd = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>

func.func @column_sum(%x: tensor<16x8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

func.func @nhwc_channel_sum(%x: tensor<2x3x4x5xf32>, %acc: tensor<5xf32>) -> tensor<5xf32> {
  %s = linalg.generic {indexing_maps = [#id4, #c4], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%x : tensor<2x3x4x5xf32>) outs(%acc : tensor<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<5xf32>
  return %s : tensor<5xf32>
}

func.func @middle_sum(%x: tensor<2x3x4xf32>, %acc: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s = linalg.generic {indexing_maps = [#id3, #outer], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<2x3x4xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

func.func @interleaved(%x: tensor<2x3x4x5xf32>, %acc: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %s = linalg.generic {indexing_maps = [#id4, #bd], iterator_types = ["reduction", "parallel", "reduction", "parallel"]}
      ins(%x : tensor<2x3x4x5xf32>) outs(%acc : tensor<3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<3x5xf32>
  return %s : tensor<3x5xf32>
}

func.func @index_in_body(%x: tensor<16x8xf32>, %acc: tensor<8xi64>) -> tensor<8xi64> {
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%acc : tensor<8xi64>) {
  ^bb0(%in: f32, %out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %j : index
    %c = arith.index_cast %k : index to i64
    %v = arith.addi %c, %out : i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  return %s : tensor<8xi64>
}

func.func @written_transposed(%q: tensor<2x16x32xf32>, %ds: tensor<2x16x16xf32>, %init: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, j, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %ds : tensor<2x16x32xf32>, tensor<2x16x16xf32>) outs(%init : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %r : tensor<2x16x32xf32>
}

func.func @untouched(%x: tensor<16x8xf32>, %r: tensor<16xf32>, %t: tensor<f32>) -> (tensor<16xf32>, tensor<f32>, tensor<16x8xf32>) {
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x8xf32>) outs(%r : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %f = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]}
      ins(%s : tensor<16xf32>) outs(%t : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%x : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x8xf32>
  return %s, %f, %e : tensor<16xf32>, tensor<f32>, tensor<16x8xf32>
}

func.func @exp_column_sum(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<32xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.reduce ins(%ex : tensor<64x32xf32>) outs(%acc : tensor<32xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %v = arith.addf %a, %b : f32
      linalg.yield %v : f32
    }
  %l = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<32xf32>) outs(%e1 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  return %l : tensor<32xf32>
}
