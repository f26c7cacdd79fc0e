// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=auto}))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=never}))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,NEVER
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=always}))' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,ALWAYS
//
// The fusion-plan pipeline forwards its option string to the pass (and then
// canonicalizes, which drops the dead tensor.empty ops the pass leaves).
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-plan{recompute=never})' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-plan{recompute=always})' \
// RUN:   | FileCheck %s --check-prefix=PLANALWAYS
//
// A recompute policy that does not exist is an error, from the pass and from
// the pipeline.
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=sometimes}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-plan{recompute=sometimes})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: error: fusion-form-groups: option recompute must be 'auto', 'never' or 'always', got 'sometimes'
// BADOPT-NOT: fusion.group
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{multi-tensor=0}))' \
// RUN:   | FileCheck %s --check-prefix=NOMT

// Every elementwise linalg.generic ends up in exactly one fusion.group;
// other ops stay outside and end fusion. Row reductions (reduction loops
// after the parallel ones) are fusible too: they are tested in
// fusion-form-groups-reductions.mlir. A reduction over the LEADING dimension
// (iterator order ["reduction", "parallel"], read back as (d0, d1) -> (d1))
// is not a row reduction but a "contraction": it gets a group of its own,
// which no producer joins and which only elementwise epilogues over its
// output space (the parallel extents, in loop order, read through the
// identity map) join (contractions are tested in
// fusion-form-groups-contractions.mlir). The cases about recomputation and
// cycles below need an op that no group may take, so they go through a row
// slice of the value (tensor.extract_slice, which the planner never groups),
// or through a named op (linalg.matmul: the pass alone does not generalize
// it).

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// A column sum's (or a row slice's) result, indexed by the inner loop of a
// 2-D space.
#inner = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0) -> (d0, 0)>

// A chain of three elementwise ops becomes one group: one kernel, and the
// intermediates never leave it.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1024xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[G:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<1024xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: tensor<1024xf32>):
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<1024xf32>)
// CHECK: math.exp
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1024xf32>)
// CHECK: arith.addf
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<1024xf32>)
// CHECK: math.log
// CHECK: fusion.yield %[[L]] : tensor<1024xf32>
// CHECK-NEXT: } -> tensor<1024xf32>
// CHECK-NOT: fusion.group
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]] : tensor<1024xf32>

// PLAN-LABEL: func.func @chain
// PLAN-NOT: tensor.empty
// PLAN: fusion.group "g0" "elementwise"
// PLAN-COUNT-3: linalg.generic
// PLAN: fusion.yield
// PLAN-NOT: fusion.group
// PLAN: return
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e0 = tensor.empty() : tensor<1024xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%0 : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.0 : f32
    %v = arith.addf %in, %c : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%1 : tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// A producer with two consumers in its own group, also returned twice: the
