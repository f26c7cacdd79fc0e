// REQUIRES: ptxas
//
// A full reduction of what a row kernel stores (the mean of per-row
// losses: a group of its own, over the rows' results) runs in the row
// kernel's last block to end: every block stores its rows' terms, counts
// itself on one atomic counter (atom.inc, wrapping at the block count, so
// it is zero again afterwards), and the block that counts last runs the
// mean's code with the row kernel's threads (the mean is shaped to them).
// One launch instead of two. With `row-last-block=0`, or where the second
// group is no full reduction (a sum over the rows per column), the second
// group is a launch of its own.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-last-block=0})' | FileCheck %s --check-prefix=TWO

// CHECK-LABEL: func.func @mean_lse(
// CHECK-SAME: %[[X:[^:]*]]: memref<512x1000xf32>
// CHECK-SAME: %[[OUT:[^:]*]]: memref<f32>
// CHECK-DAG: %[[TERMS:.*]] = memref.alloc() {{.*}}: memref<512xf32>
// CHECK-DAG: %[[COUNT:.*]] = memref.alloc() {kfuse.counter} : memref<1xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@mean_lse_g0 blocks in (%[[B:.*]], %c1, %c1) threads in (%[[T:.*]], %c1, %c1)
// CHECK-SAME: %[[TERMS]] : memref<512xf32>
// CHECK-SAME: %[[COUNT]] : memref<1xi32>
// CHECK-SAME: %[[OUT]] : memref<f32>
// CHECK-NOT: gpu.launch_func
// CHECK: return
// (the row kernel's blocks: the terms stored, the count, then the mean
// under the last block's flag, by all the block's threads)
// CHECK: gpu.func @mean_lse_g0(
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<512xf32>
// CHECK: gpu.barrier
// CHECK: fence.acq_rel.gpu; atom.relaxed.gpu.global.inc.u32 c, [g]
// CHECK: gpu.barrier
// CHECK: %[[FLAG:.*]] = memref.load
// CHECK: %[[LAST:.*]] = arith.cmpi ne, %[[FLAG]]
// CHECK: scf.if %[[LAST]] {
// CHECK: vector.load %{{.*}} : memref<512xf32>, vector<4xf32>
// CHECK: gpu.shuffle
// CHECK: arith.divf
// CHECK: gpu.return
// CHECK-LABEL: func.func @column_sums_after_rows(
// CHECK-NOT: kfuse.counter
// CHECK: gpu.launch_func @kfuse_kernels::@column_sums_after_rows_g0
// CHECK: gpu.launch_func @kfuse_kernels::@column_sums_after_rows_g1

// PTX: .entry mean_lse_g0(
// PTX: atom.relaxed.gpu.global.inc.u32
// PTX-NOT: .entry mean_lse_g1(

// TWO-LABEL: func.func @mean_lse(
// TWO-NOT: kfuse.counter
// TWO: gpu.launch_func @kfuse_kernels::@mean_lse_g0
// TWO: gpu.launch_func @kfuse_kernels::@mean_lse_g1 blocks in (%c1, %c1, %c1)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
// The mean over 512 rows of each row's log-sum-exp (two groups: the rows,
// then the mean of their results).
func.func @mean_lse(%x: tensor<512x1000xf32>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %n = arith.constant 512.0 : f32
  %er = tensor.empty() : tensor<512xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<512xf32>) -> tensor<512xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x1000xf32>) outs(%fm : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %fs = linalg.fill ins(%z : f32) outs(%er : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<512x1000xf32>, tensor<512xf32>) outs(%fs : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %acc : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %lse = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%s, %m : tensor<512xf32>, tensor<512xf32>) outs(%er : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %l = math.log %a : f32
    %r = arith.addf %l, %b : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %t = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%lse : tensor<512xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%t : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.divf %a, %n : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}

// Negative: the second group sums the rows' results per column (it has
// parallel loops): a launch of its own.
func.func @column_sums_after_rows(%x: tensor<64x1000xf32>) -> tensor<8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%fm : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %v = tensor.expand_shape %m [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %ec = tensor.empty() : tensor<8xf32>
  %fc = linalg.fill ins(%z : f32) outs(%ec : tensor<8xf32>) -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%v : tensor<8x8xf32>) outs(%fc : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %c : tensor<8xf32>
}
