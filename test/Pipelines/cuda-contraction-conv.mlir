// A 2-D convolution (NCHW input, FCHW filter, stride 1) with a per-channel
// bias and relu through the CUDA pipelines. Generalized, the convolution
// reads its input through (n, f, h, w, c, kh, kw) -> (n, c, h + kh, w + kw):
// one thread per output point [1, 8, 8, 8] folds the 3 x 3 x 3 reduction
// space itself, and the affine expressions h + kh and w + kw become
// arith.addi on the delinearized indices. The PTX has one entry and no warp
// shuffles; test/Pipelines/cuda-contraction-ptxas.mlir assembles it.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=CODEGEN --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=ONCE --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX

// PLAN-LABEL: func.func @conv_bias_relu
// PLAN-COUNT-1: fusion.group "g0" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) {
// PLAN-NOT: fusion.group

// CODEGEN-LABEL: func.func @conv_bias_relu
// CODEGEN-COUNT-1: gpu.launch_func @kfuse_kernels::@conv_bias_relu_g0
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: gpu.func @conv_bias_relu_g0(%[[X:[^:]*]]: memref<2x3x10x10xf32>, %[[W:[^:]*]]: memref<8x3x3x3xf32>, %[[BIAS:[^:]*]]: memref<8xf32>, %[[OUT:[^:]*]]: memref<2x8x8x8xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CODEGEN-DAG: %[[C0:.*]] = arith.constant 0 : index
// CODEGEN-DAG: %[[C1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[C3:.*]] = arith.constant 3 : index
// CODEGEN-DAG: %[[C8:.*]] = arith.constant 8 : index
// CODEGEN-DAG: %[[C27:.*]] = arith.constant 27 : index
// CODEGEN-DAG: %[[C1024:.*]] = arith.constant 1024 : index
// CODEGEN-NOT: gpu.all_reduce
// CODEGEN: %[[P:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CODEGEN: %[[INSIDE:.*]] = arith.cmpi ult, %[[P]], %[[C1024]] : index
// CODEGEN: scf.if %[[INSIDE]] {
// CODEGEN: %[[OW:.*]] = arith.remui %[[P]], %[[C8]] : index
// CODEGEN: %[[P1:.*]] = arith.divui %[[P]], %[[C8]] : index
// CODEGEN: %[[OH:.*]] = arith.remui %[[P1]], %[[C8]] : index
// CODEGEN: %[[P2:.*]] = arith.divui %[[P1]], %[[C8]] : index
// CODEGEN: %[[F:.*]] = arith.remui %[[P2]], %[[C8]] : index
// CODEGEN: %[[N:.*]] = arith.divui %[[P2]], %[[C8]] : index
// CODEGEN: scf.for %[[R:.*]] = %[[C0]] to %[[C27]] step %[[C1]] iter_args(
// CODEGEN: %[[KW:.*]] = arith.remui %[[R]], %[[C3]] : index
// CODEGEN: %[[R1:.*]] = arith.divui %[[R]], %[[C3]] : index
// CODEGEN: %[[KH:.*]] = arith.remui %[[R1]], %[[C3]] : index
// CODEGEN: %[[C:.*]] = arith.divui %[[R1]], %[[C3]] : index
// CODEGEN: %[[IH:.*]] = arith.addi %[[OH]], %[[KH]] : index
// CODEGEN: %[[IW:.*]] = arith.addi %[[OW]], %[[KW]] : index
// CODEGEN: %[[XV:.*]] = memref.load %[[X]][%[[N]], %[[C]], %[[IH]], %[[IW]]] : memref<2x3x10x10xf32>
// CODEGEN: %[[WV:.*]] = memref.load %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : memref<8x3x3x3xf32>
// CODEGEN: arith.mulf %[[XV]], %[[WV]]
// CODEGEN: scf.yield
// CODEGEN: memref.load %[[BIAS]][%[[F]]] : memref<8xf32>
// CODEGEN: arith.maximumf
// CODEGEN: memref.store %{{.*}}, %[[OUT]][%[[N]], %[[F]], %[[OH]], %[[OW]]] : memref<2x8x8x8xf32>
// CODEGEN-NOT: memref.store
// CODEGEN: gpu.return

// One launch, one kernel, no cross-thread reduction, one store.
// ONCE-COUNT-1: gpu.launch_func
// ONCE-NOT: gpu.launch_func
// ONCE-COUNT-1: gpu.func
// ONCE-NOT: gpu.all_reduce
// ONCE-COUNT-1: memref.store
// ONCE-NOT: memref.store
// ONCE-NOT: gpu.func

// PTX-COUNT-1: .entry conv_bias_relu_g0(
// PTX-NOT: .entry
// PTX-NOT: shfl

func.func @conv_bias_relu(%x: tensor<2x3x10x10xf32> {kfuse.name = "x"}, %w: tensor<8x3x3x3xf32> {kfuse.name = "w"}, %bias: tensor<8xf32> {kfuse.name = "bias"}) -> (tensor<2x8x8x8xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<2x8x8x8xf32>, tensor<8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x8x8x8xf32>
  return %r : tensor<2x8x8x8xf32>
}
