// REQUIRES: ptxas
//
// row-persist: a row over a cluster whose blocks hold their shares in
// registers runs as a persistent kernel of that many clusters (here 15 of
// 8 blocks of 1024 threads, 120 blocks, for 256 rows of 262144 floats).
// Cluster cid takes rows cid, cid + 15, ...; each block's 128 KB share of
// x is copied into dynamic shared memory with cp.async.bulk, completing
// the staging mbarrier: the first row's before the loop, each next row's
// by thread 0 once every thread has taken the current one into registers
// (a barrier, and a proxy fence before the async copy overwrites what the
// threads read). The exchange's slots and mbarriers are twice over, by the
// parity of the block's row count k; the wait parities are registers (k
// and k / 2). x is never read with ld.global. The clusters are the grid's
// (%nclusterid.x), not a constant: the launch says it is persistent over at
// most 15 (kfuse.persistent), and the runtime may launch fewer, those the
// device holds at once. row-persist=-1: at most a cluster a row (256, the
// plan's grid), which the runtime cuts likewise.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=15})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file=%t.codegen.mlir
// RUN: fuse-opt %t.codegen.mlir --pass-pipeline='builtin.module(fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: FileCheck %s --check-prefix=GRID --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=-1})' | FileCheck %s --check-prefix=AUTO
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=15 row-cluster=0})' 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=-2})' 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// HOST-LABEL: func.func @softmax_256k
// HOST-NOT: kfuse.persistent
// HOST: gpu.launch_func @kfuse_kernels::@softmax_256k_g0 clusters in (%c8, %c1, %c1) blocks in (%c120, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c131072_i32 args({{.*}}) {kfuse.persistent = 15 : i64}

// AUTO: gpu.launch_func @kfuse_kernels::@softmax_256k_g0 clusters in (%c8, %c1, %c1) blocks in (%c2048, %c1, %c1) {{.*}} {kfuse.persistent = 256 : i64}

// GRID: %nclusterid.x
// PTX-LABEL: .entry softmax_256k_g0
// PTX: mbarrier.init.shared.b64 [__wg_softmax_256k_g0_1], %r{{[0-9]+}};
// PTX-NEXT: mbarrier.init.shared.b64 [__wg_softmax_256k_g0_1+8], %r{{[0-9]+}};
// PTX: barrier.cluster.wait
// PTX: fence.proxy.async.shared::cta;
// PTX: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [[[BAR:%rd[0-9]+]]], [[BYTES:%r[0-9]+]];
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], [[BYTES]], [[[BAR]]];
// PTX: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [[[BAR]]], %r{{[0-9]+}};
// PTX-COUNT-8: ld.shared.v4.b32
// PTX-NEXT: bar.sync 0;
// PTX: fence.proxy.async.shared::cta;
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX: st.async.shared::cluster.mbarrier::complete_tx::bytes.b32
// PTX: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%rd{{[0-9]+}}], %r{{[0-9]+}};
// PTX: st.global.v4.b32
// PTX-NOT: ld.global
// PTX: ret;
// REGS: Function properties for softmax_256k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// NOCLUSTER: row-persist must be 0, or -1 or > 0 with thread-block clusters (row-cluster above 1, sm_90 or later), got 15
// NEGATIVE: row-persist must be 0, or -1 or > 0 with thread-block clusters (row-cluster above 1, sm_90 or later), got -2

func.func @softmax_256k(%arg0: tensor<256x262144xf32> {kfuse.name = "x"}) -> (tensor<256x262144xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<256xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x262144xf32>) outs(%i2 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<256x262144xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<256x262144xf32>, tensor<256xf32>) outs(%e3 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  %e4 = tensor.empty() : tensor<256x262144xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<256x262144xf32>) outs(%e4 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<256xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<256xf32>) -> tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<256x262144xf32>) outs(%i5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x262144xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<256x262144xf32>, tensor<256xf32>) outs(%e6 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  return %t6 : tensor<256x262144xf32>
}

