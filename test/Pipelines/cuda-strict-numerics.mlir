// REQUIRES: ptxas
//
// numerics=strict on CUDA: no mul+add contracted into an FMA, correctly
// rounded square roots (sqrt.rn, not libdevice's sqrt.approx), rsqrt as a
// correctly rounded reciprocal of sqrt.rn, IEEE division. numerics=fast
// (the default) contracts, keeps the approximate roots and divides with
// div.full.f32 (fusion-fast-div).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{numerics=strict},fusion-target-cuda)' -o %t.strict.mlir
// RUN: %python %S/extract_ptx.py %t.strict.mlir > %t.strict.ptx
// RUN: %ptxas -arch=sm_90 %t.strict.ptx -o %t.strict.cubin
// RUN: FileCheck %s --check-prefix=STRICT --input-file=%t.strict.ptx
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.fast.mlir
// RUN: %python %S/extract_ptx.py %t.fast.mlir > %t.fast.ptx
// RUN: FileCheck %s --check-prefix=FAST --input-file=%t.fast.ptx

// STRICT: .visible .entry f_g0(
// STRICT-NOT: fma.rn
// STRICT-NOT: sqrt.approx
// STRICT-DAG: mul.rn.f32
// STRICT-DAG: sqrt.rn.f32
// STRICT-DAG: rcp.rn.f32
// STRICT-DAG: div.rn.f32

// FAST: .visible .entry f_g0(
// FAST-DAG: fma.rn.f32
// FAST-DAG: sqrt.approx.f32
// FAST-DAG: rsqrt.approx.f32
// FAST-DAG: div.full.f32
// FAST-NOT: div.rn
// FAST-NOT: rcp.rn

#map = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %one : f32
    %q = math.sqrt %s : f32
    %d = arith.divf %q, %b : f32
    %rs = math.rsqrt %a : f32
    %t = arith.addf %d, %rs : f32
    linalg.yield %t : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
