// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN

// Row reductions: a linalg.generic whose reduction loops all come after its
// parallel loops (the "rows") and whose maps are projected permutations is
// fusible. Elementwise producers fuse into it, consumers that read its
// result through their leading loops (a broadcast along the row) fuse after
// it as row epilogues, and fills that only initialize outputs are cloned into
// the groups. A group holding a reduction has kind "reduction"; it yields
// exactly the values used outside it.
//
// The CHECK prefix runs fusion-form-groups alone, on the IR as written;
// PLAN runs the real planning pipeline, whose fusion-normalize generalizes
// named ops (linalg.fill, linalg.matmul) first and whose canonicalize drops
// the ops the pass leaves unused.

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0) -> ()>
#s0 = affine_map<() -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lead2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>

// sum(exp(x)) over rows: the elementwise producer fuses into the reduction
// (one "reduction" group reading x once); the fill that initializes the
// accumulator is cloned into the group, not an input. Under
// fusion-form-groups alone the original fill stays behind, unused
// (fusion-plan's canonicalize drops it).
// CHECK-LABEL: func.func @sum_exp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x64xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<32x64xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<32x64xf32>):
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[XA]] : tensor<32x64xf32>)
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<32x64xf32>) outs(%[[ACC]] : tensor<32xf32>)
// CHECK: arith.addf
// CHECK: fusion.yield %[[S]] : tensor<32xf32>
// CHECK-NEXT: } -> tensor<32xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<32xf32>

// PLAN-LABEL: func.func @sum_exp
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%{{.*}} : tensor<32x64xf32>) {
// PLAN: fusion.yield %{{.*}} : tensor<32xf32>
// PLAN-NOT: fusion.group
// PLAN: return %[[G]] : tensor<32xf32>
func.func @sum_exp(%x: tensor<32x64xf32>) -> tensor<32xf32> {
  %e0 = tensor.empty() : tensor<32x64xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x64xf32>) outs(%e0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%0 : tensor<32x64xf32>) outs(%acc : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  return %s : tensor<32xf32>
}

// A full reduction of a 1-D tensor to tensor<f32> is a row reduction with
// no rows (zero parallel loops): sqrt(sum(x * x)) is one group, the sqrt over
// the 0-D result being its epilogue.
// CHECK-LABEL: func.func @full_norm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1024xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<1024xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<1024xf32>):
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[XA]] : tensor<1024xf32>)
// CHECK: arith.mulf
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[SQ]] : tensor<1024xf32>) outs(%[[ACC]] : tensor<f32>)
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%[[S]] : tensor<f32>)
// CHECK: math.sqrt
// CHECK: fusion.yield %[[R]] : tensor<f32>
// CHECK-NEXT: } -> tensor<f32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<f32>

// PLAN-LABEL: func.func @full_norm
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%{{.*}} : tensor<1024xf32>) {
// PLAN: math.sqrt
// PLAN: fusion.yield %{{.*}} : tensor<f32>
// PLAN-NOT: fusion.group
// PLAN: return %[[G]] : tensor<f32>
func.func @full_norm(%x: tensor<1024xf32>) -> tensor<f32> {
  %e0 = tensor.empty() : tensor<1024xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<f32>
  %acc = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []}
      ins(%zero : f32) outs(%e1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%sq : tensor<1024xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sqrt %in : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Row softmax: max-reduce, x - max (max broadcast along the row), exp,
// sum-reduce, exp / sum. One kernel: a "reduction" group with one input (x)
// and one result; every intermediate, the row values included, stays inside.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x128xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<16x128xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<16x128xf32>):
// CHECK: %[[MI:.*]] = linalg.generic {{.*}} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[SI:.*]] = linalg.generic {{.*}} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[XA]] : tensor<16x128xf32>) outs(%[[MI]] : tensor<16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[XA]], %[[M]] : tensor<16x128xf32>, tensor<16xf32>)
// CHECK: arith.subf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<16x128xf32>)
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[E]] : tensor<16x128xf32>) outs(%[[SI]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[S]] : tensor<16x128xf32>, tensor<16xf32>)
// CHECK: arith.divf
// CHECK: fusion.yield %[[Y]] : tensor<16x128xf32>
// CHECK-NEXT: } -> tensor<16x128xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<16x128xf32>

