// An f16 program with a broadcast and two outputs, compiled down to PTX.
//   h = x[64, 128] + bias[128]
//   y = gelu(h)
// One kernel computes both; f16 vectors of 8 make every access 16 bytes.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// One group; h is both an output and an intermediate, yielded once.
// PLAN-LABEL: func.func @bias_gelu
// PLAN: %[[G:.*]]:2 = fusion.group "g0" "elementwise" ins(%{{.*}}, %{{.*}} : tensor<64x128xf16>, tensor<128xf16>)
// PLAN-SAME: decisions = ["materializes result #0 of op 0 (16384 B): read by 'func.return'"]
// PLAN: math.erf
// PLAN: fusion.yield
// PLAN-NOT: fusion.group
// PLAN: return %[[G]]#0, %[[G]]#1

// CODEGEN-LABEL: func.func @bias_gelu
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<64x128xf16> {kfuse.name = "x"}, %[[B:[^:]*]]: memref<128xf16> {kfuse.name = "bias"}, %[[H:[^:]*]]: memref<64x128xf16> {kfuse.name = "h"}, %[[Y:[^:]*]]: memref<64x128xf16> {kfuse.name = "y"})
// CODEGEN: gpu.launch_func @kfuse_kernels::@bias_gelu_g0
// CODEGEN-SAME: args(%[[X]] : memref<64x128xf16>, %[[H]] : memref<64x128xf16>, %[[Y]] : memref<64x128xf16>, %[[B]] : memref<128xf16>)
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: gpu.func @bias_gelu_g0(%[[KX:[^:]*]]: memref<64x128xf16>, %[[KH:[^:]*]]: memref<64x128xf16>, %[[KY:[^:]*]]: memref<64x128xf16>, %[[KB:[^:]*]]: memref<128xf16>) kernel
// CODEGEN-DAG: %[[C128:.*]] = arith.constant 128 : index
// CODEGEN-DAG: %[[C8:.*]] = arith.constant 8 : index
// CODEGEN-DAG: %[[XF:.*]] = memref.collapse_shape %[[KX]] {{\[\[}}0, 1]] : memref<64x128xf16> into memref<8192xf16>
// CODEGEN-DAG: %[[HF:.*]] = memref.collapse_shape %[[KH]] {{\[\[}}0, 1]] : memref<64x128xf16> into memref<8192xf16>
// CODEGEN-DAG: %[[YF:.*]] = memref.collapse_shape %[[KY]] {{\[\[}}0, 1]] : memref<64x128xf16> into memref<8192xf16>
// CODEGEN: %[[LIN:.*]] = arith.muli %{{.*}}, %[[C8]] : index
// CODEGEN-NEXT: %[[COL:.*]] = arith.remui %[[LIN]], %[[C128]] : index
// CODEGEN: %[[XV:.*]] = vector.load %[[XF]][%[[LIN]]] {alignment = 16 : i64} : memref<8192xf16>, vector<8xf16>
// CODEGEN: %[[BV:.*]] = vector.load %[[KB]][%[[COL]]] {alignment = 16 : i64} : memref<128xf16>, vector<8xf16>
// CODEGEN: math.erf %{{.*}} : vector<8xf32>
// CODEGEN: vector.store %{{.*}}, %[[HF]][%[[LIN]]] {alignment = 16 : i64} : memref<8192xf16>, vector<8xf16>
// CODEGEN: vector.store %{{.*}}, %[[YF]][%[[LIN]]] {alignment = 16 : i64} : memref<8192xf16>, vector<8xf16>
// CODEGEN-NOT: gpu.func

// One kernel; x and the bias (parameter 3) are each read with one 16-byte
// load (8 halves as ld.global.v4.b32), h and y written with 16-byte stores.
// PTX: .visible .entry bias_gelu_g0(
// PTX-NOT: .entry
// PTX-DAG: ld.param.b64 [[XP:%rd[0-9]+]], [bias_gelu_g0_param_0];
// PTX-DAG: ld.param.b64 [[BP:%rd[0-9]+]], [bias_gelu_g0_param_3];
// PTX-DAG: cvta.to.global.u64 [[XG:%rd[0-9]+]], [[XP]];
// PTX-DAG: cvta.to.global.u64 [[BG:%rd[0-9]+]], [[BP]];
// PTX: add.s64 [[XA:%rd[0-9]+]], [[XG]], %rd{{[0-9]+}};
// PTX-NEXT: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {{\[}}[[XA]]{{\]}};
// PTX: add.s64 [[BA:%rd[0-9]+]], [[BG]], %rd{{[0-9]+}};
// PTX-NEXT: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {{\[}}[[BA]]{{\]}};
// PTX-NOT: ld.global
// PTX-COUNT-2: st.global.v4.b32
// PTX-NOT: st.global
// PTX-NOT: .entry

module {
  func.func @bias_gelu(%arg0: tensor<64x128xf16> {kfuse.name = "x"}, %arg1: tensor<128xf16> {kfuse.name = "bias"}) -> (tensor<64x128xf16> {kfuse.name = "h"}, tensor<64x128xf16> {kfuse.name = "y"}) {
    %e3 = tensor.empty() : tensor<64x128xf16>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<64x128xf16>, tensor<128xf16>) outs(%e3 : tensor<64x128xf16>) {
    ^bb0(%in0: f16, %in1: f16, %out: f16):
      %v0 = arith.extf %in0 : f16 to f32
      %v1 = arith.extf %in1 : f16 to f32
      %v2 = arith.addf %v0, %v1 : f32
      %v3 = arith.truncf %v2 : f32 to f16
      linalg.yield %v3 : f16
    } -> tensor<64x128xf16>
    %e4 = tensor.empty() : tensor<64x128xf16>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<64x128xf16>) outs(%e4 : tensor<64x128xf16>) {
    ^bb0(%in0: f16, %out: f16):
      %v0 = arith.extf %in0 : f16 to f32
      %v1 = arith.constant 0.7071067690849304 : f32
      %v2 = arith.mulf %v0, %v1 : f32
      %v3 = math.erf %v2 : f32
      %v4 = arith.constant 0.5 : f32
      %v5 = arith.mulf %v4, %v0 : f32
      %v6 = arith.constant 1.0 : f32
      %v7 = arith.addf %v6, %v3 : f32
      %v8 = arith.mulf %v5, %v7 : f32
      %v9 = arith.truncf %v8 : f32 to f16
      linalg.yield %v9 : f16
    } -> tensor<64x128xf16>
    return %t3, %t4 : tensor<64x128xf16>, tensor<64x128xf16>
  }
}

