// REQUIRES: ptxas
//
// x ** 3 as torch-mlir writes it (math.fpowi with an i64 exponent) and x
// raised to a runtime integer n: the NVVM lowering would call libdevice's
// __nv_powif (an i32 exponent) through a pointer with an i64 argument.
// fusion-target-cuda multiplies instead (x * x * x) and computes the
// variable power as __nv_powf of n converted to float (inlined from
// libdevice). The PTX assembles and calls nothing.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx

// CHECK-NOT: __nv_powif
// CHECK: .entry cube_g0(
// CHECK-NOT: call
// CHECK: mul.f32
// CHECK: mul.f32
// CHECK-NOT: call
// CHECK: .entry power_g0(
// CHECK-NOT: call
// CHECK: cvt.rn.f32.s64
// CHECK-NOT: call
// CHECK-NOT: __nv_powif

#map = affine_map<(d0) -> (d0)>
func.func @cube(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c3 = arith.constant 3 : i64
    %y = math.fpowi %a, %c3 : f32, i64
    linalg.yield %y : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

func.func @power(%x: tensor<1024xf32>, %n: tensor<1024xi64>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%x, %n : tensor<1024xf32>, tensor<1024xi64>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %k: i64, %o: f32):
    %y = math.fpowi %a, %k : f32, i64
    linalg.yield %y : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