// PLAN-LABEL: func.func @softmax
// PLAN-SAME: (%[[X:[^:]*]]: tensor<16x128xf32>)
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<16x128xf32>) {
// PLAN-COUNT-2: ["parallel", "reduction"]
// PLAN: fusion.yield %{{.*}} : tensor<16x128xf32>
// PLAN-NEXT: } -> tensor<16x128xf32>
// PLAN-NEXT: return %[[G]] : tensor<16x128xf32>
func.func @softmax(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x128xf32>
  %minit = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%ninf : f32) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x128xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %sub = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %v = arith.subf %in, %mx : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sub : tensor<16x128xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %sinit = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<16x128xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}

// The same softmax with named linalg.fill inits. fusion-form-groups only
// clones generic fills (isFillLike), so on its own it leaves the two named
// fills outside and they become group inputs (read from memory). The real
// pipeline generalizes named ops first (fusion-normalize), and then the
// fills are cloned: one input, as above.
// CHECK-LABEL: func.func @softmax_named_fill
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x128xf32>)
// CHECK: %[[MI:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>) -> tensor<16xf32>
// CHECK: %[[SI:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>) -> tensor<16xf32>
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[MI]], %[[SI]] : tensor<16x128xf32>, tensor<16xf32>, tensor<16xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<16x128xf32>, %[[MA:[^:]*]]: tensor<16xf32>, %[[SA:[^:]*]]: tensor<16xf32>):
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[XA]] : tensor<16x128xf32>) outs(%[[MA]] : tensor<16xf32>)
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]} ins(%{{.*}} : tensor<16x128xf32>) outs(%[[SA]] : tensor<16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: arith.divf
// CHECK: fusion.yield %[[Y]] : tensor<16x128xf32>
// CHECK-NEXT: } -> tensor<16x128xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<16x128xf32>

// PLAN-LABEL: func.func @softmax_named_fill
// PLAN-SAME: (%[[X:[^:]*]]: tensor<16x128xf32>)
// PLAN-NOT: linalg.fill
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<16x128xf32>) {
// PLAN-NOT: linalg.fill
// PLAN: fusion.yield %{{.*}} : tensor<16x128xf32>
// PLAN-NEXT: } -> tensor<16x128xf32>
// PLAN-NEXT: return %[[G]] : tensor<16x128xf32>
func.func @softmax_named_fill(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x128xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x128xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %sub = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %v = arith.subf %in, %mx : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sub : tensor<16x128xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<16x128xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}

// Layer norm: mean (a row sum and an epilogue over the rows [M]),
// centered = x - mean, a row sum of its squares, rstd = rsqrt(var + eps)
// over [M], then centered * rstd * weight[N] + bias[N]. One group: inputs x,
// weight and bias; one result. Every op runs over the rows [16] or over
// rows x columns [16, 64] of the two reductions.
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x64xf32>, %[[W:[^:]*]]: tensor<64xf32>, %[[B:[^:]*]]: tensor<64xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<16x64xf32>, %[[WA:[^:]*]]: tensor<64xf32>, %[[BA:[^:]*]]: tensor<64xf32>):
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[XA]] : tensor<16x64xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<16xf32>)
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[XA]], %[[MEAN]] : tensor<16x64xf32>, tensor<16xf32>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<16x64xf32>)
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[SQ]] : tensor<16x64xf32>)
// CHECK: %[[RSTD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[VAR]] : tensor<16xf32>)
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[RSTD]], %[[WA]], %[[BA]] : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: fusion.yield %[[Y]] : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<16x64xf32>

// PLAN-LABEL: func.func @layernorm
// PLAN-SAME: (%[[X:[^:]*]]: tensor<16x64xf32>, %[[W:[^:]*]]: tensor<64xf32>, %[[B:[^:]*]]: tensor<64xf32>)
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) {
// PLAN: fusion.yield %{{.*}} : tensor<16x64xf32>
// PLAN-NEXT: } -> tensor<16x64xf32>
// PLAN-NEXT: return %[[G]] : tensor<16x64xf32>
func.func @layernorm(%x: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%sum : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<16x64xf32>, tensor<16xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %mu: f32, %out: f32):
    %v = arith.subf %in, %mu : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %vsum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<16x64xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %rstd = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%vsum : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %var = arith.divf %in, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %rstd, %w, %b : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %r: f32, %wt: f32, %bs: f32, %out: f32):
    %v = arith.mulf %in, %r : f32
    %u = arith.mulf %v, %wt : f32
    %t = arith.addf %u, %bs : f32
    linalg.yield %t : f32
  } -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// The core of that case: c = exp(x), s = rowsum(c), r = rsqrt(s) over the
