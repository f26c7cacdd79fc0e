// fusion-align-workgroup: every workgroup attribution of a gpu.func without
// an alignment gets llvm.align = 16; one that has its own keeps it. Through
// the CUDA target, the slots the load-store vectorizer reads as one
// ld.shared.v4 are declared 16-byte aligned (without the pass: `.align 4`,
// the element's, under a 16-byte vector load).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(gpu.module(fusion-align-workgroup))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(gpu.module(fusion-align-workgroup),fusion-target-cuda{chip=sm_90})' \
// RUN:   | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
// CHECK-SAME: %{{.*}} : memref<2xf64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64})
// CHECK-LABEL: gpu.func @none(
// CHECK-NOT: llvm.align

// PTX: .shared .align 16 .b8 __wg_k_0[32]
// PTX: ld.shared.v4.b32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%in: memref<8xf32>, %out: memref<8xf32>) workgroup(%slots : memref<8xf32, #gpu.address_space<workgroup>>, %keep : memref<2xf64, #gpu.address_space<workgroup>> {llvm.align = 8 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %t = gpu.thread_id x
      %x = memref.load %in[%t] : memref<8xf32>
      memref.store %x, %slots[%t] : memref<8xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %a = memref.load %slots[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
      %b = memref.load %slots[%c1] : memref<8xf32, #gpu.address_space<workgroup>>
      %c = memref.load %slots[%c2] : memref<8xf32, #gpu.address_space<workgroup>>
      %d = memref.load %slots[%c3] : memref<8xf32, #gpu.address_space<workgroup>>
      %ab = arith.addf %a, %b : f32
      %cd = arith.addf %c, %d : f32
      %s = arith.addf %ab, %cd : f32
      memref.store %s, %out[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @none(%out: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
