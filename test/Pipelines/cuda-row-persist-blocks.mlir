// REQUIRES: ptxas
//
// row-persist over rows that one block holds in registers (2048 rows of
// 32768 floats, a block of 1024 threads a row, 8 vectors a thread): a
// persistent kernel of at most 132 blocks, no clusters. Block b of the n
// launched (%nclusterid.x: the grid's blocks where a launch has no
// clusters) takes rows b, b + n, ...; its 128 KB row of x is copied into
// dynamic shared memory with cp.async.bulk, completing the staging
// mbarrier that thread 0 initialized (a fence, then a block barrier),
// the first row's before the loop and each next row's once every thread
// has taken the current one into registers. x is never read with
// ld.global. The launch says it is persistent over at most 132 blocks;
// row-persist=-1: up to a block a row (2048).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=132})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file=%t.codegen.mlir
// RUN: fuse-opt %t.codegen.mlir --pass-pipeline='builtin.module(fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: FileCheck %s --check-prefix=GRID --input-file=%t.ptx
// RUN: FileCheck %s --check-prefix=STORE --input-file=%t.ptx
// RUN: FileCheck %s --check-prefix=NOLOAD --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-persist=-1})' | FileCheck %s --check-prefix=AUTO
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=DEFAULT

// HOST-LABEL: func.func @softmax_32k
// HOST-NOT: kfuse.persistent
// HOST: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c132, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c131072_i32 args({{.*}}) {kfuse.persistent = 132 : i64}

// AUTO: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c2048, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c131072_i32 args({{.*}}) {kfuse.persistent = 2048 : i64}

// DEFAULT: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c2048, %c1, %c1) threads in (%c1024, %c1, %c1) args(
// DEFAULT-NOT: kfuse.persistent

// GRID: %nclusterid.x
// PTX-LABEL: .entry softmax_32k_g0
// PTX-NOT: .reqnctapercluster
// PTX: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: bar.sync 0;
// PTX: fence.proxy.async.shared::cta;
// PTX: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [[[BAR:%rd[0-9]+]]], [[BYTES:%r[0-9]+]];
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], [[BYTES]], [[[BAR]]];
// PTX: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [[[BAR]]], %r{{[0-9]+}};
// PTX-COUNT-8: ld.shared.v4.b32
// PTX-NEXT: bar.sync 0;
// PTX: fence.proxy.async.shared::cta;
// PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX: ret;
// STORE: st.global.v4.b32
// NOLOAD-NOT: ld.global
// REGS: Function properties for softmax_32k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @softmax_32k(%arg0: tensor<2048x32768xf32> {kfuse.name = "x"}) -> (tensor<2048x32768xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<2048xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<2048xf32>) -> tensor<2048xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2048x32768xf32>) outs(%i2 : tensor<2048xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<2048xf32>
  %e3 = tensor.empty() : tensor<2048x32768xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<2048x32768xf32>, tensor<2048xf32>) outs(%e3 : tensor<2048x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<2048x32768xf32>
  %e4 = tensor.empty() : tensor<2048x32768xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<2048x32768xf32>) outs(%e4 : tensor<2048x32768xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<2048x32768xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<2048xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<2048xf32>) -> tensor<2048xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<2048x32768xf32>) outs(%i5 : tensor<2048xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<2048xf32>
  %e6 = tensor.empty() : tensor<2048x32768xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<2048x32768xf32>, tensor<2048xf32>) outs(%e6 : tensor<2048x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<2048x32768xf32>
  return %t6 : tensor<2048x32768xf32>
}

