// RUN: fuse-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(fusion-widen-bool-results))' | FileCheck %s

// A boolean tensor one group writes for another travels as bytes: the
// producer yields extui of it (i8), the reader starts with trunci.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @mask
// CHECK: %[[M:.*]] = fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<8xf32>) {
// CHECK: %[[C:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xi1>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<8xi1>) outs(%{{.*}} : tensor<8xi8>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: i1, %{{.*}}: i8):
// CHECK-NEXT: arith.extui %[[B]] : i1 to i8
// CHECK: fusion.yield %[[W]] : tensor<8xi8>
// CHECK-NEXT: } -> tensor<8xi8>
// CHECK: fusion.group "g1" "elementwise" ins(%[[M]], %{{.*}} : tensor<8xi8>, tensor<8xf32>) {
// CHECK-NEXT: ^bb0(%[[MA:.*]]: tensor<8xi8>, %[[XA:.*]]: tensor<8xf32>):
// CHECK-NEXT: tensor.empty() : tensor<8xi1>
// CHECK-NEXT: %[[N:.*]] = linalg.generic {{.*}} ins(%[[MA]] : tensor<8xi8>) outs(%{{.*}} : tensor<8xi1>)
// CHECK-NEXT: ^bb0(%[[I:.*]]: i8, %{{.*}}: i1):
// CHECK-NEXT: arith.trunci %[[I]] : i8 to i1
// CHECK: linalg.generic {{.*}} ins(%[[N]], %[[XA]] : tensor<8xi1>, tensor<8xf32>)
// CHECK: arith.select
func.func @mask(%x: tensor<8xf32>) -> tensor<8xf32> {
  %m = fusion.group "g0" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xi1>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
    ^bb0(%in: f32, %o: i1):
      %v = arith.cmpf ogt, %in, %zero : f32
      linalg.yield %v : i1
    } -> tensor<8xi1>
    fusion.yield %c : tensor<8xi1>
  } -> tensor<8xi1>
  %r = fusion.group "g1" "elementwise" ins(%m, %x : tensor<8xi1>, tensor<8xf32>) {
  ^bb0(%b: tensor<8xi1>, %a: tensor<8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%b, %a : tensor<8xi1>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%c: i1, %in: f32, %o: f32):
      %v = arith.select %c, %in, %zero : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Results of other element types, and unused boolean results, are left
// alone.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @untouched
// CHECK: fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<8xf32>) {
// CHECK-NOT: arith.extui
// CHECK: } -> tensor<8xf32>, tensor<8xi1>
func.func @untouched(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xi1>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
    ^bb0(%in: f32, %o: i1):
      %v = arith.cmpf ogt, %in, %zero : f32
      linalg.yield %v : i1
    } -> tensor<8xi1>
    fusion.yield %a, %c : tensor<8xf32>, tensor<8xi1>
  } -> tensor<8xf32>, tensor<8xi1>
  return %r#0 : tensor<8xf32>
}

// -----

// A reshape between the groups (the unit dimension of a one-row reduction
// restored) carries the bytes.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @through_reshape
// CHECK: %[[M:.*]] = fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<8xf32>) {
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: } -> tensor<8xi8>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1]] output_shape [1, 8] : tensor<8xi8> into tensor<1x8xi8>
// CHECK: fusion.group "g1" "elementwise" ins(%[[R]] : tensor<1x8xi8>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<1x8xi8>):
// CHECK: arith.trunci %{{.*}} : i8 to i1
func.func @through_reshape(%x: tensor<8xf32>) -> tensor<1x8xf32> {
  %m = fusion.group "g0" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xi1>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
    ^bb0(%in: f32, %o: i1):
      %v = arith.cmpf ogt, %in, %zero : f32
      linalg.yield %v : i1
    } -> tensor<8xi1>
    fusion.yield %c : tensor<8xi1>
  } -> tensor<8xi1>
  %r = tensor.expand_shape %m [[0, 1]] output_shape [1, 8] : tensor<8xi1> into tensor<1x8xi1>
  %s = fusion.group "g1" "elementwise" ins(%r : tensor<1x8xi1>) {
  ^bb0(%b: tensor<1x8xi1>):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x8xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%b : tensor<1x8xi1>) outs(%e : tensor<1x8xf32>) {
    ^bb0(%c: i1, %o: f32):
      %w = arith.select %c, %one, %zero : f32
      linalg.yield %w : f32
    } -> tensor<1x8xf32>
    fusion.yield %v : tensor<1x8xf32>
  } -> tensor<1x8xf32>
  return %s : tensor<1x8xf32>
}

// -----

// Any other use outside a group is reported (groups are formed around every
// op that reads a tensor; this IR did not come from fusion-form-groups).
#id = affine_map<(d0) -> (d0)>
func.func @outside(%x: tensor<8xf32>) -> tensor<4xi1> {
  %m = fusion.group "g0" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xi1>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
    ^bb0(%in: f32, %o: i1):
      %v = arith.cmpf ogt, %in, %zero : f32
      linalg.yield %v : i1
    } -> tensor<8xi1>
    fusion.yield %c : tensor<8xi1>
  } -> tensor<8xi1>
  // expected-error @+1 {{fusion-widen-bool-results: a boolean tensor of group 'g0' is used outside any group}}
  %s = tensor.extract_slice %m[0] [4] [1] : tensor<8xi1> to tensor<4xi1>
  return %s : tensor<4xi1>
}
