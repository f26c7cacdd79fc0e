// Reductions whose step is not an associative op, through the CUDA
// pipelines. Row kernels split a reduction across threads and combine
// their partials, which needs `acc = acc op f(inputs)` with an associative
// op. An alternating sum (acc' = x - acc) and a Horner step
// (acc' = acc * t + x) are not: their groups become ordered kernels, each
// generic a launch of its own with a thread per element it writes and its
// reduction loops in order, as the CPU target runs them; reductions of
// the group that combine associatively (a row max) stay row kernels. The
// fill of the accumulator is the loop's start, not a launch. `acc - x` is `acc + (-x)`
// (fusion-associative-combiners): a row kernel, with shuffles.
// test/Pipelines/cuda-ordered-reduction-ptxas.mlir assembles the PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu,fusion-target-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CPU

// CODEGEN-LABEL: func.func @alternating
// CODEGEN-SAME: (%[[X:.*]]: memref<64x1024xf32> {{.*}}, %[[OUT:.*]]: memref<64xf32> {{.*}})
// CODEGEN-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CODEGEN-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@alternating_g0_ordered0 blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]]) args(%[[X]] : memref<64x1024xf32>, %[[OUT]] : memref<64xf32>)
// CODEGEN-NEXT: return

// A thread a row; the accumulator starts at the fill's 0 and the row's
// elements are taken in order. Each warp stages its 32 rows through a
// workgroup buffer, 8 columns (32 bytes) at a time: load k of lane l takes
// element f = 32k + l of the warp's 32 x 8, column f % 8 of row f / 8 (4
// whole sectors a load), then each thread walks its own row there. Every
// thread runs the loops (the barriers need them all): a thread past the
// last row would compute the last row again (minui) and skip the store
// (scf.if).
// CODEGEN-LABEL: gpu.func @alternating_g0_ordered0
// CODEGEN-SAME: workgroup(%[[TILE:.*]] : memref<2x32x9xf32, #gpu.address_space<workgroup>>
// CODEGEN-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CODEGEN-DAG: %[[N:.*]] = arith.constant 1024 : index
// CODEGEN-DAG: %[[C8:.*]] = arith.constant 8 : index
// CODEGEN-DAG: %[[C32:.*]] = arith.constant 32 : index
// CODEGEN: %[[T:.*]] = gpu.thread_id x
// CODEGEN: %[[IN:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : index
// CODEGEN: %[[P:.*]] = arith.minui %[[T]], %{{.*}} : index
// CODEGEN: %[[LANE:.*]] = arith.remui %[[T]], %[[C32]] : index
// CODEGEN: %[[WARP:.*]] = arith.divui %[[T]], %[[C32]] : index
// CODEGEN: %[[R:.*]] = scf.for %[[J0:.*]] = %{{.*}} to %[[N]] step %[[C8]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CODEGEN-NEXT: scf.for %[[K:.*]] = %{{.*}} to %[[C8]] step %{{.*}} {
// CODEGEN-NEXT: %[[K32:.*]] = arith.muli %[[K]], %[[C32]] : index
// CODEGEN-NEXT: %[[F:.*]] = arith.addi %[[K32]], %[[LANE]] : index
// CODEGEN-NEXT: %[[ROW:.*]] = arith.divui %[[F]], %[[C8]] : index
// CODEGEN-NEXT: %[[COL:.*]] = arith.remui %[[F]], %[[C8]] : index
// CODEGEN: %[[J:.*]] = arith.addi %[[J0]], %[[COL]] : index
// CODEGEN-NEXT: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %[[J]]] : memref<64x1024xf32>
// CODEGEN-NEXT: memref.store %[[V]], %[[TILE]][%[[WARP]], %[[ROW]], %[[COL]]]
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.barrier
// CODEGEN-NEXT: %[[S:.*]] = scf.for %[[JJ:.*]] = %{{.*}} to %[[C8]] step %{{.*}} iter_args(%[[A:.*]] = %[[ACC]]) -> (f32) {
// CODEGEN-NEXT: %[[W:.*]] = memref.load %[[TILE]][%[[WARP]], %[[LANE]], %[[JJ]]]
// CODEGEN-NEXT: %[[D:.*]] = arith.subf %[[W]], %[[A]] {{.*}}: f32
// CODEGEN-NEXT: scf.yield %[[D]] : f32
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.barrier
// CODEGEN-NEXT: scf.yield %[[S]] : f32
// CODEGEN-NEXT: }
// CODEGEN-NEXT: scf.if %[[IN]] {
// CODEGEN-NEXT: memref.store %[[R]], %{{.*}}[%[[P]]] : memref<64xf32>
// CODEGEN-NOT: gpu.shuffle

// CODEGEN-LABEL: gpu.func @horner_g0_ordered0
// CODEGEN: scf.for {{.*}} -> (f32) {
// CODEGEN: arith.mulf
// CODEGEN: arith.addf
// CODEGEN-NOT: gpu.shuffle
// CODEGEN-LABEL: gpu.func @horner_g0_ordered1
// CODEGEN-NOT: scf.for
// CODEGEN: arith.subf

