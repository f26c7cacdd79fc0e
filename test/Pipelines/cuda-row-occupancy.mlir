// REQUIRES: ptxas
//
// row-occupancy: blocks of a block-per-row kernel an SM holds at once. A
// softmax over rows of 32768 floats takes by default a block of 1024
// threads a row, 8 vectors a thread in registers (one block an SM). With
// row-occupancy=2 it plans for two: blocks of 512 threads, each thread
// keeping 6 of its 16 vectors in registers and 10 in 80 KB of shared
// memory (half the budget a block), and .minnctapersm 2 (the host
// function's kfuse.min_blocks_per_sm, moved onto the kernel by
// fusion-cluster-dims and then removed) holds ptxas to 64 registers a
// thread (256 rows: with fewer rows than SMs a cluster of such blocks in
// registers would spread them wider). Registers only (row-smem=0): clusters of 4 such blocks, 4 vectors
// a thread. row-occupancy=4 without clusters or shared memory: blocks of
// 256 threads streaming the row (32 vectors a thread would not fit).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=ONE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-occupancy=2})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=TWO --input-file=%t.codegen.mlir
// RUN: fuse-opt %t.codegen.mlir --pass-pipeline='builtin.module(fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-occupancy=2 row-smem=0})' | FileCheck %s --check-prefix=NOSMEM
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-occupancy=4 row-smem=0 row-cluster=0})' | FileCheck %s --check-prefix=FOUR

// ONE-LABEL: func.func @softmax_32k
// ONE-NOT: kfuse.min_blocks_per_sm
// ONE: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c256, %c1, %c1) threads in (%c1024, %c1, %c1)
// ONE-NOT: dynamic_shared_memory_size
// ONE-LABEL: gpu.func @softmax_32k_g0
// ONE-NOT: nvvm.minctasm
// ONE-SAME: {

// TWO-LABEL: func.func @softmax_32k
// TWO-NOT: kfuse.min_blocks_per_sm
// TWO: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c256, %c1, %c1) threads in (%c512, %c1, %c1) dynamic_shared_memory_size %c81920_i32
// TWO-LABEL: gpu.func @softmax_32k_g0
// TWO-SAME: nvvm.minctasm = 2 : i32
// TWO: memref<10x512xvector<4xf32>, #gpu.address_space<workgroup>>

// PTX-LABEL: .entry softmax_32k_g0
// PTX: .maxntid 512, 1, 1
// PTX-NEXT: .minnctapersm 2
// PTX-COUNT-10: st.shared.v4.b32
// PTX: ret;
// REGS: Function properties for softmax_32k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// REGS-NEXT: Used {{[0-9]|[1-5][0-9]|6[0-4]}} registers

// NOSMEM: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 clusters in (%c4, %c1, %c1) blocks in (%c1024, %c1, %c1) threads in (%c512, %c1, %c1)
// NOSMEM-NOT: dynamic_shared_memory_size
// NOSMEM-LABEL: gpu.func @softmax_32k_g0
// NOSMEM-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// NOSMEM-SAME: nvvm.minctasm = 2 : i32

// FOUR: gpu.launch_func @kfuse_kernels::@softmax_32k_g0 blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1)
// FOUR-NOT: dynamic_shared_memory_size
// FOUR-LABEL: gpu.func @softmax_32k_g0
// FOUR-SAME: nvvm.minctasm = 4 : i32

func.func @softmax_32k(%arg0: tensor<256x32768xf32> {kfuse.name = "x"}) -> (tensor<256x32768xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<256xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x32768xf32>) outs(%i2 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<256x32768xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<256x32768xf32>, tensor<256xf32>) outs(%e3 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  %e4 = tensor.empty() : tensor<256x32768xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<256x32768xf32>) outs(%e4 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<256xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<256xf32>) -> tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<256x32768xf32>) outs(%i5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x32768xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<256x32768xf32>, tensor<256xf32>) outs(%e6 : tensor<256x32768xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x32768xf32>
  return %t6 : tensor<256x32768xf32>
}

