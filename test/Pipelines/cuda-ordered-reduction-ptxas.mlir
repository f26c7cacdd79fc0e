// REQUIRES: ptxas
//
// The PTX of the ordered kernels of cuda-ordered-reduction.mlir (a thread
// per result running its reduction loop in order) is accepted by ptxas,
// for sm_90 and sm_80.
//
// RUN: fuse-opt %S/cuda-ordered-reduction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
//
// RUN: fuse-opt %S/cuda-ordered-reduction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: FileCheck %s --input-file=%t.sm80.ptx

// CHECK: .visible .entry alternating_g0_ordered0(
// CHECK: sub.{{(rn.)?}}f32
// CHECK: .visible .entry horner_g0_ordered0(
// CHECK: .visible .entry horner_g0_ordered1(
// CHECK: .visible .entry row_difference_g0(
// CHECK: shfl.sync.bfly
// CHECK: .visible .entry mixed_g0_rows0(
// CHECK: shfl.sync.bfly
// CHECK: .visible .entry mixed_g0_ordered1(
