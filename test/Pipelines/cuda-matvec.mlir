// REQUIRES: ptxas
//
// A matrix-vector product streams its matrix (each element read once) and
// broadcasts the vector along the rows: it runs as a row reduction, a block
// per row reading the row with 128-bit loads (the vector the same way, from
// cache) and combining with warp shuffles, not as a contraction's thread
// per output (which would read rows with a stride, and run 4 threads for
// @few_rows). Few long rows split into slices like any row reduction, the
// vector viewed in the same slices. A matmul streams neither input: still a
// contraction.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// PLAN-LABEL: func.func @gemv
// PLAN: fusion.group "g0" "reduction"
// PLAN-LABEL: func.func @few_rows
// PLAN: fusion.group "g0" "reduction"
// PLAN-LABEL: func.func @matmul
// PLAN: fusion.group "g0" "contraction"

// CHECK-LABEL: func.func @gemv(
// CHECK-SAME: %[[X:[^:]*]]: memref<8192x8192xf32>
// CHECK-SAME: %[[V:[^:]*]]: memref<8192xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@gemv_g0 blocks in (%c8192, %c1, %c1) threads in (%c128, %c1, %c1) args(%[[X]] : memref<8192x8192xf32>, %[[V]] : memref<8192xf32>
// CHECK-NEXT: return

// CHECK-LABEL: gpu.func @gemv_g0(
// CHECK: scf.for
// CHECK: vector.load %arg0[%block_id_x, %[[COL:.*]]] {{.*}} : memref<8192x8192xf32>, vector<4xf32>
// CHECK-NEXT: vector.load %arg1[%[[COL]]] {{.*}} : memref<8192xf32>, vector<4xf32>
// CHECK: gpu.shuffle xor

// CHECK-LABEL: func.func @few_rows(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x1048576xf32>
// CHECK-SAME: %[[V:[^:]*]]: memref<1048576xf32>
// CHECK-DAG: %[[XS:.*]] = memref.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [4, 256, 4096]
// CHECK-DAG: %[[VS:.*]] = memref.expand_shape %[[V]] {{\[\[}}0, 1]] output_shape [256, 4096]
// CHECK: gpu.launch_func @kfuse_kernels::@few_rows_g0 blocks in (%c1024, %c1, %c1) {{.*}}args(%[[XS]] : memref<4x256x4096xf32>, %[[VS]] : memref<256x4096xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @matmul(
// CHECK: gpu.launch_func @kfuse_kernels::@matmul_g0 blocks in (%c256, %c1, %c1) threads in (%c256, %c1, %c1)

// PTX-LABEL: .entry gemv_g0(
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly

func.func @gemv(%x: tensor<8192x8192xf32> {kfuse.name = "x"}, %v: tensor<8192xf32> {kfuse.name = "v"}) -> (tensor<8192xf32> {kfuse.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8192xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8192xf32>) -> tensor<8192xf32>
  %m = linalg.matvec ins(%x, %v : tensor<8192x8192xf32>, tensor<8192xf32>) outs(%f : tensor<8192xf32>) -> tensor<8192xf32>
  return %m : tensor<8192xf32>
}

func.func @few_rows(%x: tensor<4x1048576xf32> {kfuse.name = "x"}, %v: tensor<1048576xf32> {kfuse.name = "v"}) -> (tensor<4xf32> {kfuse.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.matvec ins(%x, %v : tensor<4x1048576xf32>, tensor<1048576xf32>) outs(%f : tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

func.func @matmul(%a: tensor<256x64xf32> {kfuse.name = "a"}, %b: tensor<64x256xf32> {kfuse.name = "b"}) -> (tensor<256x256xf32> {kfuse.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<256x64xf32>, tensor<64x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %m : tensor<256x256xf32>
}
