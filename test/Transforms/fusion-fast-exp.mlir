// fusion-fast-exp: an f32 math.exp that allows approximation (afn) becomes
// ex2.approx.f32 of x * log2(e), vectors lane by lane; one marked
// kfuse.ftz (a term of an online sum, see the row emitter) flushes subnormal
// results: ex2.approx.ftz.f32. Exps without afn (strict numerics) and f64
// exps are left to libdevice, marked or not.
//
// RUN: fuse-opt %s --fusion-fast-exp | FileCheck %s

// CHECK-LABEL: func.func @lanes
// CHECK: %[[L2E:.*]] = arith.constant dense<1.44269502> : vector<2xf32>
// CHECK: %[[S:.*]] = arith.mulf %{{.*}}, %[[L2E]] fastmath<contract> : vector<2xf32>
// CHECK: %[[A:.*]] = vector.extract %[[S]][0]
// CHECK: llvm.inline_asm "ex2.approx.f32 $0, $1;", "=f,f" %[[A]] : (f32) -> f32
// CHECK: %[[B:.*]] = vector.extract %[[S]][1]
// CHECK: llvm.inline_asm "ex2.approx.f32 $0, $1;", "=f,f" %[[B]] : (f32) -> f32
// CHECK: vector.from_elements
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: llvm.inline_asm "ex2.approx.f32 $0, $1;"
// CHECK-NOT: llvm.inline_asm
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.exp %{{.*}} fastmath<afn> : f64
func.func @lanes(%v: vector<2xf32>, %s: f32, %d: f64) -> (vector<2xf32>, f32, f32, f64) {
  %0 = math.exp %v fastmath<contract,afn> : vector<2xf32>
  %1 = math.exp %s fastmath<afn> : f32
  %2 = math.exp %s : f32
  %3 = math.exp %d fastmath<afn> : f64
  return %0, %1, %2, %3 : vector<2xf32>, f32, f32, f64
}

// CHECK-LABEL: func.func @flushed
// CHECK: %[[L2E:.*]] = arith.constant dense<1.44269502> : vector<2xf32>
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm "ex2.approx.f32 $0, $1;", "=f,f"
// CHECK-NOT: llvm.inline_asm
// CHECK: math.exp %{{.*}} {kfuse.ftz} : f32
func.func @flushed(%v: vector<2xf32>, %s: f32) -> (vector<2xf32>, f32, f32) {
  %0 = math.exp %v fastmath<afn> {kfuse.ftz} : vector<2xf32>
  %1 = math.exp %s fastmath<afn> : f32
  %2 = math.exp %s {kfuse.ftz} : f32
  return %0, %1, %2 : vector<2xf32>, f32, f32
}

// Exps every use of which adds their result to (or subtracts it from, or
// it from) a constant of magnitude 2^-100 or more, or not finite, flush too:
// a result below 2^-126 is lost in that sum's rounding (1 + exp(-x) of a
// sigmoid, exp(x) + 1 of a softplus). Not beside a smaller constant, a
// zero, a value, another use, or an addition that may be regrouped
// (reassoc).
// CHECK-LABEL: func.func @absorbed
// CHECK-COUNT-2: llvm.inline_asm "ex2.approx.ftz.f32
// CHECK: arith.addf %[[ONE:.*]], %{{.*}} : vector<2xf32>
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32
// CHECK: arith.addf
// CHECK-COUNT-6: llvm.inline_asm "ex2.approx.f32
// CHECK-NOT: llvm.inline_asm
func.func @absorbed(%v: vector<2xf32>, %s: f32, %t: f32)
    -> (vector<2xf32>, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %one = arith.constant dense<1.0> : vector<2xf32>
  %c1 = arith.constant 1.0 : f32
  %big = arith.constant 0x7F800000 : f32
  %edge = arith.constant 0x0D800000 : f32
  %small = arith.constant 0x0D000000 : f32
  %zero = arith.constant 0.0 : f32
  // a splat of 1 (vector lanes), then 1 - exp and exp - 1 from one exp
  %e0 = math.exp %v fastmath<afn> : vector<2xf32>
  %r0 = arith.addf %one, %e0 : vector<2xf32>
  %e1 = math.exp %s fastmath<afn> : f32
  %r1 = arith.subf %c1, %e1 : f32
  %r2 = arith.subf %e1, %c1 : f32
  // +inf, and 2^-100 itself
  %e2 = math.exp %t fastmath<afn> : f32
  %r3 = arith.addf %e2, %big : f32
  %r4 = arith.addf %e2, %edge : f32
  // 2^-101; 0; a value; a use that is no addition; reassoc
  %e3 = math.exp %s fastmath<afn,contract> : f32
  %r5 = arith.addf %e3, %small : f32
  %e4 = math.exp %t fastmath<afn,contract> : f32
  %r6 = arith.addf %e4, %zero : f32
  %e5 = math.exp %v fastmath<afn,contract> : vector<2xf32>
  %r7 = arith.addf %e5, %v : vector<2xf32>
  %e6 = math.exp %t fastmath<contract,afn> : f32
  %r8 = arith.addf %e6, %c1 : f32
  %r9 = arith.mulf %e6, %c1 : f32
  %e7 = math.exp %s fastmath<afn> : f32
  %r10 = arith.addf %e7, %c1 fastmath<reassoc> : f32
  %x7 = vector.extract %r7[0] : f32 from vector<2xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %x7, %r9, %r10
      : vector<2xf32>, f32, f32, f32, f32, f32, f32, f32, f32, f32
}
