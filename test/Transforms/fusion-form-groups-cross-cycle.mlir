// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=never}))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,NEVER
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT

// Two chains cross through two ops the planner never groups (row slices,
// tensor.extract_slice):
//   a = exp(x)   b = exp(y)   r1 = a[0, :]   r2 = b[0, :]
//   c = b * r1   d = a * r2
// Program order fuses c with b first ({b, c} reads r1, which reads a). Then
// fusing d with a would make {a, d} read r2, which reads {b, c}, which reads
// r1, which reads {a, d}: a cycle between two groups, though not through the
// pair being merged alone. The planner must see that and leave d on its own
// (it used to accept the merge and then fail with "grouping produced a cycle
// (internal error)").

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#inner = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0) -> ()>

// The order in which the groups and slices end up after topological sorting
// is not part of the contract: only the dependences are checked.
// CHECK-LABEL: func.func @crossing_slices
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x16xf32>)
// AUTO-DAG: %[[A:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g2': re-reading its inputs costs 512 B, materializing 512 B"]} {
// NEVER-DAG: %[[A:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g2': recompute=never"]} {
// CHECK-DAG: %[[R1:.*]] = tensor.extract_slice %[[A]][0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
// CHECK-DAG: %[[BC:.*]]:2 = fusion.group "g1" "elementwise" ins(%[[Y]], %[[R1]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["materializes result #0 of op 0 (512 B): read by 'tensor.extract_slice'"]} {
// CHECK-DAG: %[[R2:.*]] = tensor.extract_slice %[[BC]]#0[0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
// CHECK-DAG: %[[D:.*]] = fusion.group "g2" "elementwise" ins(%[[A]], %[[R2]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"]} {
// CHECK: return %[[BC]]#1, %[[D]] : tensor<8x16xf32>, tensor<8x16xf32>

// Exactly three groups, and no error.
// COUNT-NOT: error
// COUNT-LABEL: func.func @crossing_slices
// COUNT-COUNT-3: fusion.group
// COUNT-NOT: fusion.group
// COUNT-LABEL: func.func @crossing_column_reductions
func.func @crossing_slices(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e0 = tensor.empty() : tensor<8x16xf32>
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
  %r1 = tensor.extract_slice %a[0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
  %r2 = tensor.extract_slice %b[0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b, %r1 : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %r2 : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %c, %d : tensor<8x16xf32>, tensor<8x16xf32>
}

// The same crossing through column sums (sums over the LEADING dimension,
// iterator order ["reduction", "parallel"]): each is a contraction, in a
// "contraction" group of its own that neither its producer (a, b) nor its
// consumer (c, d: they read the sums through (d0, d1) -> (d1), not as
// epilogues over the sums' output space) joins. The cycle is now closed
// through those two groups, and d still stays on its own. A value read by a
// contraction group is always materialized (recomputing a producer there is
// not legal), so under auto recomputing it for d's group would save no
// write: 512 B re-read against 512 B read back, a tie, which materializes.
// CHECK-LABEL: func.func @crossing_column_reductions
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x16xf32>)
// CHECK-DAG: %[[ACC:.*]] = linalg.fill
// AUTO-DAG: %[[A:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g4': re-reading its inputs costs 512 B, materializing 512 B", "materializes result #0 of op 0 of group 'g0' for group 'g2': recomputing is not legal here"]} {
// NEVER-DAG: %[[A:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g4': recompute=never", "materializes result #0 of op 0 of group 'g0' for group 'g2': recompute=never"]} {
// CHECK-DAG: %[[R1:.*]] = fusion.group "g2" "contraction" ins(%[[A]], %[[ACC]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #0 stays unfused: producers stay outside contraction groups (a contraction may read each input element many times)", "materializes result #0 of op 0 of group 'g2' for group 'g1': {{recomputing is not legal here|recompute=never}}"]} {
// CHECK-DAG: %[[BC:.*]]:2 = fusion.group "g1" "elementwise" ins(%[[Y]], %[[R1]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #1 stays unfused: only elementwise epilogues over a contraction's output space join its group", "materializes result #0 of op 0 of group 'g1' for group 'g3': {{recomputing is not legal here|recompute=never}}"]} {
// CHECK-DAG: %[[R2:.*]] = fusion.group "g3" "contraction" ins(%[[BC]]#0, %[[ACC]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #0 stays unfused: producers stay outside contraction groups (a contraction may read each input element many times)", "materializes result #0 of op 0 of group 'g3' for group 'g4': {{recomputing is not legal here|recompute=never}}"]} {
// AUTO-DAG: %[[D:.*]] = fusion.group "g4" "elementwise" ins(%[[A]], %[[R2]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group", "operand #1 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// NEVER-DAG: %[[D:.*]] = fusion.group "g4" "elementwise" ins(%[[A]], %[[R2]] : tensor<8x16xf32>, tensor<16xf32>) attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group", "operand #1 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// CHECK: return %[[BC]]#1, %[[D]] : tensor<8x16xf32>, tensor<8x16xf32>

// Five groups (two of them contractions), and no error.
// COUNT-COUNT-5: fusion.group
// COUNT-NOT: fusion.group
// COUNT-LABEL: func.func @crossing_row_reductions
func.func @crossing_column_reductions(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
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
  %r1 = linalg.generic {indexing_maps = [#id2, #inner], iterator_types = ["reduction", "parallel"]}
      ins(%a : tensor<8x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #inner], iterator_types = ["reduction", "parallel"]}
      ins(%b : tensor<8x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b, %r1 : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %r2 : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %c, %d : tensor<8x16xf32>, tensor<8x16xf32>
}

// The same crossing through row sums (reduction loop last, initialized by a
// generalized fill): row reductions are fusible and the epilogues c and d
// read r1 and r2 as (d0, d1) -> (d0), so everything is one "reduction" group
// that reads x and y and yields c and d; no op is left outside to close a
// cycle. The fill is cloned into the group, not an input.
// CHECK-LABEL: func.func @crossing_row_reductions
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x16xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "reduction" ins(%[[X]], %[[Y]] : tensor<8x16xf32>, tensor<8x16xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<8x16xf32>, %[[YA:[^:]*]]: tensor<8x16xf32>):
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.*}} : f32)
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[XA]] : tensor<8x16xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[YA]] : tensor<8x16xf32>)
// CHECK: %[[R1:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[A]] : tensor<8x16xf32>) outs(%[[ACC]] : tensor<8xf32>)
// CHECK: %[[R2:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[B]] : tensor<8x16xf32>) outs(%[[ACC]] : tensor<8xf32>)
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[R1]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[R2]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK: fusion.yield %[[C]], %[[D]] : tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: } -> tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1 : tensor<8x16xf32>, tensor<8x16xf32>

// COUNT: fusion.group "g0" "reduction"
// COUNT-NOT: fusion.group
func.func @crossing_row_reductions(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
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
