// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-inline-groups))' | FileCheck %s

// Each fusion.group is replaced by its body; the generic is tagged with the
// group's name and strategy for fusion-generic-to-gpu.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @with_strategy
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1024xf32>)
// CHECK-NOT: fusion.group
// CHECK: %[[CST:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1024xf32>
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<1024xf32>) outs(%[[E]] : tensor<1024xf32>)
// CHECK-SAME: attrs = {fusion.kernel = "k0", fusion.strategy = #fusion.strategy<threads = 128, vector = 4, unroll = 2, blocks = 3>}
// CHECK: arith.addf %{{.*}}, %[[CST]] : f32
// CHECK-NOT: fusion.yield
// CHECK: return %[[G]] : tensor<1024xf32>
func.func @with_strategy(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %r = fusion.group "k0" "elementwise" ins(%x : tensor<1024xf32>)
      attributes {strategy = #fusion.strategy<threads = 128, vector = 4, unroll = 2, blocks = 3>} {
  ^bb0(%a: tensor<1024xf32>):
    %cst = arith.constant 1.000000e+00 : f32
    %e = tensor.empty() : tensor<1024xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %cst : f32
      linalg.yield %v : f32
    } -> tensor<1024xf32>
    fusion.yield %0 : tensor<1024xf32>
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// Without a strategy only the name is attached; several groups and several
// results map to the right values; host ops (tensor.empty, scalar
// constants) may stay outside.
// CHECK-LABEL: func.func @two_groups
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK: %[[G0:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<8xf32>)
// CHECK-SAME: attrs = {fusion.kernel = "first"}
// CHECK-NOT: fusion.strategy
// CHECK: math.exp
// CHECK: %[[G1:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G0]]#1 : tensor<8xf32>)
// CHECK-SAME: attrs = {fusion.kernel = "second"}
// CHECK: math.log
// CHECK: return %[[G0]]#0, %[[G1]] : tensor<8xf32>, tensor<8xf32>
func.func @two_groups(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %unused = tensor.empty() : tensor<8xf32>
  %c = arith.constant 2 : index
  %r:2 = fusion.group "first" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %0:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e, %e : tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%in: f32, %o0: f32, %o1: f32):
      %v = math.exp %in : f32
      %w = arith.mulf %v, %v : f32
      linalg.yield %v, %w : f32, f32
    } -> (tensor<8xf32>, tensor<8xf32>)
    fusion.yield %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
  } -> tensor<8xf32>, tensor<8xf32>
  %s = fusion.group "second" "elementwise" ins(%r#1 : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.log %in : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    fusion.yield %0 : tensor<8xf32>
  } -> tensor<8xf32>
  return %r#0, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// Ops outside groups that code generation does not handle are errors.
func.func @matmul_outside(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error @+1 {{kfuse cannot generate code for 'linalg.matmul' yet: only elementwise linalg.generic ops (inside fusion groups) are supported (this one has reduction loops: a reduction, or a contraction such as a generalized linalg.matmul)}}
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// So is an elementwise generic that was never put into a group (without the
// remark about reduction loops).
func.func @generic_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error-re @+1 {{kfuse cannot generate code for 'linalg.generic' yet: only elementwise linalg.generic ops (inside fusion groups) are supported{{$}}}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A reduction is named as one too.
func.func @reduction_outside(%a: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kfuse cannot generate code for 'linalg.generic' yet: only elementwise linalg.generic ops (inside fusion groups) are supported (this one has reduction loops}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A tensor constant is data, not a host scalar.
func.func @tensor_constant() -> tensor<4xf32> {
  // expected-error @+1 {{kfuse cannot generate code for 'arith.constant' yet}}
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}
