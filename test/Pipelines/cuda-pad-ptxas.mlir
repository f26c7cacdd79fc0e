// REQUIRES: ptxas
//
// The PTX that fusion-target-cuda emits for the padded programs of
// cuda-pad.mlir (a pad rewritten as a gather, fused with its consumer and
// with the producer of its source) is accepted by ptxas, for the default
// chip and for sm_80 (no GPU needed). Without -split-input-file the two
// functions are one module: one gpu.module, one PTX with both kernels
// (ptxas assembles one module per file).
//
// RUN: fuse-opt %S/cuda-pad.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
//
// RUN: fuse-opt %S/cuda-pad.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: FileCheck %s --input-file=%t.sm80.ptx

// CHECK: .visible .entry pad_scale_g0(
// CHECK: selp.f32
// CHECK: .visible .entry pad_of_exp_g0(
// CHECK: selp.f32
