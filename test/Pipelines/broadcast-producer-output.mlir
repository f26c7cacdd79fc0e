// A producer over a smaller iteration space that is both a program output
// and read, broadcast, by a larger consumer:
//   e = exp(b[128])            (output 0)
//   z = x[64, 128] + e         (output 1, e broadcast along rows)
// Elementwise fusion can merge e into z (recomputing exp per row), but e must
// also be written, and a kernel runs over one iteration space. The program
// must still compile: with every group a single kernel over one space, and
// both outputs produced. (fusion-plan used to put both ops into one group,
// which fusion-fuse-group-bodies then rejected with "group 'g0' still has 2
// linalg.generic ops after fusion (expected 1)".)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU

// CUDA-NOT: error
// CUDA-LABEL: func.func @bb
// CUDA-SAME: (%[[X:[^:]*]]: memref<64x128xf32> {kfuse.name = "x"}, %[[B:[^:]*]]: memref<128xf32> {kfuse.name = "b"}, %[[E:[^:]*]]: memref<128xf32> {kfuse.name = "out0"}, %[[Z:[^:]*]]: memref<64x128xf32> {kfuse.name = "out1"})
// CUDA-DAG: gpu.launch_func {{.*}}args({{.*}}%[[E]] : memref<128xf32>
// CUDA-DAG: gpu.launch_func {{.*}}args({{.*}}%[[Z]] : memref<64x128xf32>
// CUDA: return
// CUDA: gpu.module @kfuse_kernels
// CUDA: math.exp
// CUDA-NOT: error

// CPU-NOT: error
// CPU-LABEL: func.func @bb
// CPU: math.exp
// CPU: return
// CPU-NOT: error

module {
  func.func @bb(%arg0: tensor<64x128xf32> {kfuse.name = "x"}, %arg1: tensor<128xf32> {kfuse.name = "b"}) -> (tensor<128xf32> {kfuse.name = "out0"}, tensor<64x128xf32> {kfuse.name = "out1"}) {
    %e3 = tensor.empty() : tensor<128xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1 : tensor<128xf32>) outs(%e3 : tensor<128xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.exp %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<128xf32>
    %e4 = tensor.empty() : tensor<64x128xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t3 : tensor<64x128xf32>, tensor<128xf32>) outs(%e4 : tensor<64x128xf32>) {
    ^bb0(%in0: f32, %in1: f32, %out: f32):
      %v0 = arith.addf %in0, %in1 : f32
      linalg.yield %v0 : f32
    } -> tensor<64x128xf32>
    return %t3, %t4 : tensor<128xf32>, tensor<64x128xf32>
  }
}