// rows, y = c * r. When r is visited, c (over [8, 16]) is still needed by y,
// which is not merged yet; r joins anyway because it runs over the rows of
// the group's reduction (a plain broadcast producer would have to wait), and
// then y joins too: one group.
// CHECK-LABEL: func.func @row_scale
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>) {
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xf32>)
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[C]] : tensor<8x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8xf32>)
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[R]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK: fusion.yield %[[Y]] : tensor<8x16xf32>
// CHECK-NEXT: } -> tensor<8x16xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<8x16xf32>
func.func @row_scale(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.rsqrt %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %r : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s2: f32, %out: f32):
    %v = arith.mulf %in, %s2 : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// RMS norm followed by SiLU: the row sum of x * x, the normalizing op
// (x * rsqrt(mean + eps) * weight[N]) as its epilogue, and silu(y) =
// y / (1 + exp(-y)) after it: one group, inputs x and weight.
// CHECK-LABEL: func.func @rmsnorm_silu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x64xf32>, %[[W:[^:]*]]: tensor<64xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<16x64xf32>, %[[WA:[^:]*]]: tensor<64xf32>):
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[XA]] : tensor<16x64xf32>)
// CHECK: %[[SS:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[SQ]] : tensor<16x64xf32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[XA]], %[[SS]], %[[WA]] : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>)
// CHECK: math.rsqrt
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<16x64xf32>)
// CHECK: math.exp
// CHECK: fusion.yield %[[Z]] : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<16x64xf32>

// PLAN-LABEL: func.func @rmsnorm_silu
// PLAN-SAME: (%[[X:[^:]*]]: tensor<16x64xf32>, %[[W:[^:]*]]: tensor<64xf32>)
// PLAN-NOT: linalg.generic
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<64xf32>) {
// PLAN: fusion.yield %{{.*}} : tensor<16x64xf32>
// PLAN-NEXT: } -> tensor<16x64xf32>
// PLAN-NEXT: return %[[G]] : tensor<16x64xf32>
func.func @rmsnorm_silu(%x: tensor<16x64xf32>, %w: tensor<64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %ss = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<16x64xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss, %w : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %s: f32, %wt: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %me = arith.addf %ms, %eps : f32
    %r = math.rsqrt %me : f32
    %v = arith.mulf %in, %r : f32
    %u = arith.mulf %v, %wt : f32
    linalg.yield %u : f32
  } -> tensor<16x64xf32>
  %z = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %ex, %one : f32
    %v = arith.divf %in, %den : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}

// Rows may have several dimensions: a max over the last loop of a 4x8x16
// space, read back as (d0, d1, d2) -> (d0, d1) by its epilogue.
// CHECK-LABEL: func.func @rank3_max
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8x16xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<4x8x16xf32>) {
// CHECK: %[[M:.*]] = linalg.generic {{.*}}["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<4x8x16xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<4x8x16xf32>, tensor<4x8xf32>)
// CHECK: fusion.yield %[[Y]] : tensor<4x8x16xf32>
// CHECK-NEXT: } -> tensor<4x8x16xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]] : tensor<4x8x16xf32>
func.func @rank3_max(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8x16xf32>
  %init = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ninf : f32) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id3, #lead2, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x8x16xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %v = arith.subf %in, %mx : f32
    linalg.yield %v : f32
  } -> tensor<4x8x16xf32>
  return %y : tensor<4x8x16xf32>
}