// group yields it once, next to the two consumers (a multi-result group), and
// says why it is written.
// CHECK-LABEL: func.func @two_consumers
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1024xf32>)
// CHECK: %[[G:.*]]:3 = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<1024xf32>)
// CHECK-SAME: attributes {decisions = ["materializes result #0 of op 0 (4096 B): read by 'func.return'"]} {
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1024xf32>)
// CHECK: math.exp
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1024xf32>)
// CHECK: arith.addf
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1024xf32>)
// CHECK: arith.mulf
// CHECK: fusion.yield %[[E]], %[[A]], %[[B]] : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[G]]#0 :
func.func @two_consumers(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %e0 = tensor.empty() : tensor<1024xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%e : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%e : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  return %e, %a, %b, %e : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

// A reduction over the leading dimension splits the chain: it is a
// contraction, in a "contraction" group that exp and mul (a producer) do
// not join; its (named, so not cloned) linalg.fill is an input of that
// group. log and sqrt are elementwise epilogues over the column sum's output
// space ([128], the parallel extent, read through the identity map): they
// join the contraction group, which yields sqrt's value only (no other group
// reads the sum, so nothing in g1 is materialized and g1 carries no
// materialize decision under any recompute policy).
// CHECK-LABEL: func.func @split_by_column_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// CHECK: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>)
// CHECK-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1':
// AUTO-SAME: recomputing is not legal here"]} {
// ALWAYS-SAME: recomputing is not legal here"]} {
// NEVER-SAME: recompute=never"]} {
// CHECK-NOT: "reduction"
// CHECK-COUNT-2: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NOT: "reduction"
// CHECK-NOT: math.log
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[G0]], %[[F]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #0 stays unfused: producers stay outside contraction groups (a contraction may read each input element many times)"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<64x128xf32>, %[[FA:[^:]*]]: tensor<128xf32>):
// CHECK-NOT: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[XA]] : tensor<64x128xf32>) outs(%[[FA]] : tensor<128xf32>)
// CHECK-NOT: math.exp
// CHECK: %[[L:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<128xf32>)
// CHECK: math.log
// CHECK: %[[Q:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[L]] : tensor<128xf32>)
// CHECK: math.sqrt
// CHECK: fusion.yield %[[Q]] : tensor<128xf32>
// CHECK-NEXT: } -> tensor<128xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G1]] : tensor<128xf32>
func.func @split_by_column_reduction(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %s = linalg.generic {indexing_maps = [#id2, #inner], iterator_types = ["reduction", "parallel"]}
      ins(%1 : tensor<64x128xf32>) outs(%acc : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<128xf32>) outs(%e1 : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%2 : tensor<128xf32>) outs(%e1 : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sqrt %in : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  return %3 : tensor<128xf32>
}

// Negative: the column sum read back over ANOTHER space, [64, 128] (a
// broadcast of s along the rows, through (d0, d1) -> (d1)), is no epilogue
// of the contraction: y starts its own group and reads s from memory
// (recomputing a contraction is never legal, even under recompute=always).
// CHECK-LABEL: func.func @column_sum_broadcast
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[X]], %[[F]] : tensor<64x128xf32>, tensor<128xf32>)
// AUTO-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// ALWAYS-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<64x128xf32>, %[[FA:[^:]*]]: tensor<128xf32>):
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[XA]] : tensor<64x128xf32>) outs(%[[FA]] : tensor<128xf32>)
// CHECK-NOT: arith.divf
// CHECK: fusion.yield %[[S]] : tensor<128xf32>
// CHECK-NEXT: } -> tensor<128xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[G0]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #1 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// CHECK-NOT: "reduction"
// CHECK: arith.divf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G1]] : tensor<64x128xf32>
func.func @column_sum_broadcast(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %s = linalg.generic {indexing_maps = [#id2, #inner], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%acc : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %y = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x128xf32>, tensor<128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// Column centering: the column mean m = s / 64 is an epilogue over the
// contraction's output space and joins it; y = x - m reads m broadcast back
// over [64, 128]: it runs over another space than the contraction group's
// ops, so it stays in a group of its own, which reads m (g0 yields m, not
// s).
// CHECK-LABEL: func.func @column_mean_broadcast
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[X]], %[[F]] : tensor<64x128xf32>, tensor<128xf32>)
// AUTO-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// ALWAYS-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<64x128xf32>, %[[FA:[^:]*]]: tensor<128xf32>):
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[XA]] : tensor<64x128xf32>) outs(%[[FA]] : tensor<128xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<128xf32>)
// CHECK: arith.divf
// CHECK-NOT: arith.subf
// CHECK: fusion.yield %[[M]] : tensor<128xf32>
// CHECK-NEXT: } -> tensor<128xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[G0]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]} {
// CHECK-NOT: "reduction"
// CHECK: arith.subf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G1]] : tensor<64x128xf32>
func.func @column_mean_broadcast(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %s = linalg.generic {indexing_maps = [#id2, #inner], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%acc : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<128xf32>) outs(%e1 : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %y = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<64x128xf32>, tensor<128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %mu: f32, %out: f32):
    %v = arith.subf %in, %mu : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// A named op such as linalg.matmul is opaque to the pass alone (only
// linalg.generic ops are grouped; fusion-normalize would generalize it into a
// contraction): it stays outside, between two groups.
// CHECK-LABEL: func.func @split_by_matmul
// CHECK-SAME: (%[[A:[^:]*]]: tensor<16x16xf32>, %[[B:[^:]*]]: tensor<16x16xf32>)
// CHECK: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[A]] : tensor<16x16xf32>) {
// CHECK-NOT: linalg.matmul
// CHECK: math.exp
// CHECK-NOT: linalg.matmul
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<16x16xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[G0]], %[[B]] : tensor<16x16xf32>, tensor<16x16xf32>)
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[M]] : tensor<16x16xf32>) {
// CHECK-NOT: linalg.matmul
// CHECK: math.tanh
// CHECK-NOT: linalg.matmul
// CHECK: return %[[G1]] : tensor<16x16xf32>
func.func @split_by_matmul(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %m = linalg.matmul ins(%0, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}

// The consumer c reads exp's value and a row slice of it: putting c into
// exp's group would make the group depend on itself through the slice (an op
// outside every group), so c starts its own group. Then exp's value is
// needed by two kernels: recomputing it costs reading x (32768 B),
// materializing it costs reading it back (32768 B; it is written for the
// slice anyway). A tie materializes under auto.
// CHECK-LABEL: func.func @cycle
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// CHECK: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>)
// AUTO-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': re-reading its inputs costs 32768 B, materializing 32768 B"]} {
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]} {
// ALWAYS-SAME: {{^ \{$}}
// CHECK: math.exp
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>{{$}}
// CHECK: %[[S:.*]] = tensor.extract_slice %[[G0]][0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
// AUTO: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// NEVER: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// ALWAYS: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"
// AUTO-SAME: ]} {
// NEVER-SAME: ]} {
// ALWAYS-SAME: , "recomputes result #0 of op 0 of group 'g0': recompute=always"]} {
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: tensor<64x128xf32>, %[[SA:[^:]*]]: tensor<128xf32>):
// AUTO-NOT: math.exp
// NEVER-NOT: math.exp
// ALWAYS: %[[EC:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<64x128xf32>)
// ALWAYS: math.exp
// ALWAYS: linalg.generic {{.*}} ins(%[[EC]], %[[SA]] : tensor<64x128xf32>, tensor<128xf32>)
// AUTO: linalg.generic {{.*}} ins(%[[IN]], %[[SA]] : tensor<64x128xf32>, tensor<128xf32>)
// NEVER: linalg.generic {{.*}} ins(%[[IN]], %[[SA]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK: arith.divf
// CHECK: fusion.yield
// CHECK-NOT: fusion.group
// CHECK: return %[[G1]] : tensor<64x128xf32>
func.func @cycle(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %s = tensor.extract_slice %e[0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
  %c = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<64x128xf32>, tensor<128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %c : tensor<64x128xf32>
}

// exp's value feeds a (in its own group) and c (another group, split off by
// the cycle through the row slice of a), and nothing else needs it in
// memory:
// materializing costs a write and a read (65536 B), recomputing a read of x
// (32768 B), so auto recomputes exp inside g1 and g0 no longer yields it.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// AUTO: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>) {
// ALWAYS: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>) {
// NEVER: %[[G0:.*]]:2 = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>)
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<64x128xf32>)
// CHECK: arith.addf
// AUTO: fusion.yield %[[A]] : tensor<64x128xf32>
// ALWAYS: fusion.yield %[[A]] : tensor<64x128xf32>
// NEVER: fusion.yield %[[E]], %[[A]] : tensor<64x128xf32>, tensor<64x128xf32>
// AUTO: %[[S:.*]] = tensor.extract_slice %[[G0]][0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
// ALWAYS: %[[S:.*]] = tensor.extract_slice %[[G0]][0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
// NEVER: %[[S:.*]] = tensor.extract_slice %[[G0]]#1[0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
// AUTO: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// ALWAYS: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// NEVER: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]]#0, %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"
// AUTO-SAME: , "recomputes result #0 of op 0 of group 'g0': re-reading its inputs costs 32768 B, materializing 65536 B"]} {
// ALWAYS-SAME: , "recomputes result #0 of op 0 of group 'g0': recompute=always"]} {
// NEVER-SAME: ]} {
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: tensor<64x128xf32>, %[[SA:[^:]*]]: tensor<128xf32>):
// AUTO: %[[EC:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<64x128xf32>)
// AUTO: math.exp
// AUTO: linalg.generic {{.*}} ins(%[[EC]], %[[SA]] :
// ALWAYS: %[[EC:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<64x128xf32>)
// ALWAYS: math.exp
// ALWAYS: linalg.generic {{.*}} ins(%[[EC]], %[[SA]] :
// NEVER-NOT: math.exp
// NEVER: linalg.generic {{.*}} ins(%[[IN]], %[[SA]] :
// CHECK: arith.mulf
// CHECK: fusion.yield
// AUTO: return %[[G0]], %[[G1]] :
// ALWAYS: return %[[G0]], %[[G1]] :
// NEVER: return %[[G0]]#1, %[[G1]] :

