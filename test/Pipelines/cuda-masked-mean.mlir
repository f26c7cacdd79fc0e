// REQUIRES: ptxas
//
// A masked mean over the middle axis, as torch-mlir exports
// `(x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1)`:
//  - the count sum_s m[b, s] is recomputed for every (b, h) beside the sum
//    of x * m (fusion-lift-broadcast-reductions), so one kernel reads x and
//    the mask once and writes y: the sum and the count fold in the same
//    loop, from the same loads of the mask;
//  - x is contiguous along the rows (b, h), and the mask is broadcast
//    along h: a thread per row, consecutive threads on consecutive h (a
//    warp's loads of x coalesced, of the mask one byte for the warp), and
//    6144 rows too few for the GPU split into 16 slices of 32 positions,
//    the last block of each row's slices finishing it (one launch).
// The sum of x * m alone takes the same shape (before the broadcast mask
// counted as contiguous along the rows: a block of 128 threads per row,
// every warp load of x touching 32 sectors).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// CHECK-LABEL: func.func @masked_mean
// CHECK-SAME: (%[[X:[^:]*]]: memref<8x512x768xf32>, %[[M:[^:]*]]: memref<8x512xi8>, %[[Y:[^:]*]]: memref<8x768xf32>)
// CHECK: %[[COUNTER:.*]] = memref.alloc() {kfuse.counter} : memref<24xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@masked_mean_g0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args({{.*}}%[[COUNTER]] : memref<24xi32>, %[[Y]] : memref<8x768xf32>)
// CHECK-NOT: gpu.launch_func
// CHECK: return
// The partials kernel: a thread per (slice, row), x at the thread's h, the
// mask's byte once per position for both folds.
// CHECK: gpu.func @masked_mean_g0({{.*}}) {{.*}} kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 384, 1, 1>}
// CHECK: %[[TID:.*]] = arith.addi %{{.*}}, %thread_id_x : index
// CHECK: %[[H:.*]] = arith.remui %[[TID]], %c768 : index
// CHECK: scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}) -> (f32, f32)
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[H]]] : memref<8x16x32x768xf32>
// CHECK: %[[B:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<8x16x32xi8>
// CHECK: %[[T:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK: %[[F:.*]] = arith.uitofp %[[T]] : i1 to f32
// CHECK: arith.addf %[[F]], %[[N]]
// CHECK: gpu.func @masked_sum_g0({{.*}}) {{.*}} kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 384, 1, 1>}
// CHECK-LABEL: func.func @masked_sum
// CHECK: gpu.launch_func @kfuse_kernels::@masked_sum_g0
// CHECK-NOT: gpu.launch_func
// CHECK: return
// PTX: .entry masked_mean_g0(
// PTX: atom.relaxed.gpu.global.inc.u32
// PTX: div.{{.*}}f32
func.func @masked_mean(%arg0: tensor<8x512x768xf32>, %arg1: tensor<8x512xi1>) -> tensor<8x768xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x512xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<8x512xi1>) outs(%0 : tensor<8x512xf32>) {
  ^bb0(%in: i1, %out: f32):
    %12 = arith.uitofp %in : i1 to f32
    linalg.yield %12 : f32
  } -> tensor<8x512xf32>
  %expanded = tensor.expand_shape %1 [[0], [1, 2]] output_shape [8, 512, 1] : tensor<8x512xf32> into tensor<8x512x1xf32>
  %2 = tensor.empty() : tensor<8x512x768xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded : tensor<8x512x768xf32>, tensor<8x512x1xf32>) outs(%2 : tensor<8x512x768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.mulf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x512x768xf32>
  %4 = tensor.empty() : tensor<8x768xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<8x768xf32>) -> tensor<8x768xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%3 : tensor<8x512x768xf32>) outs(%5 : tensor<8x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %in, %out : f32
    linalg.yield %12 : f32
  } -> tensor<8x768xf32>
  %7 = tensor.empty() : tensor<8x1xf32>
  %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<8x512xf32>) outs(%8 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %in, %out : f32
    linalg.yield %12 : f32
  } -> tensor<8x1xf32>
  %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<8x1xf32>) outs(%7 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.cmpf ult, %in, %cst_0 : f32
    %13 = arith.select %12, %cst_0, %in : f32
    linalg.yield %13 : f32
  } -> tensor<8x1xf32>
  %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%6, %10 : tensor<8x768xf32>, tensor<8x1xf32>) outs(%4 : tensor<8x768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.divf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x768xf32>
  return %11 : tensor<8x768xf32>
}

func.func @masked_sum(%x: tensor<8x512x768xf32>, %m: tensor<8x512xf32>) -> tensor<8x768xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %2 = tensor.empty() : tensor<8x512x768xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<8x512x768xf32>, tensor<8x512xf32>) outs(%2 : tensor<8x512x768xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %12 = arith.mulf %in, %in_1 : f32
    linalg.yield %12 : f32
  } -> tensor<8x512x768xf32>
  %4 = tensor.empty() : tensor<8x768xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<8x768xf32>) -> tensor<8x768xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%3 : tensor<8x512x768xf32>) outs(%5 : tensor<8x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %12 = arith.addf %in, %out : f32
    linalg.yield %12 : f32
  } -> tensor<8x768xf32>
  return %6 : tensor<8x768xf32>
}
