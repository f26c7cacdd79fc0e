// Row sums of x[4 x 64 x 96] beside its means over the 64 rows of each of
// the 4 batch indices (a sentence embedding's mean pooling beside a layer
// norm's statistics): the batched column sum (loops (b, d | s)) joins the
// rows' group, its kept loop b on the kernel's leading row dimension, d on
// its columns and s on its other rows; the division by 64 after it (a
// column epilogue) runs in the kernel adding up the partials. With 4 SMs
// the row kernel packs 8 rows a block and each block folds a run of 32
// rows of one batch index: 8 blocks, 2 per index, partials [4 x 2 x 96].
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4})' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// Streamed rows (row-chunks=0): the sum reads x alone, so it is left to the
// kernel after the rows, which reduces x over s for each (b, d).
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{sm-count=4 row-chunks=0})' \
// RUN:   | FileCheck %s --check-prefix=STREAM

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#bsd = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// PLAN-LABEL: func.func @rows_and_batched_columns
// PLAN: %[[G:.*]]:2 = fusion.group "g0" "reduction"
// PLAN-SAME: "sums 1 reduction over the rows it computes (column sums): partials per block of rows, added up by a second kernel"
// PLAN: iterator_types = ["parallel", "parallel", "reduction"]
// PLAN: arith.addf
// PLAN: iterator_types = ["parallel", "parallel", "reduction"]
// PLAN: arith.addf
// PLAN: iterator_types = ["parallel", "parallel"]
// PLAN: arith.divf
// PLAN: fusion.yield
// PLAN-NOT: fusion.group
// PLAN: return %[[G]]#0, %[[G]]#1

// CODEGEN-LABEL: func.func @rows_and_batched_columns
// CODEGEN: %[[PART:.*]] = memref.alloc() : memref<4x2x96xf32>
// CODEGEN: gpu.launch_func @kfuse_kernels::@rows_and_batched_columns_g0 blocks in (%c8, %c1, %c1) threads in (%c256, %c1, %c1) args({{.*}}%[[PART]] : memref<4x2x96xf32>)
// CODEGEN: gpu.launch_func @kfuse_kernels::@rows_and_batched_columns_g0_columns{{.*}}args(%[[PART]] : memref<4x2x96xf32>
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: return
// The row kernel: block b's run is rows 32 b ... 32 b + 31 of the 256
// (b, s); it stores its partials at [b / 2, b % 2].
// CODEGEN: gpu.func @rows_and_batched_columns_g0(
// CODEGEN: %[[BID:.*]] = gpu.block_id x
// CODEGEN: scf.for
// CODEGEN: gpu.barrier
// CODEGEN-DAG: %[[K:.*]] = arith.divui %[[BID]], %c2
// CODEGEN-DAG: %[[J:.*]] = arith.remui %[[BID]], %c2
// CODEGEN: vector.store %{{.*}}, %{{.*}}[%[[K]], %[[J]], %{{.*}}] {{.*}} : memref<4x2x96xf32>, vector<4xf32>
// CODEGEN: gpu.return
// The second kernel: the 2 partials of each (b, d), then the division.
// CODEGEN: gpu.func @rows_and_batched_columns_g0_columns(
// CODEGEN: arith.addf
// CODEGEN: arith.divf
// CODEGEN: gpu.return

// STREAM-LABEL: func.func @rows_and_batched_columns
// STREAM-NOT: memref.alloc() : memref<4x
// STREAM: gpu.launch_func @kfuse_kernels::@rows_and_batched_columns_g0 blocks in (%c256, %c1, %c1)
// STREAM: gpu.launch_func @kfuse_kernels::@rows_and_batched_columns_g0_columns{{.*}}args(%{{.*}} : memref<4x64x96xf32>
// STREAM-NOT: gpu.launch_func
func.func @rows_and_batched_columns(%x: tensor<4x64x96xf32>) -> (tensor<4x64xf32>, tensor<4x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %er = tensor.empty() : tensor<4x64xf32>
  %ec = tensor.empty() : tensor<4x96xf32>
  %racc = linalg.fill ins(%zero : f32) outs(%er : tensor<4x64xf32>) -> tensor<4x64xf32>
  %cacc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x96xf32>) -> tensor<4x96xf32>
  %rows = linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x64x96xf32>) outs(%racc : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %cols = linalg.generic {indexing_maps = [#bsd, #rows3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x64x96xf32>) outs(%cacc : tensor<4x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x96xf32>
  %mean = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%cols : tensor<4x96xf32>) outs(%ec : tensor<4x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    linalg.yield %v : f32
  } -> tensor<4x96xf32>
  return %rows, %mean : tensor<4x64xf32>, tensor<4x96xf32>
}