// The pipeline option reaches the pass: fusion-plan{recompute=never}
// materializes, fusion-plan{recompute=always} recomputes.
// PLAN-LABEL: func.func @shared
// PLAN: %[[G0:.*]]:2 = fusion.group "g0" "elementwise"
// PLAN-SAME: decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]
// PLAN: fusion.group "g1" "elementwise" ins(%[[G0]]#0,
// PLAN-NOT: recomputes
// PLAN: return
// PLANALWAYS-LABEL: func.func @shared
// PLANALWAYS: %[[G0:.*]] = fusion.group "g0" "elementwise"
// PLANALWAYS-NOT: decisions
// PLANALWAYS: fusion.group "g1" "elementwise"
// PLANALWAYS-SAME: "recomputes result #0 of op 0 of group 'g0': recompute=always"
// PLANALWAYS: math.exp
// PLANALWAYS: return %[[G0]],
func.func @shared(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %v = arith.addf %in, %one : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %s = tensor.extract_slice %a[0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
  %c = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<64x128xf32>, tensor<128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.mulf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %a, %c : tensor<64x128xf32>, tensor<64x128xf32>
}

// The producer writes x into a column (output map (d0) -> (d0, 0), not a
// permutation): elementwise fusion cannot merge it into its consumer, which
// starts a new group reading the materialized value; recomputing is not
// legal either.
// CHECK-LABEL: func.func @unmergeable_map
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8xf32>)
// AUTO-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// ALWAYS-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK: math.exp
// CHECK: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]] : tensor<8x1xf32>)
// CHECK-SAME: attributes {decisions = ["operand #0 is read through an indexing map that elementwise fusion cannot merge"]} {
// CHECK-NOT: math.exp
// CHECK: arith.negf
// CHECK: return %[[G1]]
func.func @unmergeable_map(%x: tensor<8xf32>) -> tensor<8x1xf32> {
  %e0 = tensor.empty() : tensor<8x1xf32>
  %0 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e0 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x1xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<8x1xf32>) outs(%e0 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<8x1xf32>
  return %1 : tensor<8x1xf32>
}

