// Two sums of squares over rows of two inputs (2 MiB each: too large to
// pack): two groups, two launches, one code. fusion-dedup-kernels gives
// both launches the first kernel, the second keeping its own name
// (kfuse.generated_as), and the PTX holds one kernel. With dedup-kernels=0
// each launch has a kernel of its own.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{dedup-kernels=0})' \
// RUN:   | FileCheck %s --check-prefix=APART
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// CHECK-LABEL: func.func @two
// CHECK: gpu.launch_func @kfuse_kernels::@two_g0 {{.*}} args(%arg0 : memref<512x1024xf32>, %arg2 : memref<512xf32>)
// CHECK-NOT: kfuse.generated_as
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@two_g0 {{.*}} args(%arg1 : memref<512x1024xf32>, %arg3 : memref<512xf32>) {kfuse.generated_as = "two_g1", kfuse.programmatic}
// CHECK: gpu.func @two_g0(
// The second kernel waits for the first (a programmatic launch), the first
// triggers it: the one kernel does both.
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: gpu.func

// APART: gpu.launch_func @kfuse_kernels::@two_g0
// APART-NEXT: gpu.launch_func @kfuse_kernels::@two_g1
// APART-NOT: kfuse.generated_as
// APART: gpu.func @two_g0(
// APART: gpu.func @two_g1(

// PTX: .entry two_g0(
// PTX-NOT: .entry

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @two(%a: tensor<512x1024xf32>, %b: tensor<512x1024xf32>) -> (tensor<512xf32>, tensor<512xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %sa = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<512x1024xf32>) outs(%i : tensor<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  %sb = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<512x1024xf32>) outs(%i : tensor<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  return %sa, %sb : tensor<512xf32>, tensor<512xf32>
}
