// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=never}))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT

// Two chains cross through two reductions:
//   a = exp(x)   b = exp(y)   r1 = rowsum(a)   r2 = rowsum(b)
//   c = b * r1   d = a * r2
// Program order fuses c with b first ({b, c} reads r1, which reads a). Then
// fusing d with a would make {a, d} read r2, which reads {b, c}, which reads
// r1, which reads {a, d}: a cycle between two groups, though not through the
// pair being merged alone. The planner must see that and leave d on its own
// (it used to accept the merge and then fail with "grouping produced a cycle
// (internal error)").

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The order in which the groups and reductions end up after topological
// sorting is not part of the contract: only the dependences are checked.
// CHECK-LABEL: func.func @crossing_reductions
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x16xf32>)
// CHECK-DAG: %[[A:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8x16xf32>)
// CHECK-DAG: %[[R1:.*]] = linalg.generic {{.*}}"reduction"{{.*}} ins(%[[A]] : tensor<8x16xf32>)
// CHECK-DAG: %[[BC:.*]]:2 = fusion.group "g1" "elementwise" ins(%[[Y]], %[[R1]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK-DAG: %[[R2:.*]] = linalg.generic {{.*}}"reduction"{{.*}} ins(%[[BC]]#0 : tensor<8x16xf32>)
// CHECK-DAG: %[[D:.*]] = fusion.group "g2" "elementwise" ins(%[[A]], %[[R2]] : tensor<8x16xf32>, tensor<8xf32>) {{.*}}"operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"
// CHECK: return %[[BC]]#1, %[[D]] : tensor<8x16xf32>, tensor<8x16xf32>

// Exactly three groups, and no error.
// COUNT-NOT: error
// COUNT-COUNT-3: fusion.group
// COUNT-NOT: fusion.group
func.func @crossing_reductions(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b, %r1 : tensor<8x16xf32>, tensor<8xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %r2 : tensor<8x16xf32>, tensor<8xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %c, %d : tensor<8x16xf32>, tensor<8x16xf32>
}
