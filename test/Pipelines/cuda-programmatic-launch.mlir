// A full reduction too long for one block (an L2 norm over 2^20 floats)
// is a partials kernel and, with row-last-block=0, a finishing kernel (by
// default the partials kernel's last block finishes: one kernel, see
// cuda-split-last-block.mlir). On sm_90 the finishing
// kernel is launched programmatically (fusion-programmatic-launch): it
// waits on the GPU for the partials (griddepcontrol.wait, its first
// instruction) instead of being launched once they have all ended, and the
// partials kernel lets it launch as its blocks start (launch_dependents).
// pdl=0 and sm_80 (no programmatic launches) launch both plainly.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file=%t.codegen.mlir
// RUN: fuse-opt %t.codegen.mlir --pass-pipeline='builtin.module(fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{pdl=0 row-last-block=0})' | FileCheck %s --check-prefix=OFF
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80 row-last-block=0})' | FileCheck %s --check-prefix=OFF

// HOST-LABEL: func.func @l2norm
// HOST: gpu.launch_func @kfuse_kernels::@l2norm_g0_partial blocks in
// HOST-NOT: kfuse.programmatic
// HOST-SAME: {{$}}
// HOST-NEXT: gpu.launch_func @kfuse_kernels::@l2norm_g0 blocks in {{.*}} {kfuse.programmatic}
// (only constants, which canonicalization hoists, come before the controls)
// HOST: gpu.func @l2norm_g0_partial
// HOST-NOT: {{thread_id|block_id|load|store|barrier|shuffle}}
// HOST: nvvm.griddepcontrol launch_dependents
// HOST-NOT: griddepcontrol
// HOST: gpu.func @l2norm_g0(
// HOST-NOT: {{thread_id|block_id|load|store|barrier|shuffle}}
// HOST: nvvm.griddepcontrol wait
// HOST-NOT: griddepcontrol

// PTX: .entry l2norm_g0_partial(
// PTX: griddepcontrol.launch_dependents;
// PTX-NOT: griddepcontrol
// PTX: .entry l2norm_g0(
// PTX: {
// PTX-NOT: {{ld.global|st.global|ld.shared|st.shared|bar|shfl|atom|red}}.
// PTX: griddepcontrol.wait;
// PTX-NOT: griddepcontrol

// OFF-LABEL: func.func @l2norm
// OFF-NOT: kfuse.programmatic
// OFF-NOT: griddepcontrol

module {
  func.func @l2norm(%x: tensor<1048576xf32> {kfuse.name = "x"}) -> (tensor<f32> {kfuse.name = "norm"}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<1048576xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %a = arith.addf %acc, %sq : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %e2 = tensor.empty() : tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%e2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %q = math.sqrt %in : f32
      linalg.yield %q : f32
    } -> tensor<f32>
    return %r : tensor<f32>
  }
}
