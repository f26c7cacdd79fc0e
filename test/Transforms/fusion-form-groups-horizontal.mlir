// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{multi-tensor=0}))' | FileCheck %s

// (multi-tensor=0: groups over different spaces, or that share no input,
// would otherwise share a launch; fusion-form-groups.mlir and
// fusion-form-groups-multi-tensor.mlir test that)

// Horizontal fusion: two independent chains over the same iteration space
// that read the same input become one group (one kernel reads %x once).

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @siblings
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<8x16xf32>)
// CHECK-SAME: decisions = ["fused horizontally with an independent sibling that reads the same 512 B of inputs"]
// CHECK-COUNT-2: linalg.generic
// CHECK: fusion.yield
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @siblings(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
}

// Different iteration spaces, or no shared input: separate groups.
// CHECK-LABEL: func.func @not_siblings
// CHECK: fusion.group "g0"
// CHECK-NOT: decisions
// CHECK: fusion.group "g1"
// CHECK-NOT: horizontally
// CHECK: fusion.group "g2"
// CHECK-NOT: horizontally
// CHECK: return
func.func @not_siblings(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  // Reads %x over another space: (d0) only.
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sqrt %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  // Same space, but reads only %y.
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %a, %c, %d : tensor<8x16xf32>, tensor<8xf32>, tensor<8x16xf32>
}

// One fill read by a row epilogue and accumulated into by a sibling row
// reduction (CSE merges equal fills): each use gets its own copy, so the
// reduction's group does not wait for another group to write the fill, and
// the two row groups over %x fuse horizontally.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "reduction" ins(%{{.*}} : tensor<8x16xf32>)
// CHECK-SAME: decisions = ["fused horizontally with an independent sibling that reads the same 512 B of inputs"]
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[FM:.*]] = linalg.generic {{.*}} ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[FA:.*]] = linalg.generic {{.*}} ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x16xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[FA]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x16xf32>) outs(%[[FM]] : tensor<8xf32>)
// CHECK: fusion.yield
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @shared_fill(%x: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %fill = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%ninf : f32) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s, %fill : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %v = arith.maximumf %in, %f : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%fill : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %a, %m : tensor<8xf32>, tensor<8xf32>
}

// A returned fill that an elementwise op also reads: the op gets its own
// copy of the fill, and the returned fill, a group that reads nothing, is
// fused horizontally with it over the same space (one kernel writes both).
// CHECK-LABEL: func.func @returned_fill_beside_its_reader
// CHECK: fusion.group "g{{[0-9]+}}" "elementwise" ins(%{{.*}} : tensor<8x16xf32>)
// CHECK-SAME: decisions = ["fused horizontally with an independent sibling over the same space that reads no input"]
// CHECK-NOT: fusion.group
// CHECK: return
func.func @returned_fill_beside_its_reader(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%two : f32) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %f : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %f, %y : tensor<8x16xf32>, tensor<8x16xf32>
}

// Negative: a fill over another space stays a group of its own.
// CHECK-LABEL: func.func @returned_fill_over_another_space
// CHECK-COUNT-2: fusion.group
// CHECK-NOT: fused horizontally
// CHECK: return
func.func @returned_fill_over_another_space(%x: tensor<8x16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %two = arith.constant 2.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%two : f32) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %f : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %f, %y : tensor<16xf32>, tensor<8x16xf32>
}
