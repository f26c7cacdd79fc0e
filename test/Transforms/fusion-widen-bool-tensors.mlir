// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-widen-bool-tensors))' | FileCheck %s
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-widen-bool-tensors),fusion-plan)' | FileCheck %s --check-prefix=PLAN

// fusion-widen-bool-tensors: boolean arguments and results cross the
// function boundary as bytes. Generics read a narrowed copy (fused into
// them later); gathers (tensor.extract, what a slice of a boolean argument
// becomes) read the bytes themselves and narrow each one.

#id = affine_map<(d0, d1) -> (d0, d1)>
// A slice m[:, 1:] read by a gather: no narrowed tensor, so one kernel.
// CHECK-LABEL: func.func @gathered
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>, %[[M:.*]]: tensor<8x65xi8>) -> tensor<8x64xf32>
// CHECK-NOT: arith.trunci
// CHECK: linalg.generic
// CHECK: %[[B:.*]] = tensor.extract %[[M]][%{{.*}}, %{{.*}}] : tensor<8x65xi8>
// CHECK-NEXT: %[[T:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK-NEXT: arith.uitofp %[[T]] : i1 to f32
// PLAN-LABEL: func.func @gathered
// PLAN: fusion.group "g0"
// PLAN-NOT: fusion.group
func.func @gathered(%x: tensor<8x64xf32>, %m: tensor<8x65xi1>) -> tensor<8x64xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %j1 = arith.addi %j, %c1 : index
    %b = tensor.extract %m[%i, %j1] : tensor<8x65xi1>
    %f = arith.uitofp %b : i1 to f32
    %v = arith.mulf %a, %f : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#flat = affine_map<(d0) -> (d0)>
// Read as an input and, reshaped, by a gather: the input reads the narrowed
// copy, the reshape and its gather the bytes; the boolean result leaves as
// bytes.
// CHECK-LABEL: func.func @both
// CHECK-SAME: (%[[M:.*]]: tensor<4x8xi8>) -> (tensor<4x8xf32>, tensor<32xf32>, tensor<4x8xi8>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xi8>) outs(%{{.*}} : tensor<4x8xi1>)
// CHECK: arith.trunci %{{.*}} : i8 to i1
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1]] : tensor<4x8xi8> into tensor<32xi8>
// CHECK: linalg.generic {{.*}} ins(%[[N]] : tensor<4x8xi1>)
// CHECK: %[[B:.*]] = tensor.extract %[[C]][%{{.*}}] : tensor<32xi8>
// CHECK-NEXT: arith.trunci %[[B]] : i8 to i1
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: return
// PLAN-LABEL: func.func @both
func.func @both(%m: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<32xf32>, tensor<4x8xi1>) {
  %c31 = arith.constant 31 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %flat = tensor.collapse_shape %m [[0, 1]] : tensor<4x8xi1> into tensor<32xi1>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x8xi1>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%b: i1, %o: f32):
    %f = arith.uitofp %b : i1 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#flat], iterator_types = ["parallel"]}
      outs(%e1 : tensor<32xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %k = arith.subi %c31, %i : index
    %b = tensor.extract %flat[%k] : tensor<32xi1>
    %f = arith.uitofp %b : i1 to f32
    linalg.yield %f : f32
  } -> tensor<32xf32>
  return %a, %r, %m : tensor<4x8xf32>, tensor<32xf32>, tensor<4x8xi1>
}
