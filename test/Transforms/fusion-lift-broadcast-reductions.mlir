// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,fusion-lift-broadcast-reductions))' | FileCheck %s
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{recompute=never})' | FileCheck %s --check-prefix=NEVER

// fusion-lift-broadcast-reductions: a reduction over rows P read only
// broadcast by ops over finer rows P', beside a reduction over P' and the
// same columns that loads what it reads, is recomputed for every row of P'.

// A masked mean over the middle axis: the count sum_s m[b, s] (rows b) is
// read by the division over (b, h), beside sum_s x[b, s, h] m[b, s].
#x = affine_map<(b, s, h) -> (b, s, h)>
#m = affine_map<(b, s, h) -> (b, s)>
#xr = affine_map<(b, h, s) -> (b, s, h)>
#o = affine_map<(b, h, s) -> (b, h)>
#bs = affine_map<(b, s) -> (b, s)>
#b = affine_map<(b, s) -> (b)>
#bh = affine_map<(b, h) -> (b, h)>
#bh_b = affine_map<(b, h) -> (b)>
#one = affine_map<(b) -> (b)>
// CHECK-LABEL: func.func @masked_mean
// CHECK-SAME: (%[[X:.*]]: tensor<4x48x64xf32>, %{{.*}}: tensor<4x48xf32>)
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x48xf32>) outs(%{{.*}} : tensor<4x48xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[XR:.*]], #[[O:.*]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<4x48x64xf32>)
// The copy of the mask laid out like x * m (what the sum streams)...
// CHECK: %[[C:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[MASK]] : tensor<4x48xf32>) outs(%{{.*}} : tensor<4x48x64xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[A]]
// ...read as the sum reads x * m, counted for every (b, h):
// CHECK: %[[F:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: %[[N:.*]] = linalg.generic {indexing_maps = [#[[XR]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[C]] : tensor<4x48x64xf32>) outs(%[[F]] : tensor<4x64xf32>) attrs =  {fusion.note = "recomputes a reduction over (48) for each of the 256 rows (4, 64) that read it broadcast, instead of once for each of 4 rows (4): the reduction over the same columns beside it loads its inputs already (fusion-lift-broadcast-reductions)"}
// The clamp runs over (b, h), and the division reads it there:
// CHECK: %[[CL:.*]] = linalg.generic {indexing_maps = [#[[BH:.*]], #[[BH]]], iterator_types = ["parallel", "parallel"]} ins(%[[N]] : tensor<4x64xf32>)
// CHECK: arith.maximumf
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[BH]], #[[BH]], #[[BH]]], iterator_types = ["parallel", "parallel"]} ins(%[[SUM]], %[[CL]] : tensor<4x64xf32>, tensor<4x64xf32>)
// CHECK: return %[[Y]]
// One group, one kernel (the mask's producer, read by x * m and by the
// copy, joins it once both have: fusion-form-groups tries the edge again):
// PLAN-LABEL: func.func @masked_mean
// PLAN: fusion.group "g0" "reduction" ins(%{{.*}}, %{{.*}} : tensor<4x48xf32>, tensor<4x48x64xf32>) attributes {decisions = ["recomputes a reduction over (48) for each of the 256 rows (4, 64)
// PLAN-NOT: fusion.group
// NEVER-LABEL: func.func @masked_mean
// NEVER: fusion.group "g0"
// NEVER: fusion.group "g1"
// NEVER-NOT: recomputes a reduction
func.func @masked_mean(%x: tensor<4x48x64xf32>, %score: tensor<4x48xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e2 = tensor.empty() : tensor<4x48xf32>
  %mask = linalg.generic {indexing_maps = [#bs, #bs], iterator_types = ["parallel", "parallel"]}
      ins(%score : tensor<4x48xf32>) outs(%e2 : tensor<4x48xf32>) {
  ^bb0(%a: f32, %o: f32):
    %keep = arith.cmpf ogt, %a, %zero : f32
    %v = arith.select %keep, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x48xf32>
  %e3 = tensor.empty() : tensor<4x48x64xf32>
  %xm = linalg.generic {indexing_maps = [#x, #m, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mask : tensor<4x48x64xf32>, tensor<4x48xf32>) outs(%e3 : tensor<4x48x64xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %p = arith.mulf %a, %w : f32
    linalg.yield %p : f32
  } -> tensor<4x48x64xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#xr, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xm : tensor<4x48x64xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %cnt = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %cl = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%cnt : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%c: f32, %o: f32):
    %v = arith.maximumf %c, %one : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %cl : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// A weighted mean with one weight per position: the weights' total is a
// reduction over every loop (no rows), recomputed for each (b, h).
#x = affine_map<(b, s, h) -> (b, s, h)>
#w = affine_map<(b, s, h) -> (s)>
#xr = affine_map<(b, h, s) -> (b, s, h)>
#o = affine_map<(b, h, s) -> (b, h)>
#s = affine_map<(s) -> (s)>
#all = affine_map<(s) -> ()>
#bh = affine_map<(b, h) -> (b, h)>
#none = affine_map<(b, h) -> ()>
// CHECK-LABEL: func.func @weighted_mean
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<48xf32>) outs(%{{.*}} : tensor<4x48x64xf32>)
// CHECK: fusion.note = "recomputes a reduction over (48) for each of the 256 rows (4, 64) that read it broadcast, instead of once: the reduction over the same columns beside it loads its inputs already (fusion-lift-broadcast-reductions)"
// CHECK-NOT: tensor<f32>
// PLAN-LABEL: func.func @weighted_mean
// PLAN: fusion.group "g0" "reduction"
// PLAN-NOT: fusion.group
func.func @weighted_mean(%x: tensor<4x48x64xf32>, %wt: tensor<48xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x48x64xf32>
  %xw = linalg.generic {indexing_maps = [#x, #w, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %wt : tensor<4x48x64xf32>, tensor<48xf32>) outs(%e3 : tensor<4x48x64xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %p = arith.mulf %a, %w : f32
    linalg.yield %p : f32
  } -> tensor<4x48x64xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#xr, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xw : tensor<4x48x64xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %tot = linalg.generic {indexing_maps = [#s, #all], iterator_types = ["reduction"]}
      ins(%wt : tensor<48xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#bh, #none, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %tot : tensor<4x64xf32>, tensor<f32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// f16: both sums accumulate in f32 and are truncated to f16 before the
// division reads them; the division still meets the sum beside the count
// (through the truncation), so the count is lifted.
#x = affine_map<(b, s, h) -> (b, s, h)>
#m = affine_map<(b, s, h) -> (b, s)>
#xr = affine_map<(b, h, s) -> (b, s, h)>
#o = affine_map<(b, h, s) -> (b, h)>
#bs = affine_map<(b, s) -> (b, s)>
#b = affine_map<(b, s) -> (b)>
#bh = affine_map<(b, h) -> (b, h)>
#bh_b = affine_map<(b, h) -> (b)>
#one = affine_map<(b) -> (b)>
// CHECK-LABEL: func.func @masked_mean_f16
// CHECK: fusion.note = "recomputes a reduction over (48) for each of the 256 rows (4, 64)
// PLAN-LABEL: func.func @masked_mean_f16
// PLAN: fusion.group "g0" "reduction"
// PLAN-NOT: fusion.group
func.func @masked_mean_f16(%x: tensor<4x48x64xf16>, %mask: tensor<4x48xf16>) -> tensor<4x64xf16> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x48x64xf16>
  %xm = linalg.generic {indexing_maps = [#x, #m, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mask : tensor<4x48x64xf16>, tensor<4x48xf16>) outs(%e3 : tensor<4x48x64xf16>) {
  ^bb0(%a: f16, %w: f16, %o: f16):
    %p = arith.mulf %a, %w : f16
    linalg.yield %p : f16
  } -> tensor<4x48x64xf16>
  %e = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#xr, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xm : tensor<4x48x64xf16>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f16, %acc: f32):
    %w = arith.extf %a : f16 to f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %eh = tensor.empty() : tensor<4x64xf16>
  %sumh = linalg.generic {indexing_maps = [#bh, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x64xf32>) outs(%eh : tensor<4x64xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x64xf16>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %cnt = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf16>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f16, %acc: f32):
    %w = arith.extf %a : f16 to f32
    %s = arith.addf %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e1h = tensor.empty() : tensor<4xf16>
  %cnth = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%cnt : tensor<4xf32>) outs(%e1h : tensor<4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4xf16>
  %y = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sumh, %cnth : tensor<4x64xf16>, tensor<4xf16>) outs(%eh : tensor<4x64xf16>) {
  ^bb0(%a: f16, %c: f16, %o: f16):
    %d = arith.divf %a, %c : f16
    linalg.yield %d : f16
  } -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}

// -----

// Left alone: the count is also a result (it is needed over its own rows),
// the sum beside it does not read the mask (the lifted count would load
// what nothing else does), no reduction over (b, h) is beside it, and the
// count's body reads its loop indices.
#x = affine_map<(b, s, h) -> (b, s, h)>
#m = affine_map<(b, s, h) -> (b, s)>
#xr = affine_map<(b, h, s) -> (b, s, h)>
#o = affine_map<(b, h, s) -> (b, h)>
#bs = affine_map<(b, s) -> (b, s)>
#b = affine_map<(b, s) -> (b)>
#bh = affine_map<(b, h) -> (b, h)>
#bh_b = affine_map<(b, h) -> (b)>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: fusion.note
// CHECK: return
// PLAN-LABEL: func.func @left_alone
// PLAN-NOT: recomputes a reduction
func.func @left_alone(%x: tensor<4x48x64xf32>, %mask: tensor<4x48xf32>, %z: tensor<4x64xf32>)
    -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x48x64xf32>
  %xm = linalg.generic {indexing_maps = [#x, #m, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mask : tensor<4x48x64xf32>, tensor<4x48xf32>) outs(%e3 : tensor<4x48x64xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %p = arith.mulf %a, %w : f32
    linalg.yield %p : f32
  } -> tensor<4x48x64xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#xr, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xm : tensor<4x48x64xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %plain = linalg.generic {indexing_maps = [#xr, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x48x64xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  // (returned)
  %cnt = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %cnt : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  // (read beside a sum that does not read the mask)
  %cnt2 = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y2 = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%plain, %cnt2 : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  // (no reduction over (b, h) beside it)
  %cnt3 = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y3 = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%z, %cnt3 : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  // (its body reads a loop index)
  %cnt4 = linalg.generic {indexing_maps = [#bs, #b], iterator_types = ["parallel", "reduction"]}
      ins(%mask : tensor<4x48xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %t = arith.mulf %a, %fi : f32
    %s = arith.addf %t, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %y4 = linalg.generic {indexing_maps = [#bh, #bh_b, #bh], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %cnt4 : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  return %y, %cnt, %y2, %y3, %y4 : tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}
