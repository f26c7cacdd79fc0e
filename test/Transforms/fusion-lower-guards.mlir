// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(fusion-lower-guards{take-function=kfuse_take_status})' \
// RUN:   | FileCheck %s

// fusion-lower-guards: each distinct guard message gets two i64 words of
// @kfuse_status (its messages in kfuse.guards, in order): a guard becomes
// its value, and where its condition is false (any lane of a vector) a
// store of 1 into its first word and of its index, if it has one, into the
// second (an atomic exchange: threads that fail at once store different
// indices; lane by lane on vectors), at the end of the guard's block. In a
// kernel (gpu.launch) the buffer is taken on the host, before the launch,
// so that the kernel receives it as an argument. take-function adds the
// function the CPU runtime calls to read and zero the words.

// Loops on the host (the CPU target): two guards with one message share
// words 0 and 1, the third message gets words 2 and 3.
// CHECK: memref.global @kfuse_status : memref<4xi64> = dense<0> {kfuse.guards = ["ids", "labels"]}
// CHECK-LABEL: func.func @loops
// CHECK: %[[S:.*]] = memref.get_global @kfuse_status : memref<4xi64>
// CHECK: scf.for
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<16xi64>
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: %[[BAD:.*]] = arith.xori %[[OK:.*]], %[[T]] : i1
// CHECK: %[[BAD2:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK: %[[BAD3:.*]] = arith.xori %{{.*}}, %{{.*}} : i1
// The stores of the words come last in the loop's body.
// CHECK: memref.store %[[V]], %{{.*}}[%{{.*}}] : memref<16xf32>
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[W0:.*]] = arith.constant 0 : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: memref.store %[[ONE]], %[[S]][%[[W0]]] {alignment = 8 : i64} : memref<4xi64>
// CHECK: %[[W1:.*]] = arith.constant 1 : index
// CHECK: memref.atomic_rmw assign %[[ID]], %[[S]][%[[W1]]] : (i64, memref<4xi64>) -> i64
// CHECK: }
// CHECK: scf.if %[[BAD2]] {
// CHECK: arith.constant 0 : index
// CHECK: scf.if %[[BAD3]] {
// CHECK: %[[W2:.*]] = arith.constant 2 : index
// CHECK: memref.store %{{.*}}, %[[S]][%[[W2]]] {alignment = 8 : i64} : memref<4xi64>
// CHECK-NEXT: }
// CHECK-NOT: fusion.guard
// CHECK: return
// The reader: copies each word out and zeroes it.
// CHECK-LABEL: func.func @kfuse_take_status(%{{.*}}: memref<4xi64>)
// CHECK: memref.get_global @kfuse_status
// CHECK-COUNT-4: memref.load
// CHECK: return
func.func @loops(%ids: memref<16xi64>, %t: memref<8xf32>, %ok2: i1, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %id = memref.load %ids[%i] : memref<16xi64>
    %idx = arith.index_cast %id : i64 to index
    %ok = arith.cmpi ult, %idx, %c8 : index
    %k = arith.select %ok, %idx, %c0 : index
    %v = memref.load %t[%k] : memref<8xf32>
    %g = fusion.guard %v if %ok, "ids" index %id : f32, i1, i64
    %h = fusion.guard %g if %ok, "ids" : f32, i1
    %l = fusion.guard %h if %ok2, "labels" : f32, i1
    memref.store %l, %out[%i] : memref<16xf32>
  }
  return
}

// -----

// A kernel: the buffer is taken before the launch; a vector condition is
// and-reduced first, and each lane that failed stores its index.
// CHECK-LABEL: func.func @kernel
// CHECK: %[[S:.*]] = memref.get_global @kfuse_status : memref<2xi64>
// CHECK-NEXT: gpu.launch
// CHECK: %[[ALL:.*]] = vector.reduction <and>, %{{.*}} : vector<4xi1> into i1
// CHECK: %[[BAD:.*]] = arith.xori %[[ALL]]
// CHECK: vector.store
// CHECK: scf.if %[[BAD]]
// CHECK: memref.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 8 : i64} : memref<2xi64>
// CHECK-COUNT-4: vector.extract %{{.*}}[{{[0-3]}}] : i1 from vector<4xi1>
// CHECK: vector.extract %{{.*}}[3] : i64 from vector<4xi64>
// CHECK-NEXT: memref.atomic_rmw assign %{{.*}}, %[[S]][%{{.*}}] : (i64, memref<2xi64>) -> i64
// CHECK: gpu.terminator
func.func @kernel(%v: vector<4xf32>, %ok: vector<4xi1>, %i: vector<4xi64>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %g = fusion.guard %v if %ok, "kernel" index %i : vector<4xf32>, vector<4xi1>, vector<4xi64>
    vector.store %g, %out[%c0] : memref<4xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A module without guards gets no status buffer and no reader.
// CHECK-LABEL: func.func @none
// CHECK-NOT: kfuse_status
// CHECK-NOT: kfuse_take_status
func.func @none(%x: f32) -> f32 {
  return %x : f32
}

// -----

// expected-error @+1 {{fusion-lower-guards: the module already has a symbol named @kfuse_status}}
module {
  memref.global @kfuse_status : memref<1xi64> = dense<0>
  func.func @clash(%x: f32, %ok: i1) -> f32 {
    %g = fusion.guard %x if %ok, "m" : f32, i1
    return %g : f32
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @outlined(%x: f32, %ok: i1) kernel {
      // expected-error @+1 {{fusion-lower-guards: a fusion.guard in an outlined kernel (run the pass before gpu-kernel-outlining)}}
      %g = fusion.guard %x if %ok, "m" : f32, i1
      gpu.return
    }
  }
}
