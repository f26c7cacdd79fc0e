// Boolean (i1) inputs and outputs, which the builder produces for masks and
// comparisons, must compile on both targets. fusion-widen-bool-tensors passes
// them as bytes (i8) across the function boundary, so the kernel still
// vectorizes: 4 lanes, as f32 is the widest element type.
//
// (The targets used to hit an assertion in the memref-to-LLVM lowering,
// "integralElementType.getWidth() >= 8", on memref<256xi1> loads and stores.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu,fusion-target-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CPU

// CODEGEN: func.func @masked(%{{.*}}: memref<256xi8> {kfuse.name = "m"}, %{{.*}}: memref<256xf32> {kfuse.name = "x"}, %{{.*}}: memref<256xf32> {kfuse.name = "y"}, %{{.*}}: memref<256xi8> {kfuse.name = "big"})
// CODEGEN: gpu.launch_func @kfuse_kernels::@masked_g0
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: gpu.func @masked_g0
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>
// CODEGEN: vector.load {{.*}} : memref<256xi8>, vector<4xi8>
// CODEGEN: arith.trunci {{.*}} : vector<4xi8> to vector<4xi1>
// CODEGEN: arith.select {{.*}} : vector<4xi1>, vector<4xf32>
// CODEGEN: arith.cmpf ogt
// CODEGEN: arith.extui {{.*}} : vector<4xi1> to vector<4xi8>
// CODEGEN: gpu.return

// PTX: .visible .entry masked_g0(
// PTX-NOT: .entry

// CPU: llvm.func @_mlir_ciface_masked(%{{.*}}: !llvm.ptr)
// CPU: llvm.select
// CPU: llvm.fcmp "ogt"
// CPU-NOT: llvm.call @masked

module {
  func.func @masked(%arg0: tensor<256xi1> {kfuse.name = "m"}, %arg1: tensor<256xf32> {kfuse.name = "x"}) -> (tensor<256xf32> {kfuse.name = "y"}, tensor<256xi1> {kfuse.name = "big"}) {
    %e3 = tensor.empty() : tensor<256xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg1 : tensor<256xf32>) outs(%e3 : tensor<256xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.negf %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e4 = tensor.empty() : tensor<256xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0, %arg1, %t3 : tensor<256xi1>, tensor<256xf32>, tensor<256xf32>) outs(%e4 : tensor<256xf32>) {
    ^bb0(%in0: i1, %in1: f32, %in2: f32, %out: f32):
      %v0 = arith.select %in0, %in1, %in2 : f32
      linalg.yield %v0 : f32
    } -> tensor<256xf32>
    %e5 = tensor.empty() : tensor<256xi1>
    %t5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t4 : tensor<256xf32>) outs(%e5 : tensor<256xi1>) {
    ^bb0(%in0: f32, %out: i1):
      %v0 = arith.constant 1.0 : f32
      %v1 = arith.cmpf ogt, %in0, %v0 : f32
      linalg.yield %v1 : i1
    } -> tensor<256xi1>
    return %t4, %t5 : tensor<256xf32>, tensor<256xi1>
  }
}

