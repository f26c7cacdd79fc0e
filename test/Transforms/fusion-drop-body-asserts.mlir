// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-drop-body-asserts))' \
// RUN:   | FileCheck %s

// fusion-drop-body-asserts: a kernel cannot report a failed assertion, so
// cf.assert ops in linalg.generic bodies (torch-mlir's batch-norm guard) are
// removed; the arithmetic they guarded stays and follows IEEE rules.
// Assertions outside generic bodies are kept.

#id1 = affine_map<(d0) -> (d0)>

// The assertion in the generic's body goes; the one in the function body,
// and the computations of both conditions, stay.
// CHECK-LABEL: func.func @body_and_function_asserts
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[N:[^:]*]]: index)
// CHECK: %[[OK:.*]] = arith.cmpi ne, %[[N]], %{{.*}} : index
// CHECK-NEXT: cf.assert %[[OK]], "outer"
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NOT: cf.assert
// CHECK: arith.cmpf one, %[[IN]]
// CHECK-NOT: cf.assert
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[IN]] : f32
// CHECK-NOT: cf.assert
// CHECK: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NOT: cf.assert
// CHECK: return
func.func @body_and_function_asserts(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %ok = arith.cmpi ne, %n, %c0 : index
  cf.assert %ok, "outer"
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %nz = arith.cmpf one, %in, %z : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %one = arith.constant 1.0 : f32
    %v = arith.divf %one, %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Several assertions in one body and in two generics all go.
// CHECK-LABEL: func.func @two_generics
// CHECK-NOT: cf.assert
// CHECK: linalg.generic
// CHECK-NOT: cf.assert
// CHECK: arith.addf
// CHECK-NOT: cf.assert
// CHECK: linalg.generic
// CHECK-NOT: cf.assert
// CHECK: arith.mulf
// CHECK-NOT: cf.assert
// CHECK: return
func.func @two_generics(%x: tensor<8xf32>, %flag: i1) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    cf.assert %flag, "first"
    %v = arith.addf %in, %in : f32
    cf.assert %flag, "second"
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    cf.assert %flag, "third"
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// An assertion in another op's region (an scf.if in the function body, not
// a generic) is kept.
// CHECK-LABEL: func.func @assert_in_scf_if
// CHECK: scf.if
// CHECK-NEXT: cf.assert %{{.*}}, "in scf.if"
func.func @assert_in_scf_if(%c: i1, %d: i1) {
  scf.if %c {
    cf.assert %d, "in scf.if"
  }
  return
}
