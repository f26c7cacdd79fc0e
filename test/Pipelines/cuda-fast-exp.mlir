// REQUIRES: ptxas
//
// exp on CUDA: with fast numerics (the default) fusion-set-numerics lets
// math.exp be approximated (afn) and fusion-target-cuda computes it as
// ex2.approx.f32(x * log2(e)), two instructions per element, as Triton
// does; with numerics=strict it stays libdevice's __nv_expf (range
// reduction with fma.rm around ex2.approx.ftz, about an ulp).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.fast.mlir
// RUN: %python %S/extract_ptx.py %t.fast.mlir > %t.fast.ptx
// RUN: %ptxas -arch=sm_90 %t.fast.ptx -o %t.fast.cubin
// RUN: FileCheck %s --check-prefix=FAST --input-file=%t.fast.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{numerics=strict},fusion-target-cuda)' -o %t.strict.mlir
// RUN: %python %S/extract_ptx.py %t.strict.mlir > %t.strict.ptx
// RUN: FileCheck %s --check-prefix=STRICT --input-file=%t.strict.ptx

// CODEGEN: math.exp %{{.*}} fastmath<contract,afn> : vector<4xf32>

// FAST: .visible .entry f_g0(
// FAST-COUNT-4: ex2.approx.f32
// FAST-NOT: ex2.approx
// FAST-NOT: fma.rm

// STRICT: .visible .entry f_g0(
// STRICT-NOT: ex2.approx.f32
// STRICT: fma.rm.f32
// STRICT: ex2.approx.ftz.f32

#map = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
