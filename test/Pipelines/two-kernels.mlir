// Two unrelated outputs become two groups (multi-tensor=0 and
// pack-launches=0: else they share
// one launch, see multi-tensor-launch.mlir), hence two kernels in the one
// gpu.module (one PTX image with two entries). The f16 kernel's 64 elements
// are 8 vectors of 8: only threads 0..7 of the block do work.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{multi-tensor=0},fusion-codegen-cuda{pack-launches=0})' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{multi-tensor=0},fusion-codegen-cuda{pack-launches=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// CODEGEN-LABEL: func.func @two
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<1024xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<64xf16> {kfuse.name = "y"}, %[[O0:[^:]*]]: memref<1024xf32> {kfuse.name = "out0"}, %[[O1:[^:]*]]: memref<64xf16> {kfuse.name = "out1"})
// CODEGEN: gpu.launch_func @kfuse_kernels::@two_g0 {{.*}} args(%[[X]] : memref<1024xf32>, %[[O0]] : memref<1024xf32>)
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@two_g1 {{.*}} args(%[[Y]] : memref<64xf16>, %[[O1]] : memref<64xf16>)
// CODEGEN-NEXT: return
// CODEGEN: gpu.module @kfuse_kernels {
// CODEGEN: gpu.func @two_g0(
// CODEGEN: math.exp %{{.*}} : vector<4xf32>
// CODEGEN: gpu.func @two_g1(
// CODEGEN: %[[C8:.*]] = arith.constant 8 : index
// CODEGEN: scf.for %{{.*}} = %{{.*}} to %[[C8]] step
// CODEGEN: vector.load %{{.*}} : memref<64xf16>, vector<8xf16>
// CODEGEN: arith.negf %{{.*}} : vector<8xf32>
// CODEGEN-NOT: gpu.func

// PTX: .visible .entry two_g0(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX: .visible .entry two_g1(
// PTX: setp.gt.u32 [[P:%p[0-9]+]], %r{{[0-9]+}}, 7;
// PTX-NEXT: @[[P]] bra
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

