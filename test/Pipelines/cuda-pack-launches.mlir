// Two parameters, each scaled by the inverse of its own L2 norm (an
// optimizer's trust ratio): a row kernel of one block each (4096 floats,
// 256 threads; 4160 floats, 288), independent and small, so they share
// one launch (fusion-pack-launches): 2 blocks of 288 threads, block 0
// running the first kernel with its extra 32 threads exited first, block 1
// the second. With pack-launches=0 (or multi_tensor=False in Python) each
// has its own launch.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{pack-launches=0})' \
// RUN:   | FileCheck %s --check-prefix=APART
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{pack-bytes=16384})' \
// RUN:   | FileCheck %s --check-prefix=APART
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{pack-bytes=-1})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// (fusion-cluster-dims moves the host function's kfuse.packed entry to
// the packed launch)
// CODEGEN-LABEL: func.func @trust
// CODEGEN-NOT: kfuse.packed
// CODEGEN: %[[C2:.*]] = arith.constant 2 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@trust_g0 blocks in (%[[C2]], %{{.*}}, %{{.*}}) threads in (%c288, %{{.*}}, %{{.*}})
// CODEGEN-SAME: {kfuse.packed = {{\[}}["trust_g0", 1, 256], ["trust_g1", 1, 288]]}
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: return
// CODEGEN: gpu.func @trust_g0(
// CODEGEN-NOT: gpu.func

// APART-LABEL: func.func @trust
// APART-NOT: kfuse.packed
// APART: gpu.launch_func @kfuse_kernels::@trust_g0 {{.*}} threads in (%c256,
// APART: gpu.launch_func @kfuse_kernels::@trust_g1 {{.*}} threads in (%c288,

// (pack-bytes=16384: each kernel's buffers, 32 KB, too many to pack)
// BAD: fusion-codegen-cuda: pack-bytes must be >= 0, got -1

// PTX: .visible .entry trust_g0(
// PTX: .maxntid 288, 1, 1
// PTX: shfl.sync.bfly
// PTX: bar.sync 0;
// (the first kernel's 32 extra threads)
// PTX: setp.lt.u32 %p{{[0-9]+}}, %r{{[0-9]+}}, 256;
// PTX: exit;
// PTX-NOT: .entry

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @trust(%w0: tensor<4096xf32>, %w1: tensor<4160xf32>) -> (tensor<4096xf32>, tensor<4160xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %n0 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%w0 : tensor<4096xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %sq = arith.mulf %x, %x : f32
    %r = arith.addf %sq, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e0 = tensor.empty() : tensor<4096xf32>
  %y0 = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel"]}
      ins(%w0, %n0 : tensor<4096xf32>, tensor<f32>) outs(%e0 : tensor<4096xf32>) {
  ^bb0(%x: f32, %n: f32, %o: f32):
    %inv = math.rsqrt %n : f32
    %r = arith.mulf %x, %inv : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%w1 : tensor<4160xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %sq = arith.mulf %x, %x : f32
    %r = arith.addf %sq, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<4160xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel"]}
      ins(%w1, %n1 : tensor<4160xf32>, tensor<f32>) outs(%e1 : tensor<4160xf32>) {
  ^bb0(%x: f32, %n: f32, %o: f32):
    %inv = math.rsqrt %n : f32
    %r = arith.mulf %x, %inv : f32
    linalg.yield %r : f32
  } -> tensor<4160xf32>
  return %y0, %y1 : tensor<4096xf32>, tensor<4160xf32>
}
