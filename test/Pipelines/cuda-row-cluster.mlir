// REQUIRES: ptxas
//
// (row-smem=0 throughout: rows in registers only; cuda-row-smem.mlir
// covers rows kept in shared memory too.)
//
// Rows too long for one block's registers (160 x 100000 f32: 25 chunks of
// 4 floats per thread at 1024 threads) are spread over a thread-block
// cluster (sm_90; up to row-cluster blocks, 8 by default there): with
// row-chunks=8, 4 blocks of 800 threads, each holding 25000 columns (8
// chunks, the last one ragged) in registers. Each reduction's block total
// goes to a workgroup slot, the cluster barrier publishes it (the storing
// thread fences at cluster scope, every thread arrives relaxed, the wait
// acquires), and every block reads all four slots through distributed
// shared memory (mapa) in the same order. The kernel carries its cluster size (.reqnctapercluster),
// so a plain launch runs it in clusters. This log-sum-exp needs its row
// twice only with strict numerics (the sum waits for the max); with fast
// numerics one streaming pass folds both, so by default it streams (1024
// threads per block), reading the row once all the same.
// (With fewer rows than SMs even in clusters, the two reductions would be
// split into kernels over row slices instead: cuda-long-row-stages.mlir.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-cluster=8 row-chunks=8 numerics=strict})' | FileCheck %s --check-prefix=IR
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8 numerics=strict},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0})' | FileCheck %s --check-prefix=STREAM
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-cluster=0 numerics=strict})' | FileCheck %s --check-prefix=STREAM
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-cluster=8 row-chunks=8 numerics=strict row-exchange=async})' | FileCheck %s --check-prefix=ASYNC
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-chunks=8 numerics=strict row-exchange=async},fusion-target-cuda)' -o %t.async.mlir
// RUN: %python %S/extract_ptx.py %t.async.mlir > %t.async.ptx
// RUN: %ptxas -arch=sm_90 %t.async.ptx -o %t.async.cubin
// RUN: FileCheck %s --check-prefix=ASYNCPTX --input-file=%t.async.ptx
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-exchange=barrier row-cluster=3})' 2>&1 | FileCheck %s --check-prefix=BADSIZE
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-exchange=fast})' 2>&1 | FileCheck %s --check-prefix=BADEXCHANGE
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{chip=sm_80 row-cluster=8})' 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 chip=sm_80 numerics=strict})' | FileCheck %s --check-prefix=STREAM

// IR: gpu.launch_func @kfuse_kernels::@lse_g0 clusters in (%[[C4:.*]], %[[C1:.*]], %[[C1]]) blocks in (%[[C640:.*]], %[[C1]], %[[C1]]) threads in (%[[C800:.*]], %[[C1]], %[[C1]])
// IR: gpu.func @lse_g0({{.*}}) workgroup(%[[S0:.*]] : memref<1xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[S1:.*]] : memref<1xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<25xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<25xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {{{.*}}nvvm.cluster_dim = array<i32: 4, 1, 1>
// IR: %[[BID:.*]] = gpu.block_id x
// IR: %[[RANK:.*]] = arith.remui %[[BID]], %c4
// IR: %[[ROW:.*]] = arith.divui %[[BID]], %c4
// IR: arith.muli %[[RANK]], %c25000
// IR-COUNT-7: vector.load
// IR: gpu.barrier
// IR: gpu.shuffle xor %{{.*}}, %c16_i32
// IR-NEXT: arith.maximumf %{{.*}}, %shuffleResult
// IR: memref.store %{{.*}}, %[[S0]][%c0]
// IR-NEXT: llvm.inline_asm has_side_effects "fence.acq_rel.cluster;"
// IR-NEXT: }
// IR-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// IR-NEXT: nvvm.cluster.wait {aligned}
// IR-COUNT-4: nvvm.mapa
// IR: gpu.barrier
// IR: gpu.shuffle xor %{{.*}}, %c16_i32
// IR-NEXT: arith.addf %{{.*}}, %shuffleResult
// IR: memref.store %{{.*}}, %[[S1]][%c0]
// IR-NEXT: llvm.inline_asm has_side_effects "fence.acq_rel.cluster;"
// IR-NEXT: }
// IR-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// IR-NEXT: nvvm.cluster.wait {aligned}
// IR-COUNT-4: nvvm.mapa
// No block may exit while another reads its slots: each arrives once it has
// read the last of them, before its stores (whose completion the arrive's
// release would otherwise wait for), and waits just before it returns.
// IR: nvvm.cluster.arrive {aligned}
// IR-NOT: nvvm.cluster
// IR: math.log
// The row result is stored once per row, by thread 0 of the cluster's first block.
// IR: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0
// IR: %[[BOTH:.*]] = arith.andi %{{.*}}, %[[FIRST]] : i1
// IR: scf.if %[[BOTH]]
// IR-NEXT: memref.store
// IR-NOT: nvvm.cluster.arrive
// IR: nvvm.cluster.wait {aligned}
// IR-NEXT: gpu.return