// Unrelated elementwise ops share one launch (multi-tensor): one group,
// each op over blocks of its own. With multi-tensor=0, one group each.
// CHECK-LABEL: func.func @independent
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[Y:[^:]*]]: tensor<8xf16>)
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "elementwise" ins(%[[X]], %[[Y]] : tensor<8xf32>, tensor<8xf16>)
// CHECK-SAME: decisions = ["shares one launch with an independent elementwise group (blocks of its own each; 1 iteration space so far)"]
// CHECK: math.exp
// CHECK: arith.negf
// CHECK: return %[[G]]#0, %[[G]]#1
// NOMT-LABEL: func.func @independent
// NOMT-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[Y:[^:]*]]: tensor<8xf16>)
// NOMT: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8xf32>) {
// NOMT-NOT: arith.negf
// NOMT: math.exp
// NOMT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[Y]] : tensor<8xf16>) {
// NOMT-NOT: math.exp
// NOMT: arith.negf
// NOMT: return %[[G0]], %[[G1]]
func.func @independent(%x: tensor<8xf32>, %y: tensor<8xf16>) -> (tensor<8xf32>, tensor<8xf16>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf16>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf16>) outs(%e1 : tensor<8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %v = arith.negf %in : f16
    linalg.yield %v : f16
  } -> tensor<8xf16>
  return %0, %1 : tensor<8xf32>, tensor<8xf16>
}

