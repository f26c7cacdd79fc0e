// Three parameters of one size, each scaled by the inverse of its own L2
// norm: three one-block row kernels of the same code but for their
// buffers, packed into one launch of three blocks that runs one copy of
// the code (fusion-pack-launches). Each block picks its kernel's buffers
// with one switch on its index (scf.index_switch: case 0, case 1, the last
// kernel's in the default), not with a chain of selects per buffer; in the
// PTX, a branch or two and a move per buffer, no pointer select.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// CODEGEN-LABEL: func.func @same
// CODEGEN: gpu.launch_func @kfuse_kernels::@same_g0 blocks in (%c3, %{{.*}}, %{{.*}}) threads in (%c256,
// CODEGEN-SAME: kfuse.packed = {{\[}}["same_g0", 1, 256], ["same_g1", 1, 256], ["same_g2", 1, 256]]
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: gpu.func @same_g0(
// CODEGEN: %[[B:.*]] = gpu.block_id x
// CODEGEN: %[[PICK:.*]]:2 = scf.index_switch %[[B]] -> memref<4096xf32>, memref<4096xf32>
// CODEGEN-NEXT: case 0 {
// CODEGEN-NEXT: scf.yield
// CODEGEN-NEXT: }
// CODEGEN-NEXT: case 1 {
// CODEGEN-NEXT: scf.yield
// CODEGEN-NEXT: }
// CODEGEN-NEXT: default {
// CODEGEN-NEXT: scf.yield
// CODEGEN-NEXT: }
// CODEGEN: vector.load %[[PICK]]#0
// CODEGEN: vector.store %{{.*}}, %[[PICK]]#1
// CODEGEN-NOT: gpu.func

// PTX: .entry same_g0(
// PTX-NOT: selp.b64
// PTX: mov.u32 %[[CTA:r[0-9]+]], %ctaid.x;
// PTX: setp.eq.b32 %{{p[0-9]+}}, %[[CTA]], 0;
// PTX: setp.eq.b32 %{{p[0-9]+}}, %[[CTA]], 1;
// PTX-NOT: selp.b64
// PTX: ld.global.v4

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @same(%w0: tensor<4096xf32>, %w1: tensor<4096xf32>, %w2: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) {
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
      ins(%w1 : tensor<4096xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %sq = arith.mulf %x, %x : f32
    %r = arith.addf %sq, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<4096xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel"]}
      ins(%w1, %n1 : tensor<4096xf32>, tensor<f32>) outs(%e1 : tensor<4096xf32>) {
  ^bb0(%x: f32, %n: f32, %o: f32):
    %inv = math.rsqrt %n : f32
    %r = arith.mulf %x, %inv : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%w2 : tensor<4096xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %sq = arith.mulf %x, %x : f32
    %r = arith.addf %sq, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<4096xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel"]}
      ins(%w2, %n2 : tensor<4096xf32>, tensor<f32>) outs(%e2 : tensor<4096xf32>) {
  ^bb0(%x: f32, %n: f32, %o: f32):
    %inv = math.rsqrt %n : f32
    %r = arith.mulf %x, %inv : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  return %y0, %y1, %y2 : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}
