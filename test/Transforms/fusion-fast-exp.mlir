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
