// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics))' | FileCheck %s --check-prefix=FAST
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics{mode=strict}))' | FileCheck %s --check-prefix=STRICT
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics{mode=loose}))' 2>&1 | FileCheck %s --check-prefix=BAD

// fast adds `contract` (FMA allowed) to every op with fast-math flags but
// float casts and keeps the flags the input had; strict changes nothing.
// (a round trip through bf16 whose casts allowed contraction would fold
// away: the canonicalization below keeps it)
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-set-numerics,canonicalize))' | FileCheck %s --check-prefix=TRIP

// FAST-LABEL: func.func @f
// FAST: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// FAST: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// FAST: arith.extf %{{.*}} : f16 to f32
// FAST-NOT: contract
// FAST: arith.truncf %{{.*}} : f32 to bf16
// FAST-NEXT: arith.extf %{{.*}} : bf16 to f32
// TRIP-LABEL: func.func @f
// TRIP: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// TRIP: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// TRIP: return %{{.*}}, %{{.*}}, %[[E]]
// STRICT-LABEL: func.func @f
// STRICT-NOT: contract
// STRICT: arith.addf %{{.*}}, %{{.*}} fastmath<nnan> : f32
// BAD: fusion-set-numerics: mode must be 'strict' or 'fast', got 'loose'
func.func @f(%a: f32, %b: f32, %h: f16) -> (f32, f32, f32) {
  %m = arith.mulf %a, %b : f32
  %s = arith.addf %m, %a fastmath<nnan> : f32
  %e = arith.extf %h : f16 to f32
  %t = arith.truncf %a : f32 to bf16
  %r = arith.extf %t : bf16 to f32
  return %s, %e, %r : f32, f32, f32
}
