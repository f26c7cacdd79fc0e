// RUN: fuse-opt %s | fuse-opt | FileCheck %s
// RUN: fuse-opt %s --mlir-print-op-generic | fuse-opt | FileCheck %s

// Round-trips fusion.group / fusion.yield in their custom form, and the
// #fusion.strategy attribute.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @one_input
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[R:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<8xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8xf32>):
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK: fusion.yield %[[G]] : tensor<8xf32>
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK: return %[[R]]
func.func @one_input(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<8xf32>
    fusion.yield %0 : tensor<8xf32>
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// A group without inputs: its values come from constants and tensor.empty.
// CHECK-LABEL: func.func @no_inputs
// CHECK: %[[R:.*]] = fusion.group "g0" "elementwise" {
// CHECK-NOT: ins(
// CHECK: arith.constant dense<2.000000e+00> : tensor<4xf16>
// CHECK: fusion.yield %{{.*}} : tensor<4xf16>
// CHECK-NEXT: } -> tensor<4xf16>
func.func @no_inputs() -> tensor<4xf16> {
  %r = fusion.group "g0" "elementwise" {
    %c = arith.constant dense<2.0> : tensor<4xf16>
    fusion.yield %c : tensor<4xf16>
  } -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// Multiple inputs of different element types and ranks, multiple results,
// decisions and a strategy (printed in the attr-dict after `attributes`).
// CHECK-LABEL: func.func @multi
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf16>)
// CHECK: %[[R:.*]]:2 = fusion.group "kernel_a" "elementwise" ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf16>)
// CHECK-SAME: attributes {decisions = ["materializes result #0 of op 0", "recomputes \22x\22 twice"], strategy = #fusion.strategy<threads = 128, vector = 2, unroll = 3, blocks = 7>} {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x8xf32>, %[[A1:.*]]: tensor<8xf16>):
// CHECK: fusion.yield %[[A0]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf16>
// CHECK-NEXT: } -> tensor<4x8xf32>, tensor<4x8xf16>{{$}}
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @multi(%x: tensor<4x8xf32>, %b: tensor<8xf16>) -> (tensor<4x8xf32>, tensor<4x8xf16>) {
  %r:2 = fusion.group "kernel_a" "elementwise" ins(%x, %b : tensor<4x8xf32>, tensor<8xf16>)
      attributes {decisions = ["materializes result #0 of op 0", "recomputes \"x\" twice"],
                  strategy = #fusion.strategy<threads = 128, vector = 2, unroll = 3, blocks = 7>} {
  ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<8xf16>):
    %e = tensor.empty() : tensor<4x8xf16>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a0, %a1 : tensor<4x8xf32>, tensor<8xf16>) outs(%e : tensor<4x8xf16>) {
    ^bb0(%in: f32, %bias: f16, %out: f16):
      %t = arith.truncf %in : f32 to f16
      %s = arith.addf %t, %bias : f16
      linalg.yield %s : f16
    } -> tensor<4x8xf16>
    fusion.yield %a0, %0 : tensor<4x8xf32>, tensor<4x8xf16>
  } -> tensor<4x8xf32>, tensor<4x8xf16>
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf16>
}

// A group with no results and an empty yield (the terminator is implicit in
// the custom form).
// CHECK-LABEL: func.func @no_results
// CHECK: fusion.group "g1" "elementwise" ins(%{{.*}} : tensor<2xi1>) {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<2xi1>):
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @no_results(%x: tensor<2xi1>) {
  fusion.group "g1" "elementwise" ins(%x : tensor<2xi1>) {
  ^bb0(%a: tensor<2xi1>):
    fusion.yield
  }
  return
}

// The strategy attribute on its own, on any op.
// CHECK-LABEL: func.func @strategy_attr
// CHECK-SAME: attributes {s = #fusion.strategy<threads = 1024, vector = 8, unroll = 16, blocks = 1056>}
func.func @strategy_attr() attributes {s = #fusion.strategy<threads = 1024, vector = 8, unroll = 16, blocks = 1056>} {
  return
}

// fusion.guard on a scalar and on vectors (the code generators' form),
// with and without the index it reports.
// CHECK-LABEL: func.func @guards
// CHECK: %[[G:.*]] = fusion.guard %{{.*}} if %{{.*}}, "index out of range" : f32, i1
// CHECK: %[[V:.*]] = fusion.guard %{{.*}} if %{{.*}}, "lanes" : vector<4xf32>, vector<4xi1>
// CHECK: %[[I:.*]] = fusion.guard %{{.*}} if %{{.*}}, "ids" index %{{.*}} : f32, i1, i64
// CHECK: %[[J:.*]] = fusion.guard %{{.*}} if %{{.*}}, "lanes" index %{{.*}} : vector<4xf32>, vector<4xi1>, vector<4xi64>
// CHECK: return %[[G]], %[[V]], %[[I]], %[[J]]
func.func @guards(%x: f32, %ok: i1, %v: vector<4xf32>, %oks: vector<4xi1>, %i: i64, %is: vector<4xi64>) -> (f32, vector<4xf32>, f32, vector<4xf32>) {
  %g = fusion.guard %x if %ok, "index out of range" : f32, i1
  %w = fusion.guard %v if %oks, "lanes" : vector<4xf32>, vector<4xi1>
  %gi = fusion.guard %x if %ok, "ids" index %i : f32, i1, i64
  %wi = fusion.guard %v if %oks, "lanes" index %is : vector<4xf32>, vector<4xi1>, vector<4xi64>
  return %g, %w, %gi, %wi : f32, vector<4xf32>, f32, vector<4xf32>
}
