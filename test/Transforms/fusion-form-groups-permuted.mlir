// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups))' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-form-groups,fusion-fuse-group-bodies))' \
// RUN:   | FileCheck %s --check-prefix=BODIES
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CUDA

// Batch statistics of an NHWC tensor: the reductions loop over (c | n, h, w)
// and read x through (d1, d2, d3, d0), while `x - mean` runs over
// (n, h, w, c). Its loops are placed in the reductions' order through x,
// which both read through permutations, so mean, centered values and
// variance form one group; the centered values are also an output, so
// fusion keeps their op, interchanged into (c, n, h, w): it reads x and
// writes its result through (d1, d2, d3, d0), and the mean per row (d0).

// PLAN-LABEL: func.func @centered_nhwc
// PLAN: fusion.group "g0" "reduction"
// PLAN-NOT: fusion.group
// PLAN: return

// BODIES-DAG: #[[NCHW:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
// BODIES-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// BODIES: func.func @centered_nhwc
// BODIES: fusion.group "g0" "reduction"
// BODIES: linalg.generic {indexing_maps = [#[[NCHW]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
// BODIES: linalg.generic {indexing_maps = [#[[NCHW]], #[[ROW]], #[[NCHW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// BODIES: arith.subf
// BODIES: -> tensor<8x4x4x8xf32>
// BODIES: linalg.generic {indexing_maps = [#[[NCHW]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
// BODIES: fusion.yield

// CUDA-LABEL: func.func @centered_nhwc
// CUDA-COUNT-1: gpu.launch_func
// CUDA-NOT: gpu.launch_func
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#red_in = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
#red_out = affine_map<(d0, d1, d2, d3) -> (d0)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
#batch = affine_map<(d0, d1, d2, d3) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @centered_nhwc(%x: tensor<8x4x4x8xf32>) -> (tensor<8x4x4x8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e4 = tensor.empty() : tensor<8x4x4x8xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#red_in, #red_out], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<8x4x4x8xf32>) outs(%i1 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.constant 128.0 : f32
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<8x4x4x8xf32>, tensor<8xf32>) outs(%e4 : tensor<8x4x4x8xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %v = arith.subf %in, %mean : f32
    linalg.yield %v : f32
  } -> tensor<8x4x4x8xf32>
  %sq = linalg.generic {indexing_maps = [#nhwc, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<8x4x4x8xf32>) outs(%e4 : tensor<8x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4x4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#red_in, #red_out], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%sq : tensor<8x4x4x8xf32>) outs(%i2 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %c, %v : tensor<8x4x4x8xf32>, tensor<8xf32>
}

// -----

// The same, but `x - mean` broadcasts the mean along n, not c (legal: both
// have 8 entries). No order of its loops reads the row value along the
// rows, so the mean stays in a group of its own; the second group reads it
// as an input (along a column loop of its reductions) and still puts
// `x - mean` in the reductions' order.

// PLAN-LABEL: func.func @mean_along_batch
// PLAN: fusion.group "g0" "reduction"
// PLAN: fusion.group "g1" "reduction"
// PLAN-SAME: operand #1 stays unfused: the merged group would not run over one row space
// BODIES: func.func @mean_along_batch
// BODIES: fusion.group "g1" "reduction"
// BODIES: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// BODIES-SAME: outs(%{{.*}} : tensor<8x4x4x8xf32>)
// BODIES: arith.subf
// CUDA-LABEL: func.func @mean_along_batch
// CUDA-COUNT-2: gpu.launch_func
// CUDA-NOT: gpu.launch_func
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#red_in = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
#red_out = affine_map<(d0, d1, d2, d3) -> (d0)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
#batch = affine_map<(d0, d1, d2, d3) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @mean_along_batch(%x: tensor<8x4x4x8xf32>) -> (tensor<8x4x4x8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e4 = tensor.empty() : tensor<8x4x4x8xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#red_in, #red_out], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<8x4x4x8xf32>) outs(%i1 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.constant 128.0 : f32
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#nhwc, #batch, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<8x4x4x8xf32>, tensor<8xf32>) outs(%e4 : tensor<8x4x4x8xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %v = arith.subf %in, %mean : f32
    linalg.yield %v : f32
  } -> tensor<8x4x4x8xf32>
  %sq = linalg.generic {indexing_maps = [#nhwc, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<8x4x4x8xf32>) outs(%e4 : tensor<8x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4x4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#red_in, #red_out], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%sq : tensor<8x4x4x8xf32>) outs(%i2 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %c, %v : tensor<8x4x4x8xf32>, tensor<8xf32>
}
