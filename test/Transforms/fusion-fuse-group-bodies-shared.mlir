// RUN: fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-fuse-group-bodies{shared-body-limit=2}))' \
// RUN:   | FileCheck %s --check-prefix=KEEP
// RUN: fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-fuse-group-bodies))' \
// RUN:   | FileCheck %s --check-prefix=FUSE

// In a reduction group, a producer that reads a reduction's result and that
// several row-space ops read where it is computed stays an op of its own
// once its body is longer than shared-body-limit (here 2 ops; the default,
// 32, fuses this short one into every reader as before). Fused, a stack of
// normalizations over the same rows copies the whole chain into every
// reduction: IR quadratic in the depth of the stack.

#row = affine_map<(d0, d1) -> (d0, d1)>
#rowred = affine_map<(d0, d1) -> (d0)>
#sc = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>

// d = (x - mean) * 2 reads the row mean and is read by the sum of squares,
// by the row maximum and by the group's yield.
// KEEP-LABEL: func.func @shared_centred
// KEEP: %[[MEAN:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%{{.+}} : tensor<4x8xf32>)
// KEEP: %[[D:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// KEEP-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// KEEP: arith.subf
// KEEP: arith.mulf
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%[[D]] : tensor<4x8xf32>)
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%[[D]] : tensor<4x8xf32>)
// KEEP: fusion.yield %[[D]],
// FUSE-LABEL: func.func @shared_centred
// FUSE: %[[MEAN:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// FUSE: %[[D:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// FUSE: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// FUSE-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// FUSE: arith.subf
// FUSE: arith.mulf
// FUSE: arith.mulf
// FUSE: arith.addf
// FUSE: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// FUSE-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// FUSE: arith.subf
// FUSE: arith.mulf
// FUSE: arith.maximumf
// FUSE: fusion.yield %[[D]],
func.func @shared_centred(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %d, %v, %mx = fusion.group "rows" "reduction" ins(%a : tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %e3 = tensor.empty() : tensor<4xf32>
    %ef = tensor.empty() : tensor<4x8xf32>
    %z = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z2 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z3 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e3 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %mean = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %cd = linalg.generic {indexing_maps = [#row, #rowred, #row], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%ef : tensor<4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %c = arith.subf %in, %m : f32
      %c2 = arith.mulf %c, %two : f32
      linalg.yield %c2 : f32
    } -> tensor<4x8xf32>
    %var = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%cd : tensor<4x8xf32>) outs(%z2 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %max = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%cd : tensor<4x8xf32>) outs(%z3 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    fusion.yield %cd, %var, %max : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
  } -> tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
  return %d, %v, %mx : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#rowred = affine_map<(d0, d1) -> (d0)>
#sc = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>
#colsum_in = affine_map<(d0, d1) -> (d1, d0)>
#colsum_out = affine_map<(d0, d1) -> (d0)>

// A column sum among the readers (over (column, row), reading d through a
// transposed map): d is fused into every reader whatever its length, or it
// would go to memory between the rows' kernel and the columns'.
// KEEP-LABEL: func.func @column_reader
// KEEP: %[[MEAN:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-NOT: iterator_types = ["parallel", "parallel"]
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// KEEP: fusion.yield
func.func @column_reader(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %v, %c = fusion.group "rows" "reduction" ins(%a : tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %e3 = tensor.empty() : tensor<8xf32>
    %ef = tensor.empty() : tensor<4x8xf32>
    %z = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z2 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z3 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e3 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8xf32>
    %mean = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %cd = linalg.generic {indexing_maps = [#row, #rowred, #row], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%ef : tensor<4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %c = arith.subf %in, %m : f32
      %c2 = arith.mulf %c, %two : f32
      linalg.yield %c2 : f32
    } -> tensor<4x8xf32>
    %var = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%cd : tensor<4x8xf32>) outs(%z2 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %col = linalg.generic {indexing_maps = [#colsum_in, #colsum_out], iterator_types = ["parallel", "reduction"]}
        ins(%cd : tensor<4x8xf32>) outs(%z3 : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    fusion.yield %var, %col : tensor<4xf32>, tensor<8xf32>
  } -> tensor<4xf32>, tensor<8xf32>
  return %v, %c : tensor<4xf32>, tensor<8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#rowred = affine_map<(d0, d1) -> (d0)>
#sc = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>

// d = x * 2 reads no row value: fusing it copies no reduction's chain, so it
// is fused into both readers however long.
// KEEP-LABEL: func.func @no_row_value
// KEEP-NOT: iterator_types = ["parallel", "parallel"]
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP: arith.mulf
// KEEP: arith.maximumf
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP: arith.mulf
// KEEP: arith.addf
func.func @no_row_value(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m, %s = fusion.group "rows" "reduction" ins(%a : tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %ef = tensor.empty() : tensor<4x8xf32>
    %z = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z2 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %d = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32>) outs(%ef : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c = arith.mulf %in, %two : f32
      %c2 = arith.addf %c, %two : f32
      linalg.yield %c2 : f32
    } -> tensor<4x8xf32>
    %mx = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%d : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%d : tensor<4x8xf32>) outs(%z2 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    fusion.yield %mx, %sum : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %m, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#rowred = affine_map<(d0, d1) -> (d0)>
#sc = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>

// d = x - sum / 8 is a difference from a row value: kept like any other
// long shared value (the row emitter copies it back into the sum of
// squares, whose single pass with the mean needs it in its body; see
// inlineCenteredWriters in fusion-generic-to-gpu).
// KEEP-LABEL: func.func @centred
// KEEP: %[[MEAN:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP: %[[D:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// KEEP-SAME: ins(%{{.+}}, %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// KEEP: arith.mulf
// KEEP: arith.subf
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%[[D]] : tensor<4x8xf32>)
// KEEP: arith.mulf
// KEEP: arith.addf
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// KEEP-SAME: ins(%[[D]] : tensor<4x8xf32>)
// KEEP: arith.maximumf
func.func @centred(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %v, %mx = fusion.group "rows" "reduction" ins(%a : tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %zero = arith.constant 0.0 : f32
    %eighth = arith.constant 0.125 : f32
    %e = tensor.empty() : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %e3 = tensor.empty() : tensor<4xf32>
    %ef = tensor.empty() : tensor<4x8xf32>
    %z = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z2 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %z3 = linalg.generic {indexing_maps = [#sc, #id1], iterator_types = ["parallel"]}
        ins(%zero : f32) outs(%e3 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %d = linalg.generic {indexing_maps = [#row, #rowred, #row], iterator_types = ["parallel", "parallel"]}
        ins(%x, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%ef : tensor<4x8xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %m = arith.mulf %s, %eighth : f32
      %c = arith.subf %in, %m : f32
      linalg.yield %c : f32
    } -> tensor<4x8xf32>
    %var = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%d : tensor<4x8xf32>) outs(%z2 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %max = linalg.generic {indexing_maps = [#row, #rowred], iterator_types = ["parallel", "reduction"]}
        ins(%d : tensor<4x8xf32>) outs(%z3 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    fusion.yield %var, %max : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %v, %mx : tensor<4xf32>, tensor<4xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A contraction group's epilogue e = mm * 2 + 1, read by two ops: the rule
// is the row kernels'; contraction groups fuse their epilogues as before.
// KEEP-LABEL: func.func @contraction_epilogue
// KEEP: %[[MM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[MM]] : tensor<4x4xf32>)
// KEEP: arith.mulf
// KEEP: arith.addf
// KEEP: math.exp
// KEEP: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[MM]] : tensor<4x4xf32>)
// KEEP: arith.mulf
// KEEP: arith.addf
// KEEP: math.tanh
// KEEP: fusion.yield
func.func @contraction_epilogue(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %r1, %r2 = fusion.group "mm" "contraction" ins(%x, %y : tensor<4x8xf32>, tensor<8x4xf32>) {
  ^bb0(%p: tensor<4x8xf32>, %q: tensor<8x4xf32>):
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %e0 = tensor.empty() : tensor<4x4xf32>
    %e1 = tensor.empty() : tensor<4x4xf32>
    %e2 = tensor.empty() : tensor<4x4xf32>
    %e3 = tensor.empty() : tensor<4x4xf32>
    %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%zero : f32) outs(%e0 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x4xf32>
    %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%p, %q : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %ep = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%mm : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %two : f32
      %s = arith.addf %m, %one : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %u1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%ep : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.exp %in : f32
      linalg.yield %t : f32
    } -> tensor<4x4xf32>
    %u2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%ep : tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<4x4xf32>
    fusion.yield %u1, %u2 : tensor<4x4xf32>, tensor<4x4xf32>
  } -> tensor<4x4xf32>, tensor<4x4xf32>
  return %r1, %r2 : tensor<4x4xf32>, tensor<4x4xf32>
}
