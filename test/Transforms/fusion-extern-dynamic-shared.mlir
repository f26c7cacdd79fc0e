// fusion-extern-dynamic-shared: the zero-sized shared array that
// convert-gpu-to-nvvm makes of gpu.dynamic_shared_memory gets external
// linkage, so that PTX declares it `.extern .shared ... []` (the launch's
// dynamic shared memory) instead of a one-byte static variable the dynamic
// memory would start after. Sized shared arrays and zero-sized arrays in
// other address spaces keep their linkage.
//
// RUN: fuse-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(gpu.module(fusion-extern-dynamic-shared))' | FileCheck %s
// RUN: fuse-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(fusion-target-cuda{chip=sm_90})' | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.module @globals
// CHECK: llvm.mlir.global external @dynamic() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @slots() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i8>
// CHECK: llvm.mlir.global internal @not_shared() {addr_space = 1 : i32} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @globals {
    llvm.mlir.global internal @dynamic() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @slots() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i8>
    llvm.mlir.global internal @not_shared() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  }
}

// -----

// A kernel reading its dynamic shared memory, through the CUDA target
// pipeline (which runs the pass after convert-gpu-to-nvvm).
// PTX: .extern .shared .align 16 .b8 __dynamic_shmem__0[]
// PTX-NOT: .shared .align 16 .b8 __dynamic_shmem__0[1]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      %view = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
      %v = memref.load %view[%t] : memref<8xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%t] : memref<8xf32>
      gpu.return
    }
  }
}
