// REQUIRES: ptxas
//
// row-prefetch: a row kernel that holds its rows on chip asks L2 for its
// share of the row that many rows on, once its own share is in registers
// (at its first block combine): one cp.async.bulk.prefetch.L2.global by
// thread 0, of the row's 131072 bytes here (a block of 1024 threads a row),
// at the input's address of row + 132, and only where that row exists (the
// last 132 rows ask for nothing). Off by default; sm_90 and later only.
// A row kernel reading four inputs asks for the share of each (the records
// of the inputs kept by index: a fourth used to move the others, and the
// kernel crashed the compiler).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.none.mlir
// RUN: %python %S/extract_ptx.py %t.none.mlir | FileCheck %s --check-prefix=NONE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-prefetch=132},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80 row-prefetch=4})' 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-prefetch=-1})' 2>&1 | FileCheck %s --check-prefix=NEG

// NONE-LABEL: .entry softmax_32k_g0
// NONE-NOT: prefetch

// PTX-LABEL: .entry softmax_32k_g0
// PTX-COUNT-8: ld.global.v4.b32
// PTX: setp.gt.u32 %p{{[0-9]+}}, %r{{[0-9]+}}, 123;
// PTX: add.s64 [[AT:%rd[0-9]+]], %rd{{[0-9]+}}, 17301504;
// PTX: mov.b32 [[SIZE:%r[0-9]+]], 131072;
// PTX: cp.async.bulk.prefetch.L2.global [[[AT]]], [[SIZE]];
// PTX-NOT: prefetch
// PTX: ret;
// PTX-LABEL: .entry four_inputs_g0
// PTX: mov.b32 [[SHARE:%r[0-9]+]], 16384;
// PTX-COUNT-4: cp.async.bulk.prefetch.L2.global [%rd{{[0-9]+}}], [[SHARE]];
// PTX-NOT: prefetch
// PTX: ret;
// REGS: Function properties for softmax_32k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// OLD: row-prefetch must be 0, or > 0 on sm_90 or later (cp.async.bulk.prefetch), got 4 on sm_80
// NEG: row-prefetch must be 0, or > 0 on sm_90 or later (cp.async.bulk.prefetch), got -1 on sm_90

func.func @softmax_32k(%arg0: tensor<256x32768xf32> {kfuse.name = "x"}) -> (tensor<256x32768xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<256xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x32768xf32>) outs(%i2 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<256x32768xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<256x32768xf32>, tensor<256xf32>) outs(%e3 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  %e4 = tensor.empty() : tensor<256x32768xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<256x32768xf32>) outs(%e4 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<256xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<256xf32>) -> tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<256x32768xf32>) outs(%i5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x32768xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<256x32768xf32>, tensor<256xf32>) outs(%e6 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  return %t6 : tensor<256x32768xf32>
}

func.func @four_inputs(%arg0: tensor<256x4096xf32> {kfuse.name = "a"}, %arg1: tensor<256x4096xf32> {kfuse.name = "b"}, %arg2: tensor<256x4096xf32> {kfuse.name = "c"}, %arg3: tensor<256x4096xf32> {kfuse.name = "d"}) -> (tensor<256x4096xf32> {kfuse.name = "y"}) {
  %e5 = tensor.empty() : tensor<256x4096xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<256x4096xf32>, tensor<256x4096xf32>) outs(%e5 : tensor<256x4096xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x4096xf32>
  %e6 = tensor.empty() : tensor<256x4096xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t5, %arg2 : tensor<256x4096xf32>, tensor<256x4096xf32>) outs(%e6 : tensor<256x4096xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x4096xf32>
  %e7 = tensor.empty() : tensor<256x4096xf32>
  %t7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6, %arg3 : tensor<256x4096xf32>, tensor<256x4096xf32>) outs(%e7 : tensor<256x4096xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x4096xf32>
  %c8 = arith.constant 0xFF800000 : f32
  %e8 = tensor.empty() : tensor<256xf32>
  %i8 = linalg.fill ins(%c8 : f32) outs(%e8 : tensor<256xf32>) -> tensor<256xf32>
  %t8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t7 : tensor<256x4096xf32>) outs(%i8 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e9 = tensor.empty() : tensor<256x4096xf32>
  %t9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t7, %t8 : tensor<256x4096xf32>, tensor<256xf32>) outs(%e9 : tensor<256x4096xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x4096xf32>
  return %t9 : tensor<256x4096xf32>
}
