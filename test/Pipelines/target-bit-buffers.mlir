// The targets take code whose boolean buffers hold bytes: fusion-target-cpu
// what fusion-codegen-cpu leaves (through fusion-bool-bytes),
// fusion-target-cuda kernels over i8 buffers. A loop nest or kernel that
// still loads or stores a buffer of i1 is refused with an error that names
// the buffer, instead of stopping fuse-opt in the memref-to-LLVM lowering's
// assertion ("integralElementType.getWidth() >= 8"). Bytes pass.
//
// RUN: fuse-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(fusion-target-cpu)'
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-bool-bytes),fusion-target-cpu)' | FileCheck %s
// (cuda-target-bit-buffers.mlir: the same for a kernel)

// CHECK-LABEL: llvm.func @bits
// CHECK: llvm.store %{{.*}} : i8, !llvm.ptr
func.func @bits(%out: memref<4xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %acc = memref.alloc() : memref<4xi1>
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{fusion-target-cpu: 'memref<4xi1>' has elements narrower than a byte}}
    memref.store %true, %acc[%i] : memref<4xi1>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %b = memref.load %acc[%i] : memref<4xi1>
    %byte = arith.extui %b : i1 to i8
    memref.store %byte, %out[%i] : memref<4xi8>
  }
  memref.dealloc %acc : memref<4xi1>
  return
}

// -----

// CHECK-LABEL: llvm.func @bytes
func.func @bytes(%x: memref<4xi8>, %out: memref<4xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %b = memref.load %x[%i] : memref<4xi8>
    memref.store %b, %out[%i] : memref<4xi8>
  }
  return
}
