// fusion-ieee-sqrt (strict numerics on CUDA): f32/f64 sqrt and rsqrt become
// the correctly rounded NVVM square root, vectors lane by lane; rsqrt is
// 1 / sqrt. Other element types are left alone.
//
// RUN: fuse-opt %s --fusion-ieee-sqrt | FileCheck %s

// CHECK-LABEL: func.func @lanes
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"
// CHECK: vector.from_elements
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.d"
// CHECK: arith.divf
// CHECK-NOT: math.sqrt
// CHECK-NOT: math.rsqrt
// CHECK: math.sqrt %{{.*}} : f16
func.func @lanes(%v: vector<2xf32>, %d: f64, %h: f16) -> (vector<2xf32>, f64, f16) {
  %0 = math.sqrt %v : vector<2xf32>
  %1 = math.rsqrt %d : f64
  %2 = math.sqrt %h : f16
  return %0, %1, %2 : vector<2xf32>, f64, f16
}
