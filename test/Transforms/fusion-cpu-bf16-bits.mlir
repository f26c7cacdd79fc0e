// fusion-cpu-bf16-bits: selects and stores of bf16 values (scalars and
// vectors) in the CPU target's LLVM dialect move i16 bits, so that the x86
// back end has no bf16 value to materialize through __truncsfbf2 (which the
// JIT does not provide). Other types' selects and stores are left alone.
//
// RUN: fuse-opt %s --fusion-cpu-bf16-bits | FileCheck %s

// CHECK-LABEL: llvm.func @select_store(
// CHECK-SAME: %[[C:[^:]*]]: i1, %[[A:[^:]*]]: bf16, %[[B:[^:]*]]: bf16, %[[P:[^:]*]]: !llvm.ptr
// CHECK-DAG: %[[AB:.*]] = llvm.bitcast %[[A]] : bf16 to i16
// CHECK-DAG: %[[BB:.*]] = llvm.bitcast %[[B]] : bf16 to i16
// CHECK: %[[S:.*]] = llvm.select %[[C]], %[[AB]], %[[BB]] : i1, i16
// CHECK: %[[R:.*]] = llvm.bitcast %[[S]] : i16 to bf16
// CHECK: %[[RB:.*]] = llvm.bitcast %[[R]] : bf16 to i16
// CHECK: llvm.store %[[RB]], %[[P]] : i16, !llvm.ptr
// CHECK-NOT: : bf16, !llvm.ptr
llvm.func @select_store(%c: i1, %a: bf16, %b: bf16, %p: !llvm.ptr) {
  %s = llvm.select %c, %a, %b : i1, bf16
  llvm.store %s, %p : bf16, !llvm.ptr
  llvm.return
}

// A stored bf16 constant and a vector of them.
// CHECK-LABEL: llvm.func @constants(
// CHECK: %[[K:.*]] = llvm.mlir.constant(1.500000e+00 : bf16) : bf16
// CHECK: %[[KB:.*]] = llvm.bitcast %[[K]] : bf16 to i16
// CHECK: llvm.store %[[KB]], %{{.*}} : i16, !llvm.ptr
// CHECK: %[[VB:.*]] = llvm.bitcast %{{.*}} : vector<4xbf16> to vector<4xi16>
// CHECK: llvm.store %[[VB]], %{{.*}} : vector<4xi16>, !llvm.ptr
llvm.func @constants(%p: !llvm.ptr, %v: vector<4xbf16>) {
  %k = llvm.mlir.constant(1.5 : bf16) : bf16
  llvm.store %k, %p : bf16, !llvm.ptr
  llvm.store %v, %p : vector<4xbf16>, !llvm.ptr
  llvm.return
}

// f32 and f16 selects and stores are not touched.
// CHECK-LABEL: llvm.func @others(
// CHECK-NOT: llvm.bitcast
// CHECK: llvm.select %{{.*}} : i1, f32
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr
// CHECK: llvm.store %{{.*}} : f16, !llvm.ptr
llvm.func @others(%c: i1, %a: f32, %b: f32, %h: f16, %p: !llvm.ptr) {
  %s = llvm.select %c, %a, %b : i1, f32
  llvm.store %s, %p : f32, !llvm.ptr
  llvm.store %h, %p : f16, !llvm.ptr
  llvm.return
}
