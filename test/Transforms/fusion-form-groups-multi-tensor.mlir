// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups))' | FileCheck %s
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{multi-tensor=0}))' \
// RUN:   | FileCheck %s --check-prefix=NOMT

// Multi-tensor fusion: independent elementwise groups over different
// spaces (an optimizer's update of each parameter) become one group, one
// launch whose blocks each run one of them; nothing is shared but the
// launch. Groups with a path between them, or with reductions, stay apart.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Three parameters of three shapes, each p - 0.1 * g: one group.
// CHECK-LABEL: func.func @three_updates
// CHECK: %[[G:.*]]:3 = fusion.group "g0" "elementwise" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>, tensor<100xf32>, tensor<100xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
// CHECK-SAME: "shares one launch with an independent elementwise group (blocks of its own each; 2 iteration spaces so far)"
// CHECK-SAME: "shares one launch with an independent elementwise group (blocks of its own each; 3 iteration spaces so far)"
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1, %[[G]]#2
// NOMT-LABEL: func.func @three_updates
// NOMT-COUNT-3: fusion.group
// NOMT-NOT: shares one launch
func.func @three_updates(%p0: tensor<8x4xf32>, %g0: tensor<8x4xf32>,
                         %p1: tensor<100xf32>, %g1: tensor<100xf32>,
                         %p2: tensor<3x5xf32>, %g2: tensor<3x5xf32>)
    -> (tensor<8x4xf32>, tensor<100xf32>, tensor<3x5xf32>) {
  %lr = arith.constant 0.1 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %u0 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p0, %g0 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e0 : tensor<8x4xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<100xf32>
  %u1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p1, %g1 : tensor<100xf32>, tensor<100xf32>) outs(%e1 : tensor<100xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<100xf32>
  %e2 = tensor.empty() : tensor<3x5xf32>
  %u2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p2, %g2 : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e2 : tensor<3x5xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<3x5xf32>
  return %u0, %u1, %u2 : tensor<8x4xf32>, tensor<100xf32>, tensor<3x5xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>

// Two gradients scaled by a norm that a reduction of a third computes
// share a launch; the reduction does not join them.
// CHECK-LABEL: func.func @scaled_by_a_norm
// CHECK: fusion.group "g0" "reduction"
// CHECK-NOT: shares one launch
// CHECK: fusion.group "g1" "elementwise"
// CHECK-SAME: shares one launch with an independent elementwise group (blocks of its own each; 2 iteration spaces so far)
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: fusion.group
func.func @scaled_by_a_norm(%a: tensor<16xf32>, %b: tensor<4x3xf32>, %c: tensor<32xf32>) -> (tensor<16xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id1, #sum], iterator_types = ["reduction"]}
      ins(%c : tensor<32xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %v = arith.addf %sq, %acc : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %ea = tensor.empty() : tensor<16xf32>
  %sa = linalg.generic {indexing_maps = [#id1, #sum, #id1], iterator_types = ["parallel"]}
      ins(%a, %n : tensor<16xf32>, tensor<f32>) outs(%ea : tensor<16xf32>) {
  ^bb0(%x: f32, %k: f32, %out: f32):
    %v = arith.mulf %x, %k : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %eb = tensor.empty() : tensor<4x3xf32>
  %sb = linalg.generic {indexing_maps = [#id2, #all, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b, %n : tensor<4x3xf32>, tensor<f32>) outs(%eb : tensor<4x3xf32>) {
  ^bb0(%x: f32, %k: f32, %out: f32):
    %v = arith.mulf %x, %k : f32
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  return %sa, %sb : tensor<16xf32>, tensor<4x3xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#corner = affine_map<(d0) -> (0, 0)>

// Negative: an elementwise group whose result a matmul reads, and one that
// reads the matmul's result, are two launches (a path through the matmul
// joins them).
// CHECK-LABEL: func.func @path_through_a_matmul
// CHECK-NOT: shares one launch
// CHECK: fusion.group "g0" "elementwise"
// CHECK: linalg.matmul
// CHECK: fusion.group "g1" "elementwise"
// CHECK: return
// NOMT-LABEL: func.func @path_through_a_matmul
func.func @path_through_a_matmul(%x: tensor<4x6xf32>, %w: tensor<6x8xf32>, %b: tensor<10xf32>)
    -> (tensor<4x6xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<4x6xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xf32>) outs(%ea : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %ec = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = linalg.matmul ins(%a, %w : tensor<4x6xf32>, tensor<6x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<10xf32>
  %y = linalg.generic {indexing_maps = [#id1, #corner, #id1], iterator_types = ["parallel"]}
      ins(%b, %c : tensor<10xf32>, tensor<4x8xf32>) outs(%eb : tensor<10xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %v = arith.mulf %in, %k : f32
    linalg.yield %v : f32
  } -> tensor<10xf32>
  return %a, %y : tensor<4x6xf32>, tensor<10xf32>
}
