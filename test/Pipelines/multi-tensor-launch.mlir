// Two unrelated outputs over different spaces share one launch
// (multi-tensor fusion): the blocks of the f32 exp (1024 floats, 1 block of
// 256 threads x 4) come first, then those of the f16 negation (64 halves, 8
// vectors of 8: threads 0..7 of its one block do work); each block tests
// its index against the ranges and runs its own generic. The two-kernel
// form is in two-kernels.mlir (multi-tensor=0).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// CODEGEN-LABEL: func.func @two
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<1024xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<64xf16> {kfuse.name = "y"}, %[[O0:[^:]*]]: memref<1024xf32> {kfuse.name = "out0"}, %[[O1:[^:]*]]: memref<64xf16> {kfuse.name = "out1"})
// CODEGEN: %[[C2:.*]] = arith.constant 2 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@two_g0 blocks in (%[[C2]], %{{.*}}, %{{.*}}) {{.*}} args(%[[X]] : memref<1024xf32>, %[[O0]] : memref<1024xf32>, %[[Y]] : memref<64xf16>, %[[O1]] : memref<64xf16>)
// CODEGEN-NEXT: return
// CODEGEN: gpu.func @two_g0(
// CODEGEN: %[[B:.*]] = gpu.block_id x
// CODEGEN: %[[IN0:.*]] = arith.cmpi ult, %[[B]], %c1 : index
// CODEGEN-NEXT: scf.if %[[IN0]] {
// CODEGEN: math.exp %{{.*}} : vector<4xf32>
// CODEGEN: }
// CODEGEN: %[[END1:.*]] = arith.cmpi ult, %[[B]], %c2 : index
// CODEGEN-NEXT: %[[START1:.*]] = arith.cmpi uge, %[[B]], %c1 : index
// CODEGEN-NEXT: %[[IN1:.*]] = arith.andi %[[START1]], %[[END1]] : i1
// CODEGEN-NEXT: scf.if %[[IN1]] {
// CODEGEN-NEXT: %[[LOCAL:.*]] = arith.subi %[[B]], %c1 : index
// CODEGEN-NEXT: arith.muli %[[LOCAL]], %c256 : index
// CODEGEN: scf.for %{{.*}} = %{{.*}} to %c8 step
// CODEGEN: vector.load %{{.*}} : memref<64xf16>, vector<8xf16>
// CODEGEN: arith.negf %{{.*}} : vector<8xf32>
// CODEGEN-NOT: gpu.func

// PTX: .visible .entry two_g0(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-NOT: .entry
module {
  func.func @two(%arg0: tensor<1024xf32> {kfuse.name = "x"}, %arg1: tensor<64xf16> {kfuse.name = "y"}) -> (tensor<1024xf32> {kfuse.name = "out0"}, tensor<64xf16> {kfuse.name = "out1"}) {
    %e3 = tensor.empty() : tensor<1024xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.exp %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<1024xf32>
    %e4 = tensor.empty() : tensor<64xf16>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1 : tensor<64xf16>) outs(%e4 : tensor<64xf16>) {
    ^bb0(%in0: f16, %out: f16):
      %v0 = arith.extf %in0 : f16 to f32
      %v1 = arith.negf %v0 : f32
      %v2 = arith.truncf %v1 : f32 to f16
      linalg.yield %v2 : f16
    } -> tensor<64xf16>
    return %t3, %t4 : tensor<1024xf32>, tensor<64xf16>
  }
}

