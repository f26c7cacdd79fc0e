// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-cpu-compensated-sums))' \
// RUN:   | FileCheck %s

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// A float sum gets a compensation result, zero at first; the term loses
// the compensation before it is added, and the compensation becomes what
// the addition lost (zero once the sum is infinite or NaN).
// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x1000xf32>, %[[INIT:[^:]*]]: tensor<4xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[C0:.*]] = linalg.generic {{.*}} ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[S:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #[[R:.*]], #[[R]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x1000xf32>) outs(%[[INIT]], %[[C0]] : tensor<4xf32>, tensor<4xf32>) attrs = {tag = "sum"}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.subf %[[SQ]], %[[C]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[ACC]], %[[Y]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[T]], %[[ACC]] : f32
// CHECK-NEXT: %[[L:.*]] = arith.subf %[[D]], %[[Y]] : f32
// CHECK-NEXT: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[T]] : f32
// CHECK-NEXT: %[[FIN:.*]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[KEPT:.*]] = arith.select %[[FIN]], %[[L]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[T]], %[[KEPT]] : f32, f32
// CHECK: return %[[S]]#0
func.func @row_sums(%x: tensor<4x1000xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1000xf32>) outs(%init : tensor<4xf32>) attrs = {tag = "sum"} {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %t = arith.addf %sq, %acc fastmath<contract> : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// Negative: a max, an integer sum and a product are exact or left alone.
// CHECK-LABEL: func.func @not_float_sums
// CHECK-NOT: tensor.empty
// CHECK: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK: arith.addi
// CHECK-NEXT: linalg.yield
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
func.func @not_float_sums(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %m: tensor<4xf32>, %n: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%m : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.maximumf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%i : tensor<4x8xi32>) outs(%n : tensor<4xi32>) {
  ^bb0(%v: i32, %acc: i32):
    %t = arith.addi %v, %acc : i32
    linalg.yield %t : i32
  } -> tensor<4xi32>
  %c = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%m : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.mulf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// Negative: a contraction (a matmul's multiply-add) keeps its body.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: tensor.empty
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%c : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
