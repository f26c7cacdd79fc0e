// REQUIRES: ptxas
//
// (row-smem=0 throughout: rows in registers only; cuda-row-smem.mlir
// covers rows kept in shared memory too.)
//
// Few long rows with two reductions (a log-sum-exp over 3 rows of 100000:
// the maximum, then the sum of exp(x - max)): one block per row (or a
// cluster of 8 per row) would leave most of the 132 SMs idle, so the
// reductions run as a partials kernel over row slices (here 20 slices of
// 5000 columns: 60 blocks; the most slices dividing the row, about 8
// blocks an SM, of 4096 columns at least) and a finishing kernel. With fast numerics the
// sum does not wait for the maximum: each slice folds its own maximum m_s
// and the sum of exp(x - m_s) in one pass (online), and the finishing
// kernel combines the maxima, then adds s_s exp(m_s - max) and runs the
// epilogue (log, + max): x is read once. Under strict numerics the maximum
// is finished (and stored) before a second partials kernel reads it. A
// group that writes a full-space result (a softmax) is split only where one
// kernel would keep an eighth of the SMs busy at most: the 3 rows of
// @softmax take a cluster of 8 blocks each (24 blocks) and read x once in
// one kernel; x / |x| over 2^20 (@normalize) would be one block, so its sum
// of squares runs over 256 slices of 4096, a finishing kernel adds the
// partials, and a third kernel stores y (x read twice, on every SM), over
// pieces of the slices, 2048 floats a block of 256 threads (512 blocks),
// its blocks short; with row-store-transposed=0 over the slices (SLICES).
// (row-last-block=0 throughout: by default a split's one
// wave finishes in its partials kernel's last block to count, see
// cuda-split-last-block.mlir.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0})' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0 row-cluster=8})' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0})' | FileCheck %s --check-prefix=KERN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0 row-store-transposed=0})' | FileCheck %s --check-prefix=SLICES
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: func.func @lse(
// CHECK-SAME: %[[X:[^:]*]]: memref<3x100000xf32>
// CHECK-SAME: %[[OUT:[^:]*]]: memref<3xf32>
// CHECK: %[[P1:.*]] = memref.alloc() : memref<3x20xf32>
// CHECK: %[[XS:.*]] = memref.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [3, 20, 5000]
// CHECK: gpu.launch_func @kfuse_kernels::@lse_g0_partial blocks in (%c60, %c1, %c1) {{.*}} args(%[[XS]] : memref<3x20x5000xf32>, %[[P1]] : memref<3x20xf32>, %[[P2:.*]] : memref<3x20xf32>)
// CHECK: gpu.launch_func @kfuse_kernels::@lse_g0 blocks in (%c3, %c1, %c1) {{.*}} args(%[[P1]] : memref<3x20xf32>, %[[P2]] : memref<3x20xf32>, %[[OUT]] : memref<3xf32>)
// CHECK-NOT: gpu.launch_func
// torch's logsumexp subtracts r = isinf(max) ? 0 : max, not the max: the
// slices fold their maxima and sums of exp(x - m_s) just the same, and the
// finishing kernel computes r from the row's max before it adds
// s_s exp(m_s - r). Its partials kernel is @lse's, so its launch runs
// @lse's (fusion-dedup-kernels) under its own name.
// CHECK-LABEL: func.func @lse_guarded(
// CHECK: gpu.launch_func @kfuse_kernels::@lse_g0_partial blocks in (%c60, %c1, %c1) {{.*}} {kfuse.generated_as = "lse_guarded_g0_partial"}
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@lse_guarded_g0 blocks in (%c3, %c1, %c1)
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @softmax(
// CHECK: gpu.launch_func @kfuse_kernels::@softmax_g0 {{.*}}blocks in (%c{{3|24}}, %c1, %c1)
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @normalize(
// CHECK-SAME: %[[NX:[^:]*]]: memref<1048576xf32>, %[[NY:[^:]*]]: memref<1048576xf32>
// CHECK: %[[NORM:.*]] = memref.alloc() {{.*}}: memref<f32>
// CHECK: %[[PART:.*]] = memref.alloc() : memref<256xf32>
// CHECK: %[[XS:.*]] = memref.expand_shape %[[NX]] {{\[\[}}0, 1]] output_shape [256, 4096]
// CHECK: gpu.launch_func @kfuse_kernels::@normalize_g0_partial blocks in (%c256, %c1, %c1) {{.*}}args(%[[XS]] : memref<256x4096xf32>, %[[PART]] : memref<256xf32>)
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@normalize_g0 blocks in (%c1, %c1, %c1) {{.*}}args(%[[PART]] : memref<256xf32>, %[[NORM]] : memref<f32>)
// CHECK-NEXT: %[[XP:.*]] = memref.expand_shape %[[NX]] {{\[\[}}0, 1]] output_shape [512, 2048]
// CHECK-NEXT: %[[YS:.*]] = memref.expand_shape %[[NY]] {{\[\[}}0, 1]] output_shape [512, 2048]
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@normalize_g0_store blocks in (%c512, %c1, %c1) threads in (%c256, %c1, %c1) {{.*}}args(%[[NORM]] : memref<f32>, %[[XP]] : memref<512x2048xf32>, %[[YS]] : memref<512x2048xf32>)
// CHECK-NEXT: return
// SLICES-LABEL: func.func @normalize(
// SLICES: %[[XS:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [256, 4096]
// SLICES: gpu.launch_func @kfuse_kernels::@normalize_g0_partial blocks in (%c256, %c1, %c1) {{.*}}args(%[[XS]] : memref<256x4096xf32>
// SLICES: %[[YS:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [256, 4096]
// SLICES-NEXT: gpu.launch_func @kfuse_kernels::@normalize_g0_store blocks in (%c256, %c1, %c1) {{.*}}args(%{{.*}} : memref<f32>, %[[XS]] : memref<256x4096xf32>, %[[YS]] : memref<256x4096xf32>)
// One loop over the slice folds the maximum and the rescaled sum; the
// finishing kernel rescales each slice's sum to the row's maximum. (Slices
// of 5000 floats: 4 floats at a time.)
// KERN: gpu.func @lse_g0_partial(
// KERN: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>)
// KERN: math.exp
// KERN: arith.maximumf %{{.*}}, %shuffleResult
// KERN: arith.addf %{{.*}}, %shuffleResult
// KERN: gpu.func @lse_g0(
// KERN: arith.maximumf %{{.*}}, %shuffleResult
// KERN: math.exp
// KERN: arith.addf %{{.*}}, %shuffleResult
// KERN: math.log
// (@lse_guarded's partials kernel is @lse_g0_partial: no absf before the
// guarded finish)
// KERN-NOT: gpu.func @lse_guarded_g0_partial(
// KERN: gpu.func @lse_guarded_g0(
// KERN: arith.maximumf %{{.*}}, %shuffleResult
// KERN: math.absf
// KERN: arith.cmpf oeq
// KERN: arith.select
// KERN: math.exp
// KERN: arith.addf %{{.*}}, %shuffleResult
// KERN: math.log
// Strict numerics: the maximum first, then the sum around it.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0 numerics=strict})' | FileCheck %s --check-prefix=STRICT
// STRICT-LABEL: func.func @lse(
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0_partial blocks in (%c60, %c1, %c1)
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0_combine1 blocks in (%c3, %c1, %c1)
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0_partial2 blocks in (%c60, %c1, %c1)
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0 blocks in (%c3, %c1, %c1)
// STRICT-NOT: gpu.launch_func
// STRICT-LABEL: func.func @lse_guarded(
// (the maximum's kernels are @lse's)
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0_partial blocks {{.*}}kfuse.generated_as = "lse_guarded_g0_partial"
// STRICT: gpu.launch_func @kfuse_kernels::@lse_g0_combine1 blocks {{.*}}kfuse.generated_as = "lse_guarded_g0_combine1"
// STRICT: gpu.launch_func @kfuse_kernels::@lse_guarded_g0_partial2 blocks
// STRICT: gpu.launch_func @kfuse_kernels::@lse_guarded_g0 blocks
// STRICT-LABEL: func.func @softmax(

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

#row = affine_map<(d0, d1) -> (d0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @lse_guarded(%x: tensor<3x100000xf32>) -> tensor<3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<3xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#full, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x100000xf32>) outs(%i : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%m : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %abs = math.absf %a : f32
    %isinf = arith.cmpf oeq, %abs, %inf : f32
    %v = arith.select %isinf, %zero, %a : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#full, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %r : tensor<3x100000xf32>, tensor<3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %t = math.exp %d : f32
    %v = arith.addf %t, %o : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %lse = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%sum, %r : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %l = math.log %a : f32
    %v = arith.addf %l, %b : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %lse : tensor<3xf32>
}

func.func @softmax(%arg0: tensor<3x100000xf32>) -> tensor<3x100000xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<3x100000xf32>) outs(%m0 : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0, %m : tensor<3x100000xf32>, tensor<3xf32>) outs(%s0 : tensor<3xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %v = arith.addf %x, %out : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %ef = tensor.empty() : tensor<3x100000xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %m, %s : tensor<3x100000xf32>, tensor<3xf32>, tensor<3xf32>) outs(%ef : tensor<3x100000xf32>) {
  ^bb0(%in: f32, %mx: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %v = arith.divf %x, %sum : f32
    linalg.yield %v : f32
  } -> tensor<3x100000xf32>
  return %y : tensor<3x100000xf32>
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