// The row sum is returned AND read by an epilogue over the full space
// (x / rowsum): still one group, which yields both values (of different
// shapes) and says why the sum is written.
// CHECK-LABEL: func.func @sum_returned
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G:.*]]:2 = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 (32 B): read by 'func.return'"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<8x16xf32>):
// CHECK: %[[S:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[XA]] : tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XA]], %[[S]] : tensor<8x16xf32>, tensor<8xf32>)
// CHECK: arith.divf
// CHECK: fusion.yield %[[S]], %[[Y]] : tensor<8xf32>, tensor<8x16xf32>
// CHECK-NEXT: } -> tensor<8xf32>, tensor<8x16xf32>
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]#0, %[[G]]#1 : tensor<8xf32>, tensor<8x16xf32>
func.func @sum_returned(%x: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x16xf32>, tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.divf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %r, %c : tensor<8xf32>, tensor<8x16xf32>
}

// Negative: r = rowsum(x) : [8] is read by a consumer over [16, 8] through
// (d0, d1) -> (d1), not through its leading loop. Its loops could be the
// rows x columns in another order, but nothing places them (it shares no
// tensor with the reduction), so the consumer starts its own group, which
// reads r from memory (recomputing a reduction is never legal).
// CHECK-LABEL: func.func @transposed_read
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<16x8xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G0:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// CHECK: %[[R:.*]] = linalg.generic {{.*}}["parallel", "reduction"]}
// CHECK: fusion.yield %[[R]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[Y]], %[[G0]] : tensor<16x8xf32>, tensor<8xf32>) attributes {decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]} {
// CHECK-NOT: "reduction"
// CHECK: arith.mulf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<16x8xf32>
// CHECK-NEXT: return %[[G1]] : tensor<16x8xf32>
func.func @transposed_read(%x: tensor<8x16xf32>, %y: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %r : tensor<16x8xf32>, tensor<8xf32>) outs(%e2 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// Negative: a sum over the leading loop (iterator order reduction,
// parallel) is not a row reduction: no group has kind "reduction". It is a
// contraction, in a "contraction" group, with the generalized fill that
// only initializes it cloned in. exp, its producer, stays in its own group
// (a contraction takes no producers, and recomputing exp in it is not
// legal). log runs over the sum's output space ([8], the parallel extent)
// and reads the sum through the identity map: an elementwise epilogue, it
// joins the contraction group, which then yields log's value only.
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x8xf32>)
// CHECK-NOT: "reduction" ins
// CHECK: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<16x8xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// CHECK: math.exp
// CHECK-NOT: math.log
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<16x8xf32>
// CHECK: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[G0]] : tensor<16x8xf32>) attributes {decisions = ["operand #0 stays unfused: producers stay outside contraction groups (a contraction may read each input element many times)"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<16x8xf32>):
// CHECK-NOT: math.exp
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[XA]] : tensor<16x8xf32>) outs(%[[ACC]] : tensor<8xf32>)
// CHECK: arith.addf
// CHECK: %[[L:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<8xf32>)
// CHECK: math.log
// CHECK: fusion.yield %[[L]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: return %[[G1]] : tensor<8xf32>

// Through fusion-normalize, fusion-reductions-last puts the sum's parallel
// loop first (iterator order parallel, reduction; x read at (d1, d0)): a
// column reduction, which takes producers like any reduction. One
// "reduction" group computes exp, the column sum and log; x is its only
// input.
// PLAN-LABEL: func.func @column_sum
// PLAN-SAME: (%[[PX:[^:]*]]: tensor<16x8xf32>)
// PLAN-NOT: fusion.group
// PLAN: %[[PG:.*]] = fusion.group "g0" "reduction" ins(%[[PX]] : tensor<16x8xf32>) {
// PLAN: math.exp
// PLAN: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x8xf32>) outs(%{{.*}} : tensor<8xf32>)
// PLAN: arith.addf
// PLAN: math.log
// PLAN: fusion.yield %{{.*}} : tensor<8xf32>
// PLAN-NEXT: } -> tensor<8xf32>
// PLAN-NEXT: return %[[PG]] : tensor<8xf32>
func.func @column_sum(%x: tensor<16x8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e2 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x8xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%0 : tensor<16x8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %l = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %l : tensor<8xf32>
}

