// fusion-cpu-argv-entries: each C interface wrapper becomes a function of
// one argument, an array of pointers to the memref descriptors, holding its
// function's body (the function is erased): no call passes the expanded
// descriptors. Wrappers of another shape are refused.
//
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(convert-to-llvm,fusion-cpu-argv-entries)' \
// RUN:   -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @_mlir_ciface_entry(
// CHECK-SAME: %[[ARGV:[^:]*]]: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[ARGV]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[X:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[ARGV]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[Y:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[DX:.*]] = llvm.load %[[X]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[DY:.*]] = llvm.load %[[Y]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// (the function's body, its blocks and return included)
// CHECK: llvm.fmul
// CHECK: llvm.br
// CHECK: llvm.return
// CHECK-NOT: llvm.func @entry(
// CHECK-NOT: llvm.call @entry
func.func @entry(%x: memref<4xf32>, %y: memref<4xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %w = arith.mulf %v, %v : f32
  cf.br ^bb1
^bb1:
  memref.store %w, %y[%c0] : memref<4xf32>
  return
}

// A function without a C interface is left alone.
// CHECK-LABEL: llvm.func @helper(
func.func @helper(%x: memref<4xf32>) {
  return
}

// -----

// expected-error @below {{fusion-cpu-argv-entries: '_mlir_ciface_scalar' is not a C interface wrapper of a function without results that only it calls}}
func.func @scalar(%x: memref<4xf32>) -> f32 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// expected-error @below {{fusion-cpu-argv-entries: '_mlir_ciface_shared' is not a C interface wrapper of a function without results that only it calls}}
func.func @shared(%x: memref<4xf32>) attributes {llvm.emit_c_interface} {
  return
}

func.func @caller(%x: memref<4xf32>) {
  call @shared(%x) : (memref<4xf32>) -> ()
  return
}
