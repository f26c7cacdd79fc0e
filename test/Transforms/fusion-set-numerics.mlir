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

// x ** 0.5 is sqrt(x) in both modes, with the op's flags (then contract in
// fast mode); other exponents, 0.5 of a vector not a splat, stay powf.
// FAST-LABEL: func.func @half_powers
// FAST-SAME: (%[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<4xf32>, %[[Y:[^:]*]]: f32)
// FAST: %[[S:.*]] = math.sqrt %[[X]] fastmath<nnan,contract> : f32
// FAST: %[[SV:.*]] = math.sqrt %[[V]] fastmath<contract> : vector<4xf32>
// FAST: %[[P:.*]] = math.powf %[[X]], %{{.*}} fastmath<contract> : f32
// FAST: %[[Q:.*]] = math.powf %[[V]], %{{.*}} fastmath<contract> : vector<4xf32>
// FAST: %[[R:.*]] = math.powf %[[X]], %[[Y]] fastmath<contract> : f32
// FAST: return %[[S]], %[[SV]], %[[P]], %[[Q]], %[[R]]
// STRICT-LABEL: func.func @half_powers
// STRICT: math.sqrt %{{.*}} fastmath<nnan> : f32
// STRICT: math.sqrt %{{.*}} : vector<4xf32>
// STRICT-COUNT-3: math.powf
// STRICT-NOT: math.sqrt
func.func @half_powers(%x: f32, %v: vector<4xf32>, %y: f32) -> (f32, vector<4xf32>, f32, vector<4xf32>, f32) {
  %half = arith.constant 5.000000e-01 : f32
  %halves = arith.constant dense<5.000000e-01> : vector<4xf32>
  %third = arith.constant 0.333333343 : f32
  %mixed = arith.constant dense<[5.000000e-01, 5.000000e-01, 5.000000e-01, 2.500000e-01]> : vector<4xf32>
  %s = math.powf %x, %half fastmath<nnan> : f32
  %sv = math.powf %v, %halves : vector<4xf32>
  %p = math.powf %x, %third : f32
  %q = math.powf %v, %mixed : vector<4xf32>
  %r = math.powf %x, %y : f32
  return %s, %sv, %p, %q, %r : f32, vector<4xf32>, f32, vector<4xf32>, f32
}