// Negative: s = rowsum(x) over 8 rows of 16 is read along its rows, but by
// an op over 8 x 32: a group with reductions runs one block per row, and its
// ops must run over the rows or the rows x columns of its reductions. The
// consumer starts its own (elementwise) group.
// CHECK-LABEL: func.func @other_columns
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x32xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G0:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<8x16xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// CHECK: %[[S:.*]] = linalg.generic {{.*}}["parallel", "reduction"]}
// CHECK: fusion.yield %[[S]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[Y]], %[[G0]] : tensor<8x32xf32>, tensor<8xf32>) attributes {decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]} {
// CHECK: arith.mulf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<8x32xf32>
// CHECK-NEXT: return %[[G1]] : tensor<8x32xf32>
func.func @other_columns(%x: tensor<8x16xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %s : tensor<8x32xf32>, tensor<8xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %v = arith.mulf %in, %r : f32
    linalg.yield %v : f32
  } -> tensor<8x32xf32>
  return %c : tensor<8x32xf32>
}

// Negative: two row sums over rows of different lengths (16 and 32) cannot
// share a group, even though their sum z is over the same 8 rows: z joins
// the first one, the second stays a group of its own (topologically first).
// CHECK-LABEL: func.func @two_row_lengths
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<8x32xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[G1:.*]] = fusion.group "g1" "reduction" ins(%[[Y]] : tensor<8x32xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g1' for group 'g0': recomputing is not legal here"]} {
// CHECK: %[[S2:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%{{.*}} : tensor<8x32xf32>)
// CHECK: fusion.yield %[[S2]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "reduction" ins(%[[X]], %[[G1]] : tensor<8x16xf32>, tensor<8xf32>) attributes {decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]} {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<8x16xf32>, %[[S2A:[^:]*]]: tensor<8xf32>):
// CHECK: %[[S1:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[XA]] : tensor<8x16xf32>)
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[S1]], %[[S2A]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: fusion.yield %[[Z]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: return %[[G0]] : tensor<8xf32>
func.func @two_row_lengths(%x: tensor<8x16xf32>, %y: tensor<8x32xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<8x32xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s1, %s2 : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %z : tensor<8xf32>
}

// softmax(a @ b): the matmul is no row reduction; generalized (by
// fusion-normalize) it has projected-permutation maps and its reduction
// loop last, but its operands are reused across rows: a contraction, in a
// "contraction" group of its own with its fill cloned in. The softmax row
// reductions are not elementwise epilogues, so the softmax group (kind
// "reduction") reads its result. Under fusion-form-groups alone the named
// linalg.matmul is not grouped at all.
// CHECK-LABEL: func.func @matmul_softmax
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: fusion.group "g0" "reduction" ins(%[[MM]], %{{.*}}, %{{.*}} : tensor<16x128xf32>, tensor<16xf32>, tensor<16xf32>) {

// PLAN-LABEL: func.func @matmul_softmax
// PLAN-SAME: (%[[A:[^:]*]]: tensor<16x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>)
// PLAN-NEXT: %[[MM:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<16x32xf32>, tensor<32x128xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// PLAN-NEXT: ^bb0(%[[AA:[^:]*]]: tensor<16x32xf32>, %[[BA:[^:]*]]: tensor<32x128xf32>):
// PLAN: %[[F:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x128xf32>)
// PLAN-NEXT: ^bb0
// PLAN-NEXT: linalg.yield
// PLAN-NEXT: }
// PLAN-NEXT: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<16x32xf32>, tensor<32x128xf32>) outs(%[[F]] : tensor<16x128xf32>)
// PLAN-NOT: linalg.generic
// PLAN: fusion.yield %[[M]] : tensor<16x128xf32>
// PLAN-NEXT: } -> tensor<16x128xf32>
// PLAN-NEXT: %[[G:.*]] = fusion.group "g1" "reduction" ins(%[[MM]] : tensor<16x128xf32>) attributes {decisions = ["operand #0 stays unfused: only elementwise epilogues over a contraction's output space join its group", "operand #0 stays unfused: merging with its producer would create a cycle through an op outside the group"]} {
// PLAN-NOT: "parallel", "parallel", "reduction"
// PLAN-COUNT-2: ["parallel", "reduction"]
// PLAN: fusion.yield %{{.*}} : tensor<16x128xf32>
// PLAN-NEXT: } -> tensor<16x128xf32>
// PLAN-NEXT: return %[[G]] : tensor<16x128xf32>
func.func @matmul_softmax(%a: tensor<16x32xf32>, %b: tensor<32x128xf32>) -> tensor<16x128xf32> {
  %z0 = arith.constant 0.0 : f32
  %em = tensor.empty() : tensor<16x128xf32>
  %mi = linalg.fill ins(%z0 : f32) outs(%em : tensor<16x128xf32>) -> tensor<16x128xf32>
  %x = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x128xf32>) outs(%mi : tensor<16x128xf32>) -> tensor<16x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x128xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x128xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %sub = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %v = arith.subf %in, %mx : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %e = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sub : tensor<16x128xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<16x128xf32>) outs(%sinit : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<16x128xf32>, tensor<16xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}

// Square matrices: the sums of x's columns have the extents of the sums of
// its rows (16 "rows" of 16), but they reduce over the other dimension. The
// row sum and the row max share their rows and the reads of x; the column
// sum reads x at the same points, its parallel loop on the kernel's columns
// and its reduced loop on the rows (a column sum, folded by the blocks over
// the rows they compute): one group of three.
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @square_row_and_column_sums
// CHECK: %[[G0:.*]]:3 = fusion.group "g0" "reduction" ins(%{{.*}} : tensor<16x16xf32>) attributes {decisions = [{{.*}}"sums 1 reduction over the rows it computes (column sums): partials per block of rows, added up by a second kernel"]}
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: fusion.yield
// CHECK: return %[[G0]]#0, %[[G0]]#1, %[[G0]]#2
func.func @square_row_and_column_sums(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %maxs = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %cols = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %rows, %maxs, %cols : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Square: y = exp(x) summed along its rows and along its columns. The
// column sum reads y where the row sum's blocks compute it (y[r, c] at its
// loops (c | r)): one group, exp computed once per point.
// CHECK-LABEL: func.func @square_exp_row_and_column_sums
// CHECK: %[[G0:.*]]:2 = fusion.group "g0" "reduction"
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: fusion.yield
// CHECK: return %[[G0]]#0, %[[G0]]#1
// PLAN-LABEL: func.func @square_exp_row_and_column_sums
// PLAN: fusion.group "g0" "reduction"
// PLAN-NOT: fusion.group
// PLAN: return
func.func @square_exp_row_and_column_sums(%x: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<16x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %cols = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<16x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %rows, %cols : tensor<16xf32>, tensor<16xf32>
}

#colb2 = affine_map<(d0, d1) -> (d1)>
// Column epilogues: ops over the columns that read only column sums'
// results (a mean's division by the rows, a rounding to f16) join the row
// group and run after every row, where the partials are added up: x's row
// sum, column sum and column mean are one group.
// CHECK-LABEL: func.func @column_epilogue
// CHECK: %[[G0:.*]]:2 = fusion.group "g0" "reduction" ins(%{{.*}} : tensor<16x32xf32>)
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: iterator_types = ["parallel"]
// CHECK: arith.divf
// CHECK: fusion.yield
// CHECK-NOT: fusion.group
// CHECK: return %[[G0]]#0, %[[G0]]#1
// Negative: a column mean that the rows read (x minus it, summed along the
// rows) needs every row before any row can use it: the column sum, its mean
// and the difference run apart from the row sum (over their own rows, x's
// columns), and the row sum's group reads the difference.
// CHECK-LABEL: func.func @column_epilogue_read_by_rows
// CHECK: %[[D:.*]] = fusion.group "g0" "reduction"
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: fusion.group "g1" "reduction" ins(%[[D]] : tensor<16x32xf32>) attributes {decisions = ["operand #0 stays unfused: the merged group would not run over one row space"]}
func.func @column_epilogue(%x: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %er = tensor.empty() : tensor<16xf32>
  %ec = tensor.empty() : tensor<32xf32>
  %racc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%er : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %cacc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ec : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%racc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %cols = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%cacc : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%cols : tensor<32xf32>) outs(%ec : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  return %rows, %mean : tensor<16xf32>, tensor<32xf32>
}

func.func @column_epilogue_read_by_rows(%x: tensor<16x32xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %er = tensor.empty() : tensor<16xf32>
  %ec = tensor.empty() : tensor<32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %racc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%er : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %cacc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ec : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32xf32>
  %cols = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%cacc : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%cols : tensor<32xf32>) outs(%ec : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %d = linalg.generic {indexing_maps = [#id2, #colb2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<16x32xf32>, tensor<32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %v = arith.subf %a, %m : f32
    linalg.yield %v : f32
  } -> tensor<16x32xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<16x32xf32>) outs(%racc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %rows : tensor<16xf32>
}

// Negative: a column sum whose result the rows read (x minus its column
// sums, summed along the rows) needs every row before any row can use it:
// it runs apart from the row sum (with the subtraction, over its own rows:
// x's columns), and the row sum's group reads the difference.
// CHECK-LABEL: func.func @column_sum_read_by_rows
// CHECK: %[[C:.*]] = fusion.group "g0" "reduction"
// CHECK: fusion.group "g1" "reduction" ins(%[[C]] : tensor<16x32xf32>) attributes {decisions = ["operand #0 stays unfused: the merged group would not run over one row space"]}
#colb = affine_map<(d0, d1) -> (d1)>
func.func @column_sum_read_by_rows(%x: tensor<16x32xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<32xf32>
  %er = tensor.empty() : tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %cacc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ec : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32xf32>
  %racc = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%er : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %cols = linalg.generic {indexing_maps = [#tr2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%cacc : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %c = linalg.generic {indexing_maps = [#id2, #colb, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %cols : tensor<16x32xf32>, tensor<32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %v = arith.subf %in, %m : f32
    linalg.yield %v : f32
  } -> tensor<16x32xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<16x32xf32>) outs(%racc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %rows : tensor<16xf32>
}

#gx = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#grow = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#gscale = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#srow = affine_map<(d0, d1, d2) -> (d0, d1)>
#sw = affine_map<(d0, d1, d2) -> (d1, d2)>

// Group norm's shape after normalization: rows (n, g), columns (k, p). The
// per-(n, g, k) scale rstd[n, g] * w[g, k] runs over neither the rows nor
// the full space, and reads a row value: it joins the row group because
// its only reader, the epilogue over (n, g, k, p), evaluates it there and
// reads it at the rows it was written at. (The edge from the row sum to the
// scale is refused while the scale is alone, and taken once the epilogue
// has joined the scale.) One group, x read once.
// CHECK-LABEL: func.func @group_norm_scale
// CHECK: fusion.group "g0" "reduction"
// CHECK-NOT: fusion.group
// CHECK: return
func.func @group_norm_scale(%x: tensor<2x2x2x8xf32>, %w: tensor<2x2xf32>) -> tensor<2x2x2x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %sum = linalg.generic {indexing_maps = [#gx, #grow], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<2x2x2x8xf32>) outs(%f : tensor<2x2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x2x2xf32>
  %scale = linalg.generic {indexing_maps = [#srow, #sw, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e3 : tensor<2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2xf32>
  %e4 = tensor.empty() : tensor<2x2x2x8xf32>
  %y = linalg.generic {indexing_maps = [#gx, #grow, #gscale, #gx], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %scale : tensor<2x2x2x8xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>) outs(%e4 : tensor<2x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = arith.mulf %d, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2x8xf32>
  return %y : tensor<2x2x2x8xf32>
}

// Negative: the scale read at another point than the row it was computed
// for (its rows swapped: (g, n)) cannot join; it is a group of its own.
// CHECK-LABEL: func.func @group_scale_read_elsewhere
// CHECK: fusion.group "g0" "reduction"
// CHECK: fusion.group "g1"
// CHECK: return
func.func @group_scale_read_elsewhere(%x: tensor<2x2x2x8xf32>, %w: tensor<2x2xf32>) -> tensor<2x2x2x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %sum = linalg.generic {indexing_maps = [#gx, #grow], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<2x2x2x8xf32>) outs(%f : tensor<2x2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x2x2xf32>
  %scale = linalg.generic {indexing_maps = [#srow, #sw, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e3 : tensor<2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2xf32>
  %e4 = tensor.empty() : tensor<2x2x2x8xf32>
  %y = linalg.generic {indexing_maps = [#gx, #grow, affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>, #gx], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum, %scale : tensor<2x2x2x8xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>) outs(%e4 : tensor<2x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = arith.mulf %d, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2x8xf32>
  return %y : tensor<2x2x2x8xf32>
}
