// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-associative-combiners))' -split-input-file | FileCheck %s

// fusion-associative-combiners: a reduction step that is an associative op
// in disguise becomes that op, so the row kernels can split it across
// threads; steps that are not stay as written (they run in order).

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// acc - x is acc + (-x), with the subtraction's fast-math flags.
// CHECK-LABEL: func.func @sub_float
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[IN]] fastmath<contract> : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[N]] fastmath<contract> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @sub_float(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %acc, %in fastmath<contract> : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// Integers wrap: acc - x is acc + (0 - x).
// CHECK-LABEL: func.func @sub_int
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: %[[N:.*]] = arith.subi %[[Z]], %[[IN]] : i32
// CHECK: %[[S:.*]] = arith.addi %[[ACC]], %[[N]] : i32
// CHECK: linalg.yield %[[S]] : i32
func.func @sub_int(%x: tensor<4x8xi32>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %r = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %d = arith.subi %acc, %in : i32
    linalg.yield %d : i32
  } -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// Compare-and-select on integers: each predicate and branch order.
// CHECK-LABEL: func.func @select_int
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[M:.*]] = arith.maxsi %[[IN]], %[[ACC]] : i32
// CHECK-NEXT: linalg.yield %[[M]] : i32
// (acc < x ? x : acc: the larger)
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[M:.*]] = arith.maxui %[[IN]], %[[ACC]] : i32
// CHECK-NEXT: linalg.yield %[[M]] : i32
// (x > acc ? acc : x: the smaller)
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[M:.*]] = arith.minsi %[[ACC]], %[[IN]] : i32
// CHECK-NEXT: linalg.yield %[[M]] : i32
func.func @select_int(%x: tensor<4x8xi32>, %init: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %c = arith.cmpi sgt, %in, %acc : i32
    %s = arith.select %c, %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %b = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %c = arith.cmpi ult, %acc, %in : i32
    %s = arith.select %c, %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %d = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %c = arith.cmpi sge, %in, %acc : i32
    %s = arith.select %c, %acc, %in : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  return %a, %b, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

// Left as written: an alternating sum (x - acc), a float compare-and-select
// (NaNs make it depend on the order), an accumulator read twice, a select
// whose compare is on something else, and a subtraction in an elementwise
// body.
// CHECK-LABEL: func.func @not_associative
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpf ogt
// CHECK-NEXT: arith.select
// CHECK: arith.subf
// CHECK-NEXT: arith.mulf
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.select
// CHECK: arith.subf
// CHECK-NOT: arith.negf
// CHECK-NOT: arith.max
// CHECK-NOT: arith.min
func.func @not_associative(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %init: tensor<4xf32>, %iinit: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4x8xf32>) {
  %a = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %c = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %c, %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %acc, %in : f32
    %m = arith.mulf %d, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%i : tensor<4x8xi32>) outs(%iinit : tensor<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %z = arith.constant 0 : i32
    %k = arith.cmpi sgt, %in, %z : i32
    %s = arith.select %k, %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %v = arith.subf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %a, %b, %c, %d, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4x8xf32>
}
