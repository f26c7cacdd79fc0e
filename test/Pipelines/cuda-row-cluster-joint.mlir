// REQUIRES: ptxas
//
// (row-smem=0 throughout: rows in registers only; cuda-row-smem.mlir
// covers rows kept in shared memory too.)
//
// A softmax over rows of 100000 f32 spread over clusters of 4 blocks
// (row-chunks=8: 800 threads x 8 chunks of 4 floats each). With fast
// numerics its max m and its sum of exp(x - m) cross the cluster in one
// exchange: each block reduces its share's max m_b (no exchange), sums
// exp(x - m_b) against it, and only then publishes both totals, with one
// cluster-scope fence and one cluster barrier; every block reads the four
// (m_b, s_b) pairs in rank order and takes m = max m_b and
// s = sum s_b exp(m_b - m). The outputs take exp(x - m) against the row's
// max as the sum's exp(x - m_b) of each chunk times exp(m_b - m), one scale
// a block (the chunks stay in registers: no exp of a vector after the
// exchange). With row-joint=false, or strict numerics, each reduction has an
// exchange of its own (two fences, two barriers before the exit's). The
// async exchange sends both totals with st.async completing one mbarrier
// (4 blocks x 8 bytes expected) and waits once.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8})' | FileCheck %s --check-prefix=JOINT
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8 row-joint=false})' | FileCheck %s --check-prefix=SEPARATE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8 numerics=strict})' | FileCheck %s --check-prefix=SEPARATE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-chunks=8 row-exchange=async})' | FileCheck %s --check-prefix=ASYNC
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-chunks=8 row-exchange=async},fusion-target-cuda)' -o %t.async.mlir
// RUN: %python %S/extract_ptx.py %t.async.mlir > %t.async.ptx
// RUN: %ptxas -arch=sm_90 %t.async.ptx -o %t.async.cubin

// JOINT: gpu.launch_func @kfuse_kernels::@softmax_g0 clusters in (%[[C4:.*]], %{{.*}}, %{{.*}}) blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// JOINT: gpu.func @softmax_g0({{.*}}) workgroup(%[[S0:.*]] : memref<1xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[S1:.*]] : memref<1xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// JOINT-NOT: nvvm.cluster.wait
// JOINT: arith.maximumf
// JOINT: gpu.barrier
// JOINT-NOT: nvvm.cluster.wait
// JOINT: math.exp
// JOINT-NOT: nvvm.cluster.wait
// JOINT: gpu.barrier
// JOINT-NOT: nvvm.cluster.wait
// JOINT: memref.store %[[MB:.*]], %[[S0]][%c0]
// JOINT-NEXT: memref.store %[[SB:.*]], %[[S1]][%c0]
// JOINT-NEXT: llvm.inline_asm has_side_effects "fence.acq_rel.cluster;"
// JOINT-NEXT: }
// JOINT-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// JOINT-NEXT: nvvm.cluster.wait {aligned}
// JOINT-COUNT-8: nvvm.mapa
// JOINT: nvvm.cluster.arrive {aligned}
// The blocks' sums rescaled to the row's max: exp(m_b - m), four times.
// JOINT-COUNT-4: math.exp %{{.*}} : f32
// JOINT-NOT: fence
// JOINT-NOT: nvvm.cluster.arrive
// JOINT-NOT: math.exp %{{.*}} : vector<4xf32>
// JOINT: %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<4xf32>
// JOINT-NEXT: arith.divf %[[T]], %{{.*}} : vector<4xf32>
// JOINT-NOT: math.exp %{{.*}} : vector<4xf32>
// JOINT: vector.store
// JOINT: nvvm.cluster.wait {aligned}
// JOINT-NEXT: gpu.return

// SEPARATE: gpu.func @softmax_g0
// SEPARATE: arith.maximumf
// SEPARATE: "fence.acq_rel.cluster;"
// SEPARATE: nvvm.cluster.wait {aligned}
// SEPARATE-COUNT-4: nvvm.mapa
// SEPARATE: math.exp
// SEPARATE: "fence.acq_rel.cluster;"
// SEPARATE: nvvm.cluster.wait {aligned}
// SEPARATE-COUNT-4: nvvm.mapa
// SEPARATE: nvvm.cluster.arrive {aligned}
// SEPARATE-NOT: fence
// SEPARATE: gpu.return

// ASYNC: gpu.func @softmax_g0({{.*}}) workgroup(%[[A0:.*]] : memref<4xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[B0:.*]] : memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[A1:.*]] : memref<4xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1xi64, #gpu.address_space<workgroup>>
// ASYNC-DAG: %[[C32:.*]] = arith.constant 32 : i32
// ASYNC: nvvm.cluster.wait {aligned}
// ASYNC: "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [$0], $1;", "l,r" %{{.*}}, %[[C32]]
// ASYNC-COUNT-8: "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];"
// ASYNC: scf.while
// ASYNC: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
// ASYNC-NOT: mbarrier.try_wait
// ASYNC-COUNT-4: memref.load %[[A0]]
// ASYNC-NOT: st.async
// ASYNC-NOT: mbarrier.try_wait
// ASYNC: gpu.return

// PTX: .visible .entry softmax_g0(
// PTX: .reqnctapercluster 4, 1, 1
// PTX: fence.acq_rel.cluster;
// PTX-NOT: fence.acq_rel.cluster;
// PTX: ret;

func.func @softmax(%arg0: tensor<160x100000xf32> {kfuse.name = "x"}) -> (tensor<160x100000xf32> {kfuse.name = "y"}) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<160xf32>
  %i0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<160xf32>) -> tensor<160xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<160x100000xf32>) outs(%i0 : tensor<160xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<160xf32>
  %e1 = tensor.empty() : tensor<160x100000xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %m : tensor<160x100000xf32>, tensor<160xf32>) outs(%e1 : tensor<160x100000xf32>) {
  ^bb0(%in: f32, %mm: f32, %out: f32):
    %d = arith.subf %in, %mm : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<160x100000xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<160xf32>) -> tensor<160xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<160x100000xf32>) outs(%i1 : tensor<160xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<160xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ex, %s : tensor<160x100000xf32>, tensor<160xf32>) outs(%e1 : tensor<160x100000xf32>) {
  ^bb0(%in: f32, %ss: f32, %out: f32):
    %v = arith.divf %in, %ss : f32
    linalg.yield %v : f32
  } -> tensor<160x100000xf32>
  return %y : tensor<160x100000xf32>
}
