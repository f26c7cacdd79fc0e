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

// Arithmetic on bf16 runs in f32, each bf16 result rounded back; a compare
// extends its operands; flags stay; f16 and f32 arithmetic, selects and
// constants are left alone.
// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[X:[^:]*]]: bf16, %[[Y:[^:]*]]: bf16, %[[H:[^:]*]]: f16)
// CHECK: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[XW]], %[[YW]] fastmath<contract> : f32
// CHECK-NEXT: %[[SB:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: %[[SW:.*]] = arith.extf %[[SB]] : bf16 to f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[SW]] : f32
// CHECK-NEXT: %[[EB:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK-NEXT: %[[EW:.*]] = arith.extf %[[EB]] : bf16 to f32
// CHECK-NEXT: %[[XW2:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[C:.*]] = arith.cmpf olt, %[[EW]], %[[XW2]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.select %[[C]], %[[EB]], %[[X]] : bf16
// CHECK-NEXT: %[[HM:.*]] = arith.mulf %[[H]], %[[H]] : f16
// CHECK-NEXT: return %[[M]], %[[HM]]
func.func @arithmetic(%x: bf16, %y: bf16, %h: f16) -> (bf16, f16) {
  %s = arith.addf %x, %y fastmath<contract> : bf16
  %e = math.exp %s : bf16
  %c = arith.cmpf olt, %e, %x : bf16
  %m = arith.select %c, %e, %x : bf16
  %hm = arith.mulf %h, %h : f16
  return %m, %hm : bf16, f16
}
