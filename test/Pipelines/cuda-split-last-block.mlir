// REQUIRES: ptxas
//
// A row split into slices along its columns (one wave: the reductions'
// partials, then their finish) runs as one kernel: every block of the
// partials kernel stores its slice's partial, then its thread 0 fences at
// gpu scope and counts the block in its row's counter (atom.inc, wrapping at
// slices - 1, so the counter is zero again once the row's last block has
// counted); the block that counts last fences again, and runs the finishing
// kernel's code for its row with all its threads (the finishing kernel
// shaped to the partials kernel's block). The counters live in a buffer marked `kfuse.counter`
// (zero when the kernel starts and left zero: the runtime keeps one per
// device and stream). With `row-last-block=0` the finish is a kernel of its
// own (cuda-long-row-stages.mlir). A split with a third kernel storing a
// full-space result keeps it: x / |x| runs as the counting partials kernel,
// then the store. (The log-sum-exp's 3 rows of 100000 take 20 slices of
// 5000 each: the most slices dividing the row, about 8 blocks an SM, of
// 4096 columns at least.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0})' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0})' | FileCheck %s --check-prefix=KERN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0})' | FileCheck %s --check-prefix=TWO

// CHECK-LABEL: func.func @lse(
// CHECK-SAME: %[[X:[^:]*]]: memref<3x100000xf32>
// CHECK-SAME: %[[OUT:[^:]*]]: memref<3xf32>
// CHECK-DAG: %[[P1:.*]] = memref.alloc() : memref<3x20xf32>
// CHECK-DAG: %[[COUNT:.*]] = memref.alloc() {kfuse.counter} : memref<3xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@lse_g0 blocks in (%c60, %c1, %c1) threads in (%{{.*}}, %c1, %c1)
// CHECK-SAME: %[[COUNT]] : memref<3xi32>
// CHECK-SAME: %[[OUT]] : memref<3xf32>
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @normalize(
// CHECK: memref.alloc() {kfuse.counter} : memref<1xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@normalize_g0 blocks in (%c256, %c1, %c1)
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@normalize_g0_store blocks in (%c512, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT: gpu.launch_func

// The counting, then the finish under the last block's flag: the maxima
// combined, the sums rescaled, the log.
// KERN: gpu.func @lse_g0(
// KERN: gpu.barrier
// KERN: fence.acq_rel.gpu; atom.relaxed.gpu.global.inc.u32 c, [g]
// KERN: gpu.barrier
// KERN: %[[FLAG:.*]] = memref.load
// KERN: arith.cmpi ne, %[[FLAG]]
// KERN: scf.if
// KERN: arith.maximumf %{{.*}}, %shuffleResult
// KERN: math.exp
// KERN: math.log
// KERN: gpu.return

// PTX: .entry lse_g0(
// PTX: cvta.to.global.u64 g, %rd{{[0-9]+}}; fence.acq_rel.gpu; atom.relaxed.gpu.global.inc.u32 c, [g], %r{{[0-9]+}}; setp.eq.u32 p, c, %r{{[0-9]+}}; @p fence.acq_rel.gpu;
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX-NEXT: ld.shared.b32
// PTX: ex2.approx
// PTX-NOT: .entry lse_g0_partial

// TWO-LABEL: func.func @lse(
// TWO-NOT: kfuse.counter
// TWO: gpu.launch_func @kfuse_kernels::@lse_g0_partial blocks in (%c60, %c1, %c1)
// TWO: gpu.launch_func @kfuse_kernels::@lse_g0 blocks in (%c3, %c1, %c1)
// TWO-LABEL: func.func @normalize(
// TWO: gpu.launch_func @kfuse_kernels::@normalize_g0_partial
// TWO: gpu.launch_func @kfuse_kernels::@normalize_g0 blocks in (%c1, %c1, %c1)
// TWO: gpu.launch_func @kfuse_kernels::@normalize_g0_store

func.func @lse(%arg0: tensor<3x100000xf32> {kfuse.name = "x"}) -> (tensor<3xf32> {kfuse.name = "lse"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<3xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<3x100000xf32>) outs(%i2 : tensor<3xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<3xf32>
  %e3 = tensor.empty() : tensor<3x100000xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<3x100000xf32>, tensor<3xf32>) outs(%e3 : tensor<3x100000xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<3x100000xf32>
  %e4 = tensor.empty() : tensor<3x100000xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<3x100000xf32>) outs(%e4 : tensor<3x100000xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<3x100000xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<3xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<3xf32>) -> tensor<3xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<3x100000xf32>) outs(%i5 : tensor<3xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<3xf32>
  %e6 = tensor.empty() : tensor<3xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t5 : tensor<3xf32>) outs(%e6 : tensor<3xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.log %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<3xf32>
  %e8 = tensor.empty() : tensor<3xf32>
  %t8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t6, %t2 : tensor<3xf32>, tensor<3xf32>) outs(%e8 : tensor<3xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<3xf32>
  return %t8 : tensor<3xf32>
}

func.func @normalize(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<1048576xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    %v = arith.addf %p, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %ey = tensor.empty() : tensor<1048576xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %ss : tensor<1048576xf32>, tensor<f32>) outs(%ey : tensor<1048576xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %n = math.sqrt %s : f32
    %v = arith.divf %a, %n : f32
    linalg.yield %v : f32
  } -> tensor<1048576xf32>
  return %y : tensor<1048576xf32>
}
