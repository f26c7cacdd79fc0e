// REQUIRES: ptxas
//
// Packed rows: a block per row of 256 floats is one warp (32 threads x 2
// vectors), and a grid of 1101 one-warp blocks leaves an SM half its
// threads (32 blocks at most) and the GPU launching a block per row. Rows
// a warp covers share a block instead, a warp each (row-pack=0: up to 8,
// as long as the blocks still number twice the SMs: 1101 rows on 132 SMs
// take 4 a block, 276 blocks of 128 threads). Warp w of block b works on
// row 4 b + w; the reductions end at the warp's xor shuffles (no workgroup
// buffer, no barrier); 1101 rows are not a whole number of blocks, so the
// last block's fourth warp computes row 1100 again and stores nothing.
//  - row-pack=1: a block per row (1101 blocks of 32 threads);
//  - row-pack=32 with 4 SMs: 32 rows a block (35 blocks of 1024 threads);
//  - row-pack=3: an error naming the option.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90})' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90 row-pack=1})' | FileCheck %s --check-prefix=OFF
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90 row-pack=32 sm-count=4})' | FileCheck %s --check-prefix=MOST
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90 row-pack=3})' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_90},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// CHECK-LABEL: func.func @packed(
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C276:.*]] = arith.constant 276 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @kfuse_kernels::@packed_g0 blocks in (%[[C276]], %[[C1]], %[[C1]]) threads in (%[[C128]], %[[C1]], %[[C1]])
// CHECK: gpu.func @packed_g0(%[[X:[^:]*]]: memref<1101x256xf32>, %[[Y:[^:]*]]: memref<1101x256xf32>) kernel
// CHECK-NOT: workgroup
// CHECK-DAG: %[[N:.*]] = arith.constant 1101 : index
// CHECK-DAG: %[[LAST:.*]] = arith.constant 1100 : index
// CHECK-DAG: %[[K4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[K32:.*]] = arith.constant 32 : index
// CHECK: %[[B:.*]] = gpu.block_id x
// CHECK-NEXT: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[W:.*]] = arith.divui %[[T]], %[[K32]] : index
// CHECK-NEXT: %[[L:.*]] = arith.remui %[[T]], %[[K32]] : index
// CHECK-NEXT: %[[B4:.*]] = arith.muli %[[B]], %[[K4]] : index
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[B4]], %[[W]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[R]], %[[N]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.minui %[[R]], %[[LAST]] : index
// CHECK-NEXT: %[[COL:.*]] = arith.muli %[[L]], %[[K4]] : index
// CHECK: vector.load %[[X]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<1101x256xf32>, vector<4xf32>
// CHECK: gpu.shuffle xor {{.*}} : f32
// CHECK-NOT: gpu.barrier
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: vector.store {{.*}}, %[[Y]][%[[ROW]], %[[COL]]] {alignment = 16 : i64}
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// OFF: gpu.launch_func @kfuse_kernels::@packed_g0 blocks in (%c1101, %c1, %c1) threads in (%c32, %c1, %c1)
// MOST: gpu.launch_func @kfuse_kernels::@packed_g0 blocks in (%c35, %c1, %c1) threads in (%c1024, %c1, %c1)
// BAD: error: fusion-generic-to-gpu: row-pack must be 0 or a power of two up to 32, got 3

// PTX-LABEL: .entry packed_g0(
// PTX-NOT: bar.sync
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX-NOT: bar.sync
// PTX: st.global.v4.{{[bf]}}32
// PTX-NOT: bar.sync
// PTX: ret;

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @packed(%x: tensor<1101x256xf32>) -> tensor<1101x256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1101xf32>
  %e2 = tensor.empty() : tensor<1101x256xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<1101xf32>) -> tensor<1101xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1101x256xf32>) outs(%m0 : tensor<1101xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<1101xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1101xf32>) -> tensor<1101xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<1101x256xf32>, tensor<1101xf32>) outs(%s0 : tensor<1101xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<1101xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s : tensor<1101x256xf32>, tensor<1101xf32>, tensor<1101xf32>) outs(%e2 : tensor<1101x256xf32>) {
  ^bb0(%in: f32, %mx: f32, %sum: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %sum : f32
    linalg.yield %r : f32
  } -> tensor<1101x256xf32>
  return %y : tensor<1101x256xf32>
}
