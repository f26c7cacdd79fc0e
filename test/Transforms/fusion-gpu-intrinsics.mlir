// fusion-gpu-intrinsics: math.trunc, ctlz, cttz, ctpop and absi (scalars
// and vectors) as LLVM intrinsics (trunc: cvt.rzi in PTX). The NVVM
// lowering converts only their scalar forms (to libdevice calls) and left
// the vector forms of elementwise kernels unconverted.
//
// RUN: fuse-opt %s --fusion-gpu-intrinsics | FileCheck %s

// CHECK-LABEL: func.func @trunc
// CHECK-SAME: (%[[X:.*]]: f32, %[[V:.*]]: vector<4xf32>, %[[H:.*]]: vector<2xf16>)
// CHECK-NEXT: %[[A:.*]] = llvm.intr.trunc(%[[X]]) : (f32) -> f32
// CHECK-NEXT: %[[B:.*]] = llvm.intr.trunc(%[[V]]) : (vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT: %[[C:.*]] = llvm.intr.trunc(%[[H]]) : (vector<2xf16>) -> vector<2xf16>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @trunc(%x: f32, %v: vector<4xf32>, %h: vector<2xf16>) -> (f32, vector<4xf32>, vector<2xf16>) {
  %a = math.trunc %x : f32
  %b = math.trunc %v fastmath<contract> : vector<4xf32>
  %c = math.trunc %h : vector<2xf16>
  return %a, %b, %c : f32, vector<4xf32>, vector<2xf16>
}

// Bit counts defined at 0 (is_zero_poison = false: the bit width), and an
// absolute value that keeps the minimum integer (is_int_min_poison = false).
// CHECK-LABEL: func.func @bits
// CHECK-SAME: (%[[V:.*]]: vector<4xi32>, %[[W:.*]]: vector<2xi64>, %[[S:.*]]: i8)
// CHECK-NEXT: %[[A:.*]] = "llvm.intr.ctlz"(%[[V]]) <{is_zero_poison = false}> : (vector<4xi32>) -> vector<4xi32>
// CHECK-NEXT: %[[B:.*]] = "llvm.intr.cttz"(%[[W]]) <{is_zero_poison = false}> : (vector<2xi64>) -> vector<2xi64>
// CHECK-NEXT: %[[C:.*]] = llvm.intr.ctpop(%[[V]]) : (vector<4xi32>) -> vector<4xi32>
// CHECK-NEXT: %[[D:.*]] = "llvm.intr.abs"(%[[S]]) <{is_int_min_poison = false}> : (i8) -> i8
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]]
// CHECK-NOT: math.
func.func @bits(%v: vector<4xi32>, %w: vector<2xi64>, %s: i8) -> (vector<4xi32>, vector<2xi64>, vector<4xi32>, i8) {
  %a = math.ctlz %v : vector<4xi32>
  %b = math.cttz %w : vector<2xi64>
  %c = math.ctpop %v : vector<4xi32>
  %d = math.absi %s : i8
  return %a, %b, %c, %d : vector<4xi32>, vector<2xi64>, vector<4xi32>, i8
}
