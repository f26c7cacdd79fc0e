// fusion-form-groups{max-buffers}: no merge makes a group whose kernel is
// passed more than max-buffers buffers (tensors read from outside the
// group, results read outside it; default 512, 4 KB of kernel
// parameters): multi-tensor, vertical and horizontal merges and
// recomputation all stop at it, and a refused producer edge says why.
//
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{max-buffers=6}))' \
// RUN:   | FileCheck %s --check-prefix=SIX
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{max-buffers=4 recompute=always}))' \
// RUN:   | FileCheck %s --check-prefix=FOUR
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{max-buffers=3 recompute=always}))' \
// RUN:   | FileCheck %s --check-prefix=THREE
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{max-buffers=2}))' \
// RUN:   | FileCheck %s --check-prefix=TWO
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups{max-buffers=5}))' \
// RUN:   | FileCheck %s --check-prefix=FIVE

// Three parameters' updates (2 reads and 1 write each): one launch by
// default; with 6 buffers the first two share one, the third runs apart;
// with 4 each runs alone.
// DEFAULT-LABEL: func.func @three_updates
// DEFAULT-COUNT-1: fusion.group "g0" "elementwise" ins(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} :
// DEFAULT-NOT: fusion.group
// SIX-LABEL: func.func @three_updates
// SIX: fusion.group "g0" "elementwise" ins(%arg0, %arg1, %arg2, %arg3 :
// SIX: fusion.group "g1" "elementwise" ins(%arg4, %arg5 :
// FOUR-LABEL: func.func @three_updates
// FOUR: fusion.group "g0" "elementwise" ins(%arg0, %arg1 :
// FOUR: fusion.group "g1" "elementwise" ins(%arg2, %arg3 :
// FOUR: fusion.group "g2" "elementwise" ins(%arg4, %arg5 :
#id1 = affine_map<(d0) -> (d0)>

func.func @three_updates(%p0: tensor<8xf32>, %g0: tensor<8xf32>,
                         %p1: tensor<100xf32>, %g1: tensor<100xf32>,
                         %p2: tensor<3xf32>, %g2: tensor<3xf32>)
    -> (tensor<8xf32>, tensor<100xf32>, tensor<3xf32>) {
  %lr = arith.constant 0.1 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %u0 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p0, %g0 : tensor<8xf32>, tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<100xf32>
  %u1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p1, %g1 : tensor<100xf32>, tensor<100xf32>) outs(%e1 : tensor<100xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<100xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %u2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p2, %g2 : tensor<3xf32>, tensor<3xf32>) outs(%e2 : tensor<3xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %v = arith.subf %p, %s : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %u0, %u1, %u2 : tensor<8xf32>, tensor<100xf32>, tensor<3xf32>
}

// -----

// A chain x0 + x1 + x2 + x3: one group by default and with 6 buffers (4
// reads, 1 write); with 4, the last add runs apart and says why.
// DEFAULT-LABEL: func.func @chain
// DEFAULT: fusion.group "g0" "elementwise" ins(%arg0, %arg1, %arg2, %arg3 :
// DEFAULT-NOT: fusion.group
// SIX-LABEL: func.func @chain
// SIX: fusion.group "g0" "elementwise" ins(%arg0, %arg1, %arg2, %arg3 :
// SIX-NOT: fusion.group
// FOUR-LABEL: func.func @chain
// FOUR: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%arg0, %arg1, %arg2 :
// FOUR: fusion.group "g1" "elementwise" ins(%[[G0]], %arg3 :
// FOUR-SAME: "operand #0 stays unfused: the merged group would pass its kernel more than 4 buffers"

#id1 = affine_map<(d0) -> (d0)>

