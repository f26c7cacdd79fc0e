// REQUIRES: ptxas
//
// The PTX that fusion-target-cuda emits for kernels with a thread per
// output point is accepted by ptxas, for the default chip and for sm_80 (no
// GPU needed): the matmul with its epilogue of cuda-contraction.mlir, the
// convolution of cuda-contraction-conv.mlir and the column mean of
// cuda-column-reduction.mlir (a reduction over the leading axis: a partials
// kernel with a thread per slice and column, no shuffles, then, with
// row-last-block=0, a finishing kernel; by default, for sm_80 here, the
// partials kernel's last block to count for a tile of columns finishes it).
//
// RUN: fuse-opt %S/cuda-contraction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.matmul.mlir
// RUN: %python %S/extract_ptx.py %t.matmul.mlir > %t.matmul.ptx
// RUN: %ptxas -arch=sm_90 %t.matmul.ptx -o %t.matmul.cubin
// RUN: FileCheck %s --check-prefix=MATMUL --input-file=%t.matmul.ptx
//
// RUN: fuse-opt %S/cuda-contraction-conv.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.conv.mlir
// RUN: %python %S/extract_ptx.py %t.conv.mlir > %t.conv.ptx
// RUN: %ptxas -arch=sm_90 %t.conv.ptx -o %t.conv.cubin
// RUN: FileCheck %s --check-prefix=CONV --input-file=%t.conv.ptx
//
// RUN: fuse-opt %S/cuda-column-reduction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0},fusion-target-cuda)' -o %t.column.mlir
// RUN: %python %S/extract_ptx.py %t.column.mlir > %t.column.ptx
// RUN: %ptxas -arch=sm_90 %t.column.ptx -o %t.column.cubin
// RUN: FileCheck %s --check-prefix=COLUMN --input-file=%t.column.ptx
//
// RUN: fuse-opt %S/cuda-column-reduction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.column80.mlir
// RUN: %python %S/extract_ptx.py %t.column80.mlir > %t.column80.ptx
// RUN: %ptxas -arch=sm_80 %t.column80.ptx -o %t.column80.cubin
// RUN: FileCheck %s --check-prefix=COLUMN80 --input-file=%t.column80.ptx
//
// RUN: fuse-opt %S/cuda-contraction.mlir --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: FileCheck %s --check-prefix=MATMUL --input-file=%t.sm80.ptx

// MATMUL: .visible .entry matmul_epilogue_g0(
// CONV: .visible .entry conv_bias_relu_g0(
// COLUMN: .visible .entry column_mean_g0_partial(
// COLUMN-NOT: shfl
// COLUMN: .visible .entry column_mean_g0(
// COLUMN-NOT: .entry
// COLUMN80: .visible .entry column_mean_g0(
// COLUMN80-NOT: shfl
// COLUMN80: atom.relaxed.gpu.global.inc.u32
// COLUMN80-NOT: .entry
