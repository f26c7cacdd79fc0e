// fusion-gpu-trunc: math.trunc (scalars and vectors, any float type) as
// llvm.intr.trunc, which the NVPTX back end emits as cvt.rzi. The NVVM
// lowering converts only the scalar form (to __nv_truncf) and left the
// vector form of an elementwise kernel unconverted.
//
// RUN: fuse-opt %s --fusion-gpu-trunc | FileCheck %s
// RUN: fuse-opt %s --fusion-gpu-trunc --convert-func-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @trunc
// CHECK-SAME: (%[[X:.*]]: f32, %[[V:.*]]: vector<4xf32>, %[[H:.*]]: vector<2xf16>)
// CHECK-NEXT: %[[A:.*]] = llvm.intr.trunc(%[[X]]) : (f32) -> f32
// CHECK-NEXT: %[[B:.*]] = llvm.intr.trunc(%[[V]]) : (vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT: %[[C:.*]] = llvm.intr.trunc(%[[H]]) : (vector<2xf16>) -> vector<2xf16>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
// CHECK-NOT: math.trunc
// LLVM-NOT: math.trunc
func.func @trunc(%x: f32, %v: vector<4xf32>, %h: vector<2xf16>) -> (f32, vector<4xf32>, vector<2xf16>) {
  %a = math.trunc %x : f32
  %b = math.trunc %v fastmath<contract> : vector<4xf32>
  %c = math.trunc %h : vector<2xf16>
  return %a, %b, %c : f32, vector<4xf32>, vector<2xf16>
}
