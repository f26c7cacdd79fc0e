// REQUIRES: ptxas
//
// The PTX of the guarded gathers of cuda-gather-guard.mlir (an embedding
// lookup, a loss's label pick, each storing into the status buffer where an
// index is out of range) is accepted by ptxas, for sm_90 and sm_80.
//
// RUN: fuse-opt %S/cuda-gather-guard.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
//
// RUN: fuse-opt %S/cuda-gather-guard.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: FileCheck %s --input-file=%t.sm80.ptx

// CHECK: .visible .entry embedding_g0(
// CHECK: st.global.b64 [%rd{{[0-9]+}}], 1;
// CHECK: .visible .entry nll_g0(
// CHECK: st.global.b64 [%rd{{[0-9]+}}+16], 1;
