// fusion-target-cuda refuses a kernel that loads or stores a buffer of i1
// with an error naming the buffer (fusion-codegen-cuda's kernels move
// booleans as bytes: i8 buffers, trunci and extui around them), instead of
// stopping fuse-opt in the memref-to-LLVM lowering's assertion; the same
// kernel over bytes compiles (see target-bit-buffers.mlir for the CPU).
//
// RUN: fuse-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(fusion-target-cuda)'
// RUN: not fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-target-cuda)' 2>&1 | FileCheck %s

// CHECK: error: fusion-target-cuda: 'memref<4xi1>' has elements narrower than a byte
// CHECK: gpu.binary @k
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @bits(%out: memref<4xi1>) kernel {
      %c0 = arith.constant 0 : index
      %true = arith.constant true
      // expected-error @+1 {{fusion-target-cuda: 'memref<4xi1>' has elements narrower than a byte}}
      memref.store %true, %out[%c0] : memref<4xi1>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @bytes(%out: memref<4xi8>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i8
      memref.store %one, %out[%c0] : memref<4xi8>
      gpu.return
    }
  }
}