// Nothing to group, and declarations are skipped.
// CHECK-LABEL: func.func @nothing
// CHECK-NOT: fusion.group
// CHECK: return
func.func @nothing(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// q = sin(exp(x)) feeds g1 too, but q reads a value of its own group, so it
// cannot be recomputed there even with recompute=always.
// CHECK-LABEL: func.func @not_legal
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// CHECK: %[[G0:.*]]:2 = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>)
// AUTO-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// ALWAYS-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// NEVER-SAME: attributes {decisions = ["materializes result #0 of op 1 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK: math.exp
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: math.sin
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[Q]] :
// CHECK: math.cos
// CHECK: fusion.yield %[[Q]], %[[A]] :
// CHECK: %[[S:.*]] = tensor.extract_slice %[[G0]]#1[0, 0] [1, 128] [1, 1] :
// CHECK: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]]#0, %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"]} {
// CHECK-NOT: math.sin
// CHECK: arith.mulf
// CHECK: return %[[G0]]#1, %[[G1]] :
func.func @not_legal(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sin %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.cos %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %s = tensor.extract_slice %a[0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
  %c = linalg.generic {indexing_maps = [#id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<64x128xf32>, tensor<128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.mulf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %a, %c : tensor<64x128xf32>, tensor<64x128xf32>
}

// c already reads x, so recomputing exp in its group reads nothing more
// (0 B) and auto recomputes; x stays a single input of g1.
// CHECK-LABEL: func.func @free_recompute
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x128xf32>)
// AUTO: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>) {
// ALWAYS: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>) {
// NEVER: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<64x128xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recompute=never"]} {
// CHECK: %[[S:.*]] = tensor.extract_slice %[[G0]][0, 0] [1, 128] [1, 1] :
// AUTO: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// AUTO-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group", "recomputes result #0 of op 0 of group 'g0': re-reading its inputs costs 0 B, materializing 32768 B"]} {
// ALWAYS: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[X]], %[[S]] : tensor<64x128xf32>, tensor<128xf32>)
// ALWAYS-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group", "recomputes result #0 of op 0 of group 'g0': recompute=always"]} {
// NEVER: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]], %[[X]], %[[S]] : tensor<64x128xf32>, tensor<64x128xf32>, tensor<128xf32>)
// NEVER-SAME: attributes {decisions = ["operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"]} {
// NEVER-NOT: recomputes
// NEVER-NOT: math.exp
// AUTO: math.exp
// ALWAYS: math.exp
// CHECK: arith.mulf
// CHECK: return %[[G0]], %[[G1]] :
func.func @free_recompute(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %s = tensor.extract_slice %e[0, 0] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<128xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2, #inner, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %x, %s : tensor<64x128xf32>, tensor<64x128xf32>, tensor<128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %xx: f32, %sum: f32, %out: f32):
    %v = arith.mulf %in, %sum : f32
    %w = arith.addf %v, %xx : f32
    linalg.yield %w : f32
  } -> tensor<64x128xf32>
  return %e, %c : tensor<64x128xf32>, tensor<64x128xf32>
}
