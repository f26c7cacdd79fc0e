// REQUIRES: ptxas
//
// A layer norm over rows of 100000 f32 in clusters of 4 blocks (registers
// only, row-smem=0; row-chunks=8: 800 threads x 8 chunks of 4 floats). The
// variance sum((x - mean)^2) reads the mean, so each reduction would cross
// the cluster on its own: the sum's exchange, then the variance's. With
// fast numerics they take one: each block sums its share s_b, then
// (x - mu_b)^2 around its own mean mu_b = s_b * (1 / 25000) (no exchange
// between), and publishes both totals with one fence and one cluster
// barrier; every block then takes mean = sum s_b * (1 / 100000) and the
// row's centered sum
// M2 = sum v_b + 25000 (mu_b - mean)^2 (Chan et al.), plus
// 100000 (mean - q)^2 for the q the body subtracts (here the same mean).
// The mean's divide waits for the exchange. With row-joint=false, or strict
// numerics, two exchanges (two fences and two barriers before the exit's).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8})' | FileCheck %s --check-prefix=JOINT
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8 row-joint=false})' | FileCheck %s --check-prefix=SEPARATE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8 numerics=strict})' | FileCheck %s --check-prefix=SEPARATE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-chunks=8 row-exchange=async},fusion-target-cuda)' -o %t.async.mlir
// RUN: %python %S/extract_ptx.py %t.async.mlir > %t.async.ptx
// RUN: %ptxas -arch=sm_90 %t.async.ptx -o %t.async.cubin

// JOINT: gpu.launch_func @kfuse_kernels::@layernorm_g0 clusters in (%[[C4:.*]], %{{.*}}, %{{.*}})
// JOINT: gpu.func @layernorm_g0(
// JOINT-NOT: nvvm.cluster.wait
// The block's sum, then its mean, then the squares around it.
// JOINT: gpu.barrier
// JOINT-NOT: nvvm.cluster.wait
// JOINT: %[[MU:.*]] = arith.mulf %{{.*}}, %[[RNB:cst[_0-9]*]] : f32
// JOINT-NOT: nvvm.cluster.wait
// JOINT: %[[MUV:.*]] = vector.broadcast %[[MU]] : f32 to vector<4xf32>
// JOINT-NEXT: arith.subf %{{.*}}, %[[MUV]]
// JOINT-NOT: nvvm.cluster.wait
// JOINT: gpu.barrier
// JOINT-NOT: nvvm.cluster.wait
// JOINT: llvm.inline_asm has_side_effects "fence.acq_rel.cluster;"
// JOINT: nvvm.cluster.arrive.relaxed {aligned}
// JOINT-NEXT: nvvm.cluster.wait {aligned}
// JOINT-COUNT-8: nvvm.mapa
// JOINT: nvvm.cluster.arrive {aligned}
// The row's mean, then Chan's combination over the four blocks' mu_b, each
// (mu_b - mean)^2 times 25000.
// JOINT: arith.mulf %{{.*}}, %[[RN:cst[_0-9]*]] : f32
// JOINT-COUNT-4: arith.mulf %{{.*}}, %[[RNB]] : f32
// JOINT: arith.mulf %{{.*}}, %[[NB:cst[_0-9]*]] : f32
// JOINT-NOT: fence
// JOINT-NOT: nvvm.cluster.arrive
// JOINT: vector.store
// JOINT: nvvm.cluster.wait {aligned}
// JOINT-NOT: nvvm.cluster
// JOINT: gpu.return

// SEPARATE: gpu.func @layernorm_g0(
// SEPARATE-COUNT-2: fence.acq_rel.cluster
// SEPARATE-NOT: fence.acq_rel.cluster
// SEPARATE: gpu.return

func.func @layernorm(%arg0: tensor<160x100000xf32> {kfuse.name = "x"}) -> (tensor<160x100000xf32> {kfuse.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 100000.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e0 = tensor.empty() : tensor<160xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<160xf32>) -> tensor<160xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<160x100000xf32>) outs(%i0 : tensor<160xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<160xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<160xf32>) outs(%e0 : tensor<160xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<160xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<160xf32>) -> tensor<160xf32>
  %var = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0, %mean : tensor<160x100000xf32>, tensor<160xf32>) outs(%i1 : tensor<160xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %v = arith.addf %sq, %out : f32
    linalg.yield %v : f32
  } -> tensor<160xf32>
  %e1 = tensor.empty() : tensor<160x100000xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %mean, %var : tensor<160x100000xf32>, tensor<160xf32>, tensor<160xf32>) outs(%e1 : tensor<160x100000xf32>) {
  ^bb0(%in: f32, %m: f32, %vv: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %vn = arith.divf %vv, %n : f32
    %ve = arith.addf %vn, %eps : f32
    %r = math.rsqrt %ve : f32
    %v = arith.mulf %d, %r : f32
    linalg.yield %v : f32
  } -> tensor<160x100000xf32>
  return %y : tensor<160x100000xf32>
}