func.func @chain(%x0: tensor<16xf32>, %x1: tensor<16xf32>, %x2: tensor<16xf32>,
                 %x3: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x0, %x1 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%a, %x2 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b, %x3 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

// Two readers of x (1 read, 2 writes together): fused horizontally unless
// the kernel may take only 2 buffers.
// DEFAULT-LABEL: func.func @siblings
// DEFAULT: fusion.group "g0" "elementwise" ins(%arg0 :
// DEFAULT-SAME: "fused horizontally with an independent sibling
// DEFAULT-NOT: fusion.group
// SIX-LABEL: func.func @siblings
// TWO-LABEL: func.func @siblings
// TWO: fusion.group "g0" "elementwise" ins(%arg0 :
// TWO-NOT: fused horizontally
// TWO: fusion.group "g1" "elementwise" ins(%arg0 :

#id1 = affine_map<(d0) -> (d0)>

func.func @siblings(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %out: f32):
    %s = math.exp %u : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %out: f32):
    %s = math.tanh %u : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// p = x0 + x1 read by q = p * x2 and r = p - x3, returned: merging p with
// either passes 5 buffers (p is read by the other too). With 4 and
// recompute=always, each reader recomputes p (then reads x0, x1 and its own
// input: 4 buffers with its result); with 3 it cannot, and says why.
// DEFAULT-LABEL: func.func @shared
// DEFAULT: fusion.group "g0" "elementwise" ins(%arg0, %arg1, %arg2, %arg3 :
// DEFAULT-NOT: fusion.group
// FOUR-LABEL: func.func @shared
// FOUR: fusion.group "g1" "elementwise" ins(%arg0, %arg1, %arg2 :
// FOUR-SAME: "recomputes result #0 of op 0 of group 'g0': recompute=always"
// FOUR: fusion.group "g2" "elementwise" ins(%arg0, %arg1, %arg3 :
// FOUR-SAME: "recomputes result #0 of op 0 of group 'g0': recompute=always"
// THREE-LABEL: func.func @shared
// THREE: %[[P:.*]] = fusion.group "g0" "elementwise" ins(%arg0, %arg1 :
// THREE-SAME: "materializes result #0 of op 0 of group 'g0' for group 'g2': recomputing it there would pass that group's kernel more than 3 buffers"
// THREE: fusion.group "g1" "elementwise" ins(%[[P]], %arg2 :
// THREE: fusion.group "g2" "elementwise" ins(%[[P]], %arg3 :
#id1 = affine_map<(d0) -> (d0)>
func.func @shared(%x0: tensor<16xf32>, %x1: tensor<16xf32>, %x2: tensor<16xf32>,
                  %x3: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x0, %x1 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %q = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %x2 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %x3 : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %s = arith.subf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %q, %r : tensor<16xf32>, tensor<16xf32>
}

// -----

// Two independent updates over different spaces that read one scale s (a
// multi-tensor launch, not siblings): together they pass p0, p1, s and
// their two results, 5 buffers, s counted once; with 4 each runs alone.
// DEFAULT-LABEL: func.func @shared_scale
// DEFAULT: fusion.group "g0" "elementwise" ins(%arg0, %arg2, %arg1 :
// FIVE-LABEL: func.func @shared_scale
// FIVE: fusion.group "g0" "elementwise" ins(%arg0, %arg2, %arg1 :
// FIVE-NOT: fusion.group
// FOUR-LABEL: func.func @shared_scale
// FOUR: fusion.group "g0" "elementwise" ins(%arg0, %arg2 :
// FOUR: fusion.group "g1" "elementwise" ins(%arg1, %arg2 :
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @shared_scale(%p0: tensor<8x4xf32>, %p1: tensor<16x4xf32>, %s: tensor<4xf32>)
    -> (tensor<8x4xf32>, tensor<16x4xf32>) {
  %e0 = tensor.empty() : tensor<8x4xf32>
  %u0 = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%p0, %s : tensor<8x4xf32>, tensor<4xf32>) outs(%e0 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<16x4xf32>
  %u1 = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%p1, %s : tensor<16x4xf32>, tensor<4xf32>) outs(%e1 : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<16x4xf32>
  return %u0, %u1 : tensor<8x4xf32>, tensor<16x4xf32>
}