// acc - x: a row kernel of its own kind.
// CODEGEN-LABEL: gpu.func @row_difference_g0
// CODEGEN: arith.negf
// CODEGEN: gpu.shuffle xor

// A row max beside an alternating sum of exp(x - max) in one group: the
// max, which combines associatively, stays a row kernel (shuffles) of its
// own, and the sum runs in order after it.
// CODEGEN-LABEL: gpu.func @mixed_g0_rows0
// CODEGEN: gpu.shuffle xor
// CODEGEN: arith.maximumf
// CODEGEN-LABEL: gpu.func @mixed_g0_ordered1
// CODEGEN: scf.for
// CODEGEN: math.exp
// CODEGEN-NOT: gpu.shuffle
// CODEGEN: gpu.return

// An alternating sum over a whole vector: one thread walks it, its warp
// staging the next 256 elements together (8 loads a lane, 32 consecutive
// elements a load), then the last 1000 - 3 * 256 = 232 loaded directly.
// CODEGEN-LABEL: gpu.func @whole_g0_ordered0
// CODEGEN-SAME: workgroup(%[[BUF:.*]] : memref<1x1x257xf32, #gpu.address_space<workgroup>>
// CODEGEN-DAG: %[[C256:.*]] = arith.constant 256 : index
// CODEGEN-DAG: %[[C768:.*]] = arith.constant 768 : index
// CODEGEN-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CODEGEN: scf.for %{{.*}} = %{{.*}} to %[[C768]] step %[[C256]]
// CODEGEN-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C8:.*]] step
// CODEGEN: memref.load %{{.*}} : memref<1000xf32>
// CODEGEN-NEXT: memref.store %{{.*}}, %[[BUF]]
// CODEGEN: gpu.barrier
// CODEGEN: scf.for %{{.*}} = %{{.*}} to %[[C256]] step
// CODEGEN-NEXT: memref.load %[[BUF]]
// CODEGEN: gpu.barrier
// CODEGEN: scf.for %[[J:.*]] = %[[C768]] to %[[C1000]] step
// CODEGEN-NEXT: memref.load %{{.*}}[%[[J]]] : memref<1000xf32>
// CODEGEN-NEXT: arith.subf
// CODEGEN: gpu.return

// A Horner step over rows of 300, and an epilogue over the rows' columns:
// two launches (the epilogue reads the reduction's result from memory).
// CODEGEN-LABEL: func.func @horner
// CODEGEN: gpu.launch_func @kfuse_kernels::@horner_g0_ordered0 blocks
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@horner_g0_ordered1 blocks
// CODEGEN-NEXT: return

// CODEGEN-LABEL: func.func @row_difference
// CODEGEN: gpu.launch_func @kfuse_kernels::@row_difference_g0 blocks
// CODEGEN-NEXT: return

// CODEGEN-LABEL: func.func @mixed
// CODEGEN: gpu.launch_func @kfuse_kernels::@mixed_g0_rows0 blocks
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@mixed_g0_ordered1 blocks
// CODEGEN-NEXT: return

// CPU: llvm.func @_mlir_ciface_alternating(%{{.*}}: !llvm.ptr)
// CPU: llvm.fsub
// CPU: llvm.func @_mlir_ciface_horner(%{{.*}}: !llvm.ptr)
// CPU: llvm.func @_mlir_ciface_row_difference(%{{.*}}: !llvm.ptr)
// CPU: llvm.func @_mlir_ciface_mixed(%{{.*}}: !llvm.ptr)

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>

func.func @alternating(%x: tensor<64x1024xf32> {kfuse.name = "x"}) -> (tensor<64xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.subf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %d : tensor<64xf32>
}

func.func @horner(%x: tensor<64x300xf32>, %t: tensor<64xf32>) -> (tensor<64xf32>, tensor<64x300xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %t : tensor<64x300xf32>, tensor<64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%c: f32, %tt: f32, %acc: f32):
    %m = arith.mulf %acc, %tt : f32
    %a = arith.addf %m, %c : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x300xf32>
  %y = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %p : tensor<64x300xf32>, tensor<64xf32>) outs(%e2 : tensor<64x300xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x300xf32>
  return %p, %y : tensor<64xf32>, tensor<64x300xf32>
}

func.func @row_difference(%x: tensor<64x1024xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.subf %out, %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %d : tensor<64xf32>
}

func.func @mixed(%x: tensor<32x500xf32>) -> tensor<32xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %m = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x500xf32>) outs(%mi : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %m : tensor<32x500xf32>, tensor<32xf32>) outs(%z : tensor<32xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %p = math.exp %d : f32
    %a = arith.subf %p, %acc : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  return %s : tensor<32xf32>
}

func.func @whole(%v: tensor<1000xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v : tensor<1000xf32>) outs(%z : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  return %a : tensor<f32>
}
