// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-cpu-bf16-casts))' | FileCheck %s

// Integer-to-bf16 conversions go through f32 (the truncation is then
// expanded by arith-expand; the JIT has no __truncsfbf2). Conversions to
// other float types are left alone.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[I:.*]]: i64, %[[V:.*]]: vector<4xi32>)
// CHECK: %[[A:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[AB:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK: %[[B:.*]] = arith.uitofp %[[V]] : vector<4xi32> to vector<4xf32>
// CHECK: %[[BB:.*]] = arith.truncf %[[B]] : vector<4xf32> to vector<4xbf16>
// CHECK: %[[C:.*]] = arith.sitofp %[[I]] : i64 to f16
// CHECK-NOT: arith.truncf
// CHECK: return %[[AB]], %[[BB]], %[[C]]
func.func @casts(%i: i64, %v: vector<4xi32>) -> (bf16, vector<4xbf16>, f16) {
  %a = arith.sitofp %i : i64 to bf16
  %b = arith.uitofp %v : vector<4xi32> to vector<4xbf16>
  %c = arith.sitofp %i : i64 to f16
  return %a, %b, %c : bf16, vector<4xbf16>, f16
}
