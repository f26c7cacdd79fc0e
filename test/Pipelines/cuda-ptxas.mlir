// REQUIRES: ptxas
//
// The PTX that fusion-target-cuda emits for the three-op chain is accepted by
// ptxas, for the default chip and for sm_80 (no GPU needed).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir > %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: FileCheck %s --input-file=%t.sm80.ptx

// CHECK: .visible .entry f_g0(
// CHECK: ld.global.v4.b32

module {
  func.func @f(%arg0: tensor<4194304xf32> {kfuse.name = "x"}) -> (tensor<4194304xf32> {kfuse.name = "out0"}) {
    %e2 = tensor.empty() : tensor<4194304xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<4194304xf32>) outs(%e2 : tensor<4194304xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.exp %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<4194304xf32>
    %e3 = tensor.empty() : tensor<4194304xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<4194304xf32>) outs(%e3 : tensor<4194304xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 1.0 : f32
      %v1 = arith.addf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<4194304xf32>
    %e4 = tensor.empty() : tensor<4194304xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t3 : tensor<4194304xf32>) outs(%e4 : tensor<4194304xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.log %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<4194304xf32>
    return %t4 : tensor<4194304xf32>
  }
}

