// REQUIRES: ptxas
//
// (row-smem=0 throughout: rows in registers only; cuda-row-smem.mlir
// covers rows kept in shared memory too.)
//
// Boolean row reductions ("all" with arith.andi, "any" with arith.ori) on
// CUDA: torch's safe softmax asks whether every score of a row is masked
// (-inf) and zeroes such rows. The two reductions read the same x over the
// same rows, so they run as one row kernel (horizontal fusion). Each thread
// folds its columns' booleans, and the block combines the partials as i32
// (the width of a warp shuffle) and truncates back to i1; the boolean
// result leaves as a byte. With clusters, the blocks' totals travel through
// i32 slots in distributed shared memory. ptxas accepts both.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-chunks=8})' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-cluster=8})' \
// RUN:   | FileCheck %s --check-prefix=CLUSTER
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-cluster=8 row-joint=false})' \
// RUN:   | FileCheck %s --check-prefix=APART
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0 row-cluster=8},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx

// PLAN-LABEL: func.func @masked_rows
// PLAN: fusion.group "g0" "reduction" ins(%{{.*}} : tensor<64x1024xf32>) attributes {decisions = ["fused horizontally with an independent sibling that reads the same 262144 B of inputs"]}
// PLAN: arith.andi
// PLAN: arith.ori
// PLAN: fusion.yield %{{.*}}, %{{.*}} : tensor<64x1024xf32>, tensor<64xi8>
// PLAN-NEXT: } -> tensor<64x1024xf32>, tensor<64xi8>
// PLAN-NEXT: return

// CODEGEN-LABEL: gpu.func @masked_rows_g0
// CODEGEN: %[[A:.*]] = vector.reduction <and>, %{{.*}} : vector<4xi1> into i1
// CODEGEN-NEXT: %[[AW:.*]] = arith.extui %[[A]] : i1 to i32
// One warp per block (1024 columns, 8 vectors per thread with
// row-chunks=8): five xor shuffles combine the lanes, no workgroup buffer
// or barrier.
// CODEGEN-NEXT: %[[S:.*]], %{{.*}} = gpu.shuffle xor %[[AW]], %c1_i32, %c32_i32 : i32
// CODEGEN-NEXT: arith.andi %[[AW]], %[[S]] : i32
// CODEGEN-NOT: gpu.barrier
// CODEGEN: gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CODEGEN-NEXT: %[[AR:.*]] = arith.andi
// CODEGEN-NEXT: arith.trunci %[[AR]] : i32 to i1
// CODEGEN: %[[O:.*]] = vector.reduction <or>, %{{.*}} : vector<4xi1> into i1
// CODEGEN-NEXT: %[[OW:.*]] = arith.extui %[[O]] : i1 to i32
// CODEGEN-NEXT: gpu.shuffle xor %[[OW]], %c1_i32, %c32_i32 : i32
// CODEGEN: gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CODEGEN-NEXT: %[[OR:.*]] = arith.ori
// CODEGEN-NEXT: %[[OT:.*]] = arith.trunci %[[OR]] : i32 to i1
// CODEGEN: %[[OB:.*]] = arith.extui %[[OT]] : i1 to i8
// CODEGEN: memref.store %[[OB]], %{{.*}}[%{{.*}}] : memref<64xi8>

// Rows of 262144 spread over clusters of 8 blocks: one i32 slot per
// reduction. The two reductions do not read each other, so their block
// totals cross the cluster in one exchange (one fence, one cluster barrier,
// both slots read from every block); with row-joint=false one each.
// CLUSTER-LABEL: gpu.func @masked_long_rows_g0
// CLUSTER-SAME: workgroup(%[[A:.*]] : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[B:.*]] : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CLUSTER-SAME: nvvm.cluster_dim = array<i32: 8, 1, 1>
// CLUSTER: arith.andi %{{.*}}, %shuffleResult
// CLUSTER: gpu.barrier
// CLUSTER-NOT: nvvm.mapa
// CLUSTER: arith.ori %{{.*}}, %shuffleResult
// CLUSTER: gpu.barrier
// CLUSTER-NOT: nvvm.mapa
// CLUSTER: memref.store %{{.*}}, %[[A]][%c0]
// CLUSTER-NEXT: memref.store %{{.*}}, %[[B]][%c0]
// CLUSTER-NEXT: "fence.acq_rel.cluster;"
// CLUSTER: nvvm.cluster.wait
// CLUSTER-COUNT-16: nvvm.mapa
// CLUSTER-NOT: fence
// CLUSTER: gpu.return
// APART-LABEL: gpu.func @masked_long_rows_g0
// APART: arith.andi %{{.*}}, %shuffleResult
// APART: gpu.barrier
// APART: "fence.acq_rel.cluster;"
// APART-COUNT-8: nvvm.mapa
// APART: arith.ori %{{.*}}, %shuffleResult
// APART: gpu.barrier
// APART: "fence.acq_rel.cluster;"
// APART-COUNT-8: nvvm.mapa

