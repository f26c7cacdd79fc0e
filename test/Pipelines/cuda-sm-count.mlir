// REQUIRES: ptxas
//
// The launch shapes of reduction kernels follow the target's SM count
// (fusion-codegen-cuda's chip and sm-count, passed on to
// fusion-generic-to-gpu): sm_90 has 132 SMs, sm_80 108, and sm-count
// overrides either.
//  - colsum_long, x[65536 x 512].sum(0): 512 columns are too few threads,
//    so the rows split into slices for about 1024 threads per SM: 256 slices
//    on 132 SMs (131072 threads), 128 on 108 (65536; 256 would exceed
//    110592), 32 on 16. The finishing kernel folds each column's partials
//    in tiles of 8 columns (a block each: 64 of them), its threads
//    splitting the slices (4 each); 32 slices or fewer take a thread per
//    column, in the partials kernel: the last of the blocks of a tile of
//    256 columns to count finishes them (16 SMs: 2 tiles, 2 counters).
//  - colsum_few, x[32 x 16384].sum(0): a thread per column where the
//    columns fill 128 threads on every SM (108 SMs: blocks of 128, 128
//    blocks; 16 SMs: the full 256, 64 blocks). 16384 columns do not fill 132
//    SMs that way: row tiles instead, each block 8 consecutive columns (one
//    32-byte sector per row of x) and 4 threads splitting their 32 rows
//    (2048 blocks of 32 threads).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=SM90
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: FileCheck %s --check-prefix=SM80 --input-file=%t.sm80.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=16})' | FileCheck %s --check-prefix=SM16
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin

// SM90-LABEL: func.func @colsum_long
// SM90: memref.alloc() : memref<256x512xf32>
// SM90: memref.expand_shape {{.*}} output_shape [256, 256, 512]
// SM90: gpu.launch_func @kfuse_kernels::@colsum_long_g0_partial blocks in (%c512, %c1, %c1) threads in (%c256, %c1, %c1)
// SM90-NEXT: gpu.launch_func @kfuse_kernels::@colsum_long_g0 blocks in (%c64, %c1, %c1) threads in (%c512, %c1, %c1)
// SM90-LABEL: func.func @colsum_few
// SM90: gpu.launch_func @kfuse_kernels::@colsum_few_g0 blocks in (%c2048, %c1, %c1) threads in (%c32, %c1, %c1)

// SM80-LABEL: func.func @colsum_long
// SM80: memref.alloc() : memref<128x512xf32>
// SM80: memref.expand_shape {{.*}} output_shape [128, 512, 512]
// SM80: gpu.launch_func @kfuse_kernels::@colsum_long_g0_partial blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1)
// SM80-NEXT: gpu.launch_func @kfuse_kernels::@colsum_long_g0 blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1)
// SM80-LABEL: func.func @colsum_few
// SM80: gpu.launch_func @kfuse_kernels::@colsum_few_g0 blocks in (%c128, %c1, %c1) threads in (%c128, %c1, %c1)

// SM16-LABEL: func.func @colsum_long
// SM16: memref.alloc() : memref<32x512xf32>
// SM16: memref.expand_shape {{.*}} output_shape [32, 2048, 512]
// SM16: memref.alloc() {kfuse.counter} : memref<2xi32>
// SM16-NEXT: gpu.launch_func @kfuse_kernels::@colsum_long_g0 blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1)
// SM16-NOT: gpu.launch_func @kfuse_kernels::@colsum_long
// SM16-LABEL: func.func @colsum_few
// SM16: gpu.launch_func @kfuse_kernels::@colsum_few_g0 blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1)

func.func @colsum_long(%x: tensor<65536x512xf32>) -> tensor<512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%x : tensor<65536x512xf32>) outs(%f : tensor<512xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

func.func @colsum_few(%x: tensor<32x16384xf32>) -> tensor<16384xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16384xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16384xf32>) -> tensor<16384xf32>
  %r = linalg.reduce ins(%x : tensor<32x16384xf32>) outs(%f : tensor<16384xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<16384xf32>
}
