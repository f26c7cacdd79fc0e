// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics))' | FileCheck %s --check-prefix=FAST
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics{mode=strict}))' | FileCheck %s --check-prefix=STRICT
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics{mode=loose}))' 2>&1 | FileCheck %s --check-prefix=BAD

// fast adds `contract` (FMA allowed) to every op with fast-math flags and
// keeps the flags the input had; strict changes nothing.

// FAST-LABEL: func.func @f
// FAST: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// FAST: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// FAST: arith.extf %{{.*}} fastmath<contract> : f16 to f32
// STRICT-LABEL: func.func @f
// STRICT-NOT: contract
// STRICT: arith.addf %{{.*}}, %{{.*}} fastmath<nnan> : f32
// BAD: fusion-set-numerics: mode must be 'strict' or 'fast', got 'loose'
func.func @f(%a: f32, %b: f32, %h: f16) -> (f32, f32) {
  %m = arith.mulf %a, %b : f32
  %s = arith.addf %m, %a fastmath<nnan> : f32
  %e = arith.extf %h : f16 to f32
  return %s, %e : f32, f32
}