// PTX: .visible .entry masked_rows_g0(
// PTX: shfl.sync.bfly.b32
// PTX: .visible .entry masked_long_rows_g0(
// PTX: mapa.shared::cluster

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @masked_rows(%x: tensor<64x1024xf32> {kfuse.name = "x"}) -> (tensor<64x1024xf32> {kfuse.name = "out0"}, tensor<64xi1> {kfuse.name = "out1"}) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  %eb = tensor.empty() : tensor<64x1024xi1>
  %masked = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x1024xf32>) outs(%eb : tensor<64x1024xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf oeq, %in, %ninf : f32
    linalg.yield %c : i1
  } -> tensor<64x1024xi1>
  %er = tensor.empty() : tensor<64xi1>
  %t0 = linalg.fill ins(%true : i1) outs(%er : tensor<64xi1>) -> tensor<64xi1>
  %all = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%masked : tensor<64x1024xi1>) outs(%t0 : tensor<64xi1>) {
  ^bb0(%in: i1, %acc: i1):
    %a = arith.andi %in, %acc : i1
    linalg.yield %a : i1
  } -> tensor<64xi1>
  %f0 = linalg.fill ins(%false : i1) outs(%er : tensor<64xi1>) -> tensor<64xi1>
  %any = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%f0 : tensor<64xi1>) {
  ^bb0(%in: f32, %acc: i1):
    %n = arith.cmpf uno, %in, %in : f32
    %o = arith.ori %n, %acc : i1
    linalg.yield %o : i1
  } -> tensor<64xi1>
  %ef = tensor.empty() : tensor<64x1024xf32>
  %y = linalg.generic {indexing_maps = [#row, #red, #row], iterator_types = ["parallel", "parallel"]} ins(%x, %all : tensor<64x1024xf32>, tensor<64xi1>) outs(%ef : tensor<64x1024xf32>) {
  ^bb0(%in: f32, %a: i1, %out: f32):
    %s = arith.select %a, %zero, %in : f32
    linalg.yield %s : f32
  } -> tensor<64x1024xf32>
  return %y, %any : tensor<64x1024xf32>, tensor<64xi1>
}

func.func @masked_long_rows(%x: tensor<4x262144xf32> {kfuse.name = "x"}) -> (tensor<4x262144xf32> {kfuse.name = "out0"}, tensor<4xi1> {kfuse.name = "out1"}) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  %eb = tensor.empty() : tensor<4x262144xi1>
  %masked = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x262144xf32>) outs(%eb : tensor<4x262144xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf oeq, %in, %ninf : f32
    linalg.yield %c : i1
  } -> tensor<4x262144xi1>
  %er = tensor.empty() : tensor<4xi1>
  %t0 = linalg.fill ins(%true : i1) outs(%er : tensor<4xi1>) -> tensor<4xi1>
  %all = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%masked : tensor<4x262144xi1>) outs(%t0 : tensor<4xi1>) {
  ^bb0(%in: i1, %acc: i1):
    %a = arith.andi %in, %acc : i1
    linalg.yield %a : i1
  } -> tensor<4xi1>
  %f0 = linalg.fill ins(%false : i1) outs(%er : tensor<4xi1>) -> tensor<4xi1>
  %any = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x262144xf32>) outs(%f0 : tensor<4xi1>) {
  ^bb0(%in: f32, %acc: i1):
    %n = arith.cmpf uno, %in, %in : f32
    %o = arith.ori %n, %acc : i1
    linalg.yield %o : i1
  } -> tensor<4xi1>
  %ef = tensor.empty() : tensor<4x262144xf32>
  %y = linalg.generic {indexing_maps = [#row, #red, #row], iterator_types = ["parallel", "parallel"]} ins(%x, %all : tensor<4x262144xf32>, tensor<4xi1>) outs(%ef : tensor<4x262144xf32>) {
  ^bb0(%in: f32, %a: i1, %out: f32):
    %s = arith.select %a, %zero, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x262144xf32>
  return %y, %any : tensor<4x262144xf32>, tensor<4xi1>
}
