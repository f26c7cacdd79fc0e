// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,fusion-merge-nested-reductions))' | FileCheck %s

// A reduction of a reduction's result with the same combiner is one
// reduction over the inner loops: the outer result's dimensions first, the
// other loops reducing.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#lead3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lead2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>

// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[$XM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// sum(sum(sum(x, 3), 2), 0) of NCHW x: the sum over (n, h, w) per channel.
// CHECK-LABEL: func.func @channel_sum
// CHECK-SAME: (%[[XA:[^:]*]]: tensor<2x3x4x5xf32>)
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$X]], #[[$C]]], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%[[XA]] : tensor<2x3x4x5xf32>) outs(%[[ACC]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: arith.addf %[[V]], %[[OUT]] : f32
// CHECK-NOT: linalg.generic {{.*}}reduction
// CHECK: return %[[S]] : tensor<3xf32>
func.func @channel_sum(%x: tensor<2x3x4x5xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x3x4xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %a3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  // (squares summed over w)
  %s3 = linalg.generic {indexing_maps = [#id4, #lead3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x3x4x5xf32>) outs(%a3 : tensor<2x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %v = arith.addf %sq, %out : f32
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  %s2 = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s3 : tensor<2x3x4xf32>) outs(%a2 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  // (the sum over n: reduction loop first, as torch-mlir writes it)
  %s1 = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%s2 : tensor<2x3xf32>) outs(%a1 : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %out, %in : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %s1 : tensor<3xf32>
}

// max(max(x, 1)^T ...): the outer reads the inner result transposed; the
// merged loops follow the outer result (x's dim 2), the rest reduce.
// CHECK-LABEL: func.func @max_of_max
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xf32>)
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$XM]], #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<4x5x6xf32>) outs(%[[ACC]] : tensor<6xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic {{.*}}reduction
// CHECK: return %[[M]]
func.func @max_of_max(%x: tensor<4x5x6xf32>) -> tensor<6xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<4x6xf32>
  %e1 = tensor.empty() : tensor<6xf32>
  %a2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %a1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
  %m2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%a2 : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  %m1 = linalg.generic {indexing_maps = [#t2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m2 : tensor<4x6xf32>) outs(%a1 : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<6xf32>
  return %m1 : tensor<6xf32>
}

// x.sum(0).sum(): the column sums (columns parallel, rows reducing, x read
// transposed) summed again are the sum over x's (rows, columns), in x's
// order: the loops of an elementwise sibling over x (found by a random
// program: with x * 3 beside it, the CUDA target refused the group).
// CHECK-LABEL: func.func @sum_of_column_sums
// CHECK-SAME: (%[[XS:[^:]*]]: tensor<6x8xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #{{.*}}], iterator_types = ["reduction", "reduction"]} ins(%[[XS]] : tensor<6x8xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: linalg.generic {{.*}}reduction
// CHECK: return %[[T]]
func.func @sum_of_column_sums(%x: tensor<6x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e0 = tensor.empty() : tensor<f32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#t2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xf32>) outs(%a1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<8xf32>) outs(%a0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %t : tensor<f32>
}

// A mean of means: the inner sum is scaled (divided by its count) before
// the outer sum; the scale moves after the merged sum.
// CHECK-LABEL: func.func @mean_of_means
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<4x5x6xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: %[[D:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[S]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.divf %[[IN]], %{{.*}} : f32
// CHECK: %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[D]] : tensor<4xf32>)
// CHECK: arith.divf
// CHECK: return %[[E]]
func.func @mean_of_means(%x: tensor<4x5x6xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %five = arith.constant 5.0 : f32
  %e2 = tensor.empty() : tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s2 = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%z2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %m2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s2 : tensor<4x5xf32>) outs(%e2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %six : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %s1 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m2 : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s1 : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %five : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %m1 : tensor<4xf32>
}

// Negative: a max of maxima scaled by -2 (the scale turns maxima into
// minima) stays two reductions.
// CHECK-LABEL: func.func @max_of_negated_max
// CHECK-COUNT-2: "reduction"]
// CHECK: return
func.func @max_of_negated_max(%x: tensor<4x5x6xf32>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %m = arith.constant -2.0 : f32
  %e2 = tensor.empty() : tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %n2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %n1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%n2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x5xf32>) outs(%e2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %m : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<4x5xf32>) outs(%n1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// Negative: the inner sum starts at 1 (each partial would add it again),
// a sum of maxima, an outer body that computes (exp) before combining, and
// an inner result read twice: every pair stays two reductions.
// CHECK-LABEL: func.func @not_nested
// CHECK-COUNT-8: "reduction"]
// CHECK: return
func.func @not_nested(%x: tensor<4x5x6xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %o2 = linalg.fill ins(%one : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %n2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %from_one = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%o2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%from_one : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %maxes = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%n2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%maxes : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %sums = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%z2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %c = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sums : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ex = math.exp %in : f32
    %v = arith.addf %ex, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %twice = linalg.generic {indexing_maps = [#id3, #lead2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%z2 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%twice : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %a, %b, %c, %d, %twice : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x5xf32>
}
