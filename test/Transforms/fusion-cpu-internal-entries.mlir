// fusion-cpu-internal-entries: each function with a body that requests a C
// interface becomes internal; declarations and functions without a C
// interface keep their linkage. Through the LLVM lowering only the
// `_mlir_ciface_` wrapper stays external.
//
// RUN: fuse-opt %s --fusion-cpu-internal-entries | FileCheck %s
// RUN: fuse-opt %s --fusion-cpu-internal-entries --convert-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @entry(
// CHECK-SAME: attributes {llvm.emit_c_interface, llvm.linkage = #llvm.linkage<internal>}
// LLVM-DAG: llvm.func internal @entry(
// LLVM-DAG: llvm.func @_mlir_ciface_entry(
func.func @entry(%x: memref<4xf32>, %y: memref<4xf32>) attributes {llvm.emit_c_interface} {
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  return
}

// (a second entry, as fusion-lower-guards adds one for the guards' words)
// CHECK-LABEL: func.func @kfuse_take_status(
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// LLVM-DAG: llvm.func internal @kfuse_take_status(
// LLVM-DAG: llvm.func @_mlir_ciface_kfuse_take_status(
func.func @kfuse_take_status(%w: memref<2xi64>) attributes {llvm.emit_c_interface} {
  return
}

// No C interface: nothing calls it through a wrapper; left as it is.
// CHECK-LABEL: func.func @helper(
// CHECK-SAME: memref<4xf32>) {
// LLVM-DAG: llvm.func @helper(
func.func @helper(%x: memref<4xf32>) {
  return
}

// A declaration (defined outside the module) keeps external linkage.
// CHECK: func.func private @ext(memref<4xf32>) attributes {llvm.emit_c_interface}
// CHECK-NOT: llvm.linkage
func.func private @ext(memref<4xf32>) attributes {llvm.emit_c_interface}
