// A three-op chain (the builder's log(exp(x) + 1.0) on 2^24 f32) through the
// CUDA pipelines: one fused, vectorized kernel, then PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{blocks-per-sm=8})' \
// RUN:   | FileCheck %s --check-prefix=CAPPED
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: FileCheck %s --check-prefix=BINARY --input-file=%t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{blocks-per-sm=8},fusion-target-cuda)' -o %t.capped.mlir
// RUN: %python %S/extract_ptx.py %t.capped.mlir | FileCheck %s --check-prefix=PTXLOOP
//
// Options: the chip reaches the strategy (108 SMs on sm_80: a cap of 8
// blocks per SM is 864 blocks) and the PTX target; threads changes the block
// size.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80 threads=128 blocks-per-sm=8},fusion-target-cuda{chip=sm_80})' -o %t.sm80.mlir
// RUN: FileCheck %s --check-prefix=SM80 --input-file=%t.sm80.mlir
// RUN: %python %S/extract_ptx.py %t.sm80.mlir | FileCheck %s --check-prefix=SM80PTX
//
// Bad options fail with a message.
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=bogus})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCHIP
// (a version past any integer: refused, not read as a number)
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_99999999999})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HUGECHIP
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda{chip=bogus})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADTARGET
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_75})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWNCHIP
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{threads=100})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADTHREADS

// After codegen: a host function that launches one kernel over memrefs (the
// result became an out-parameter), and one outlined kernel. By default the
// grid covers the space once: 2^24 / 4 = 4194304 vectors, 16384 blocks of
// 256 threads, one vector per thread and no loop.
// CODEGEN: module attributes {gpu.container_module}
// CODEGEN-LABEL: func.func @f
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<16777216xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<16777216xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: linalg
// CODEGEN-DAG: %[[C1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[C256:.*]] = arith.constant 256 : index
// CODEGEN-DAG: %[[C16384:.*]] = arith.constant 16384 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@f_g0 blocks in (%[[C16384]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[X]] : memref<16777216xf32>, %[[Y]] : memref<16777216xf32>)
// CODEGEN-NOT: gpu.launch_func
// CODEGEN: return
// CODEGEN: gpu.module @kfuse_kernels {
// CODEGEN-NEXT: gpu.func @f_g0(%[[KX:[^:]*]]: memref<16777216xf32>, %[[KY:[^:]*]]: memref<16777216xf32>) kernel
// CODEGEN-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 16384, 1, 1>
// CODEGEN-NOT: scf.for
// CODEGEN: %[[V:.*]] = vector.load %[[KX]][%[[OFF:.*]]] {alignment = 16 : i64} : memref<16777216xf32>, vector<4xf32>
// CODEGEN-NEXT: %[[E:.*]] = math.exp %[[V]] fastmath<contract,afn> : vector<4xf32>
// CODEGEN-NEXT: %[[A:.*]] = arith.addf %[[E]], %{{.*}} fastmath<contract> : vector<4xf32>
// CODEGEN-NEXT: %[[L:.*]] = math.log %[[A]] fastmath<contract> : vector<4xf32>
// CODEGEN-NEXT: vector.store %[[L]], %[[KY]][%[[OFF]]] {alignment = 16 : i64} : memref<16777216xf32>, vector<4xf32>
// CODEGEN-NEXT: gpu.return
// CODEGEN-NOT: gpu.func

// With a cap of 8 blocks per SM: 1056 blocks (132 SMs x 8) x 256 threads x
// 4 unrolled = 1081344 vectors per trip: 3 full trips, then a remainder loop.
// CAPPED-DAG: %[[C1056:.*]] = arith.constant 1056 : index
// CAPPED: gpu.launch_func @kfuse_kernels::@f_g0 blocks in (%[[C1056]],
// CAPPED: gpu.func @f_g0(%[[KX:[^:]*]]: memref<16777216xf32>, %[[KY:[^:]*]]: memref<16777216xf32>) kernel
// CAPPED-SAME: known_grid_size = array<i32: 1056, 1, 1>
// CAPPED: scf.for %{{.*}} = %{{.*}} to %[[C3:.*]] step
// CAPPED-COUNT-4: vector.load %[[KX]][%{{.*}}] {alignment = 16 : i64} : memref<16777216xf32>, vector<4xf32>
// CAPPED-NOT: vector.load
// CAPPED: math.exp %{{.*}} : vector<4xf32>
// CAPPED: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CAPPED: math.log %{{.*}} : vector<4xf32>
// CAPPED-COUNT-4: vector.store %{{.*}}, %[[KY]][%{{.*}}] {alignment = 16 : i64} : memref<16777216xf32>, vector<4xf32>
// CAPPED: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CAPPED: vector.load %[[KX]]
// CAPPED: vector.store %{{.*}}, %[[KY]]
// CAPPED: gpu.return

