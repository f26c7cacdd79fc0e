// A row reduction the CUDA code generator cannot emit yet: its body,
// acc = acc - x, has no associative combiner (add, mul, max, min, and, or,
// xor), which the row-per-block kernels need to combine per-thread
// partials. The planner groups it (its body is elementwise),
// fusion-codegen-cuda reports it naming the kernel, and nothing is
// printed. The CPU pipelines, which run the reduction sequentially, accept
// it.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu,fusion-target-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CPU

// PLAN-LABEL: func.func @row_difference
// PLAN: fusion.group "g0" "reduction" ins(%{{.*}} : tensor<64x1024xf32>) {
// PLAN: arith.subf
// PLAN: fusion.yield %{{.*}} : tensor<64xf32>

// CUDA: error: kfuse cannot generate code for 'linalg.generic' yet: the reduction body of kernel 'g0' is not `acc = acc op f(inputs)` with an associative op (add, mul, max, min, and, or, xor)
// CUDA-NOT: gpu.launch_func
// CUDA-NOT: func.func

// CPU: llvm.func @row_difference(
// CPU: llvm.fsub
// CPU: llvm.func @_mlir_ciface_row_difference(

func.func @row_difference(%x: tensor<64x1024xf32> {kfuse.name = "x"}) -> (tensor<64xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.subf %out, %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %d : tensor<64xf32>
}
