// RUN: fuse-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(fusion-bool-bytes))' | FileCheck %s

// fusion-bool-bytes: an i1 buffer the function allocates, and its views,
// become i8; stores write extui of the value, loads read trunci of the byte.
// CHECK-LABEL: func.func @row_all
// CHECK-SAME: (%[[M:[^:]*]]: memref<4x8xi8>, %[[OUT:[^:]*]]: memref<4xi8>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xi8>
// CHECK: %[[T:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK-NEXT: memref.store %[[T]], %[[A]][%{{.*}}] : memref<4xi8>
// CHECK: %[[V:.*]] = memref.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [4, 1] : memref<4xi8> into memref<4x1xi8>
// CHECK: %[[B:.*]] = memref.load %[[V]][%{{.*}}, %{{.*}}] : memref<4x1xi8>
// CHECK-NEXT: %[[BIT:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK-NEXT: arith.andi %{{.*}}, %[[BIT]] : i1
// CHECK: memref.dealloc %[[A]] : memref<4xi8>
// CHECK-NOT: xi1>
func.func @row_all(%m: memref<4x8xi8>, %out: memref<4xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %true = arith.constant true
  %acc = memref.alloc() : memref<4xi1>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %true, %acc[%i] : memref<4xi1>
  }
  %view = memref.expand_shape %acc [[0, 1]] output_shape [4, 1] : memref<4xi1> into memref<4x1xi1>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %byte = memref.load %m[%i, %j] : memref<4x8xi8>
      %bit = arith.trunci %byte : i8 to i1
      %a = memref.load %view[%i, %c0] : memref<4x1xi1>
      %r = arith.andi %bit, %a : i1
      memref.store %r, %view[%i, %c0] : memref<4x1xi1>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %acc[%i] : memref<4xi1>
    %w = arith.extui %a : i1 to i8
    memref.store %w, %out[%i] : memref<4xi8>
  }
  memref.dealloc %acc : memref<4xi1>
  return
}

// -----

// Vector loads and stores of an i1 buffer (in a gpu.launch body, where
// fusion-codegen-cuda runs the pass) become vectors of bytes.
// CHECK-LABEL: func.func @vectors
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xi8>
// CHECK: %[[E:.*]] = arith.extui %{{.*}} : vector<8xi1> to vector<8xi8>
// CHECK-NEXT: vector.store %[[E]], %[[A]][%{{.*}}] : memref<8xi8>, vector<8xi8>
// CHECK: %[[L:.*]] = vector.load %[[A]][%{{.*}}] : memref<8xi8>, vector<8xi8>
// CHECK-NEXT: arith.trunci %[[L]] : vector<8xi8> to vector<8xi1>
func.func @vectors(%out: memref<8xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = arith.constant dense<true> : vector<8xi1>
  %acc = memref.alloc() : memref<8xi1>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    vector.store %t, %acc[%c0] : memref<8xi1>, vector<8xi1>
    %v = vector.load %acc[%c0] : memref<8xi1>, vector<8xi1>
    %w = arith.extui %v : vector<8xi1> to vector<8xi8>
    vector.store %w, %out[%c0] : memref<8xi8>, vector<8xi8>
    gpu.terminator
  }
  memref.dealloc %acc : memref<8xi1>
  return
}

// -----

// Negative: a copy from an i1 buffer the function did not allocate is
// reported, not lowered (the LLVM lowering would fail on i1 memory).
func.func @copy_from_argument(%m: memref<4xi1>) {
  %acc = memref.alloc() : memref<4xi1>
  // expected-error @+1 {{kfuse cannot generate code for 'memref.copy' of a boolean (i1) buffer not allocated by the program yet}}
  memref.copy %m, %acc : memref<4xi1> to memref<4xi1>
  memref.dealloc %acc : memref<4xi1>
  return
}

// -----

// Negative: other uses of an i1 buffer are reported by name.
func.func @unsupported_user(%i: index) {
  %acc = memref.alloc() : memref<4xi1>
  // expected-error @+1 {{kfuse cannot generate code for 'memref.reinterpret_cast' on a buffer of booleans (i1) yet}}
  %r = memref.reinterpret_cast %acc to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi1> to memref<2x2xi1>
  memref.dealloc %acc : memref<4xi1>
  return
}