// After the target pipeline the kernels are a binary; the host code is
// unchanged.
// BINARY: gpu.launch_func @kfuse_kernels::@f_g0 blocks in
// BINARY-NOT: gpu.module
// BINARY: gpu.binary @kfuse_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx81">
// BINARY-NOT: gpu.func

// The PTX has one kernel that reads and writes 16 bytes per access (four
// 32-bit lanes: ld/st.global.v4.b32), with no loop.
// PTX: .version 8.1
// PTX: .target sm_90
// PTX: .visible .entry f_g0(
// PTX-NOT: .entry
// PTX: .maxntid 256, 1, 1
// PTX-NOT: bra
// PTX: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// PTX-NOT: ld.global
// PTX: st.global.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// PTX-NOT: st.global
// PTX-NOT: .entry

// Capped: four loads in flight per trip of the main loop, then the remainder.
// PTXLOOP: .visible .entry f_g0(
// PTXLOOP-NOT: .entry
// PTXLOOP: [[LOOP:\$L__BB0_[0-9]+]]:
// PTXLOOP-COUNT-4: ld.global.v4.b32
// PTXLOOP-NOT: ld.global
// PTXLOOP-COUNT-4: st.global.v4.b32
// PTXLOOP: bra{{.*}}[[LOOP]];
// PTXLOOP: ld.global.v4.b32
// PTXLOOP: st.global.v4.b32
// PTXLOOP-NOT: .entry

// SM80-DAG: %[[C864:.*]] = arith.constant 864 : index
// SM80-DAG: %[[C128:.*]] = arith.constant 128 : index
// SM80: gpu.launch_func @kfuse_kernels::@f_g0 blocks in (%[[C864]], %{{.*}}, %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}})
// SM80: gpu.binary @kfuse_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx81">
// SM80PTX: .target sm_80
// SM80PTX: .entry f_g0(
// SM80PTX: .maxntid 128, 1, 1
// SM80PTX: ld.global.v4.b32

// BADCHIP: error: fusion-codegen-cuda: chip must look like sm_90, got 'bogus'
// HUGECHIP: error: fusion-codegen-cuda: chip must look like sm_90, got 'sm_99999999999'
// BADTARGET: error: fusion-target-cuda: bad chip 'bogus' or features '+ptx81'
// UNKNOWNCHIP: error: fusion-select-strategy: unknown chip 'sm_75' (known: sm_80, sm_86, sm_89, sm_90); pass sm-count= to use another
// BADTHREADS: error: fusion-select-strategy: threads must be a positive multiple of 32 and at most 1024, got 100

module {
  func.func @f(%arg0: tensor<16777216xf32> {kfuse.name = "x"}) -> (tensor<16777216xf32> {kfuse.name = "out0"}) {
    %e2 = tensor.empty() : tensor<16777216xf32>
    %t2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<16777216xf32>) outs(%e2 : tensor<16777216xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.exp %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<16777216xf32>
    %e3 = tensor.empty() : tensor<16777216xf32>
    %t3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t2 : tensor<16777216xf32>) outs(%e3 : tensor<16777216xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = arith.constant 1.0 : f32
      %v1 = arith.addf %in0, %v0 : f32
      linalg.yield %v1 : f32
    } -> tensor<16777216xf32>
    %e4 = tensor.empty() : tensor<16777216xf32>
    %t4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t3 : tensor<16777216xf32>) outs(%e4 : tensor<16777216xf32>) {
    ^bb0(%in0: f32, %out: f32):
      %v0 = math.log %in0 : f32
      linalg.yield %v0 : f32
    } -> tensor<16777216xf32>
    return %t4 : tensor<16777216xf32>
  }
}