// PTX: .visible .entry lse_g0(
// PTX: .explicitcluster
// PTX: .reqnctapercluster 4, 1, 1
// PTX: ld.global.v4
// PTX: fence.acq_rel.cluster;
// PTX: barrier.cluster.arrive.relaxed.aligned;
// PTX: barrier.cluster.wait.aligned;
// PTX: mapa.shared::cluster
// PTX: ld.shared::cluster

// With row-exchange=async each reduction has a slot per block and an
// mbarrier. Thread 0 initializes the mbarriers and fences, every thread
// arrives at the one cluster barrier, which the first exchange waits on
// (before any block may signal another's mbarrier). Per reduction, thread 0
// expects 4 x 4 bytes on its own mbarrier and sends its total into its slot
// (by rank) of every block with st.async; every thread waits for the phase
// and folds the four slots from its own shared memory. No fence, no barrier
// at the exit: a block leaves only after every block's totals reached it.
// ASYNC: gpu.func @lse_g0({{.*}}) workgroup(%[[SLOTS:.*]] : memref<4xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[BAR:.*]] : memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// ASYNC-COUNT-2: nvvm.mbarrier.init
// ASYNC: nvvm.fence.mbarrier.init
// ASYNC: nvvm.cluster.arrive.relaxed {aligned}
// ASYNC-NOT: nvvm.cluster
// ASYNC: gpu.barrier
// ASYNC: nvvm.cluster.wait {aligned}
// ASYNC: "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [$0], $1;"
// ASYNC-COUNT-4: "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];"
// ASYNC: scf.while
// ASYNC: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// ASYNC-COUNT-4: memref.load %[[SLOTS]]
// ASYNC: gpu.barrier
// ASYNC-COUNT-4: st.async.shared::cluster
// ASYNC-NOT: nvvm.cluster
// ASYNC-NOT: fence
// ASYNC: gpu.return

// ASYNCPTX: .version 8.1
// ASYNCPTX: .reqnctapercluster 4, 1, 1
// ASYNCPTX: .shared .align 16 .b8
// ASYNCPTX: mbarrier.init.shared.b64
// ASYNCPTX: fence.mbarrier_init.release.cluster;
// ASYNCPTX: barrier.cluster.arrive.relaxed.aligned;
// ASYNCPTX: barrier.cluster.wait.aligned;
// ASYNCPTX: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64
// ASYNCPTX: mapa.shared::cluster
// ASYNCPTX: st.async.shared::cluster.mbarrier::complete_tx::bytes.b32
// ASYNCPTX: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// ASYNCPTX-NOT: barrier.cluster
// ASYNCPTX-NOT: fence.acq_rel

// STREAM: gpu.launch_func @kfuse_kernels::@lse_g0 blocks in
// STREAM-NOT: clusters
// STREAM-NOT: nvvm.mapa
// STREAM: scf.for

// BADSIZE: row-cluster must be -1, 0, 2, 4, 8 or 16, got 3
// BADEXCHANGE: row-exchange must be barrier or async, got 'fast'
// BADCHIP: row-cluster needs thread-block clusters (sm_90 or later), chip is sm_80

func.func @lse(%arg0: tensor<160x100000xf32> {kfuse.name = "x"}) -> (tensor<160xf32> {kfuse.name = "lse"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<160xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<160xf32>) -> tensor<160xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<160x100000xf32>) outs(%i2 : tensor<160xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<160xf32>
  %e3 = tensor.empty() : tensor<160x100000xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<160x100000xf32>, tensor<160xf32>) outs(%e3 : tensor<160x100000xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<160x100000xf32>
  %e4 = tensor.empty() : tensor<160x100000xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<160x100000xf32>) outs(%e4 : tensor<160x100000xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<160x100000xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<160xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<160xf32>) -> tensor<160xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<160x100000xf32>) outs(%i5 : tensor<160xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<160xf32>
  %e6 = tensor.empty() : tensor<160xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t5 : tensor<160xf32>) outs(%e6 : tensor<160xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.log %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<160xf32>
  %e8 = tensor.empty() : tensor<160xf32>
  %t8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6, %t2 : tensor<160xf32>, tensor<160xf32>) outs(%e8 : tensor<160xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<160xf32>
  return %t8 : tensor<160xf32>
}
