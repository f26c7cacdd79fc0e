// A row softmax through the CPU pipelines: fusion-plan makes it one
// "reduction" group, fusion-fuse-group-bodies folds x - max and exp into the
// sum and into the division, and the group becomes loop nests that keep only
// the row values (max, sum and the sum's Kahan compensation, 64 floats
// each) in memory: the 64x1024 intermediates are recomputed, never stored.
// Then the LLVM dialect only. (Fast numerics mark the exp and the f32
// division `afn`: the CUDA target approximates them, ex2.approx and
// div.full; the CPU's LLVM lowering computes both as without the flag.)
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN --implicit-check-not=linalg. \
// RUN:       --implicit-check-not=memref.alloc
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu,fusion-target-cpu)' \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not=scf. --implicit-check-not=cf. \
// RUN:       --implicit-check-not=func.func --implicit-check-not=memref. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=linalg. --implicit-check-not=unrealized_conversion_cast

// PLAN-LABEL: func.func @softmax
// PLAN-SAME: (%[[X:[^:]*]]: tensor<64x1024xf32> {kfuse.name = "x"})
// PLAN-NOT: linalg.
// PLAN: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<64x1024xf32>) {
// PLAN-COUNT-2: iterator_types = ["parallel", "reduction"]
// PLAN: fusion.yield %{{.*}} : tensor<64x1024xf32>
// PLAN-NEXT: } -> tensor<64x1024xf32>
// PLAN-NEXT: return %[[G]] : tensor<64x1024xf32>

// CODEGEN-LABEL: func.func @softmax
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<64x1024xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<64x1024xf32> {kfuse.name = "out0"})
// CODEGEN-SAME: attributes {llvm.emit_c_interface}
// CODEGEN-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CODEGEN-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CODEGEN-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// The only buffers: one float per row for the max, for the sum and for the
// sum's compensation (no memref.alloc besides these three; see
// --implicit-check-not).
// CODEGEN: %[[SUM:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CODEGEN: %[[MAX:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// The accumulators' fills.
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: memref.store %[[NINF]], %[[MAX]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: }
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: memref.store %[[ZERO]], %[[SUM]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: }
// The row max.
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: %[[A:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<64x1024xf32>
// CODEGEN-NEXT: %[[M:.*]] = memref.load %[[MAX]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[R:.*]] = arith.maximumf %[[A]], %[[M]] fastmath<contract> : f32
// CODEGEN-NEXT: memref.store %[[R]], %[[MAX]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: }
// The sum's compensation (fusion-cpu-compensated-sums), zero at first.
// CODEGEN: %[[COMP:.*]] = memref.alloc() {{.*}} : memref<64xf32>
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: memref.store %[[ZERO]], %[[COMP]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: }
// The row sum of exp(x - max), compensated (Kahan; no compensation once
// the sum is not finite).
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: %[[A:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<64x1024xf32>
// CODEGEN-NEXT: %[[M:.*]] = memref.load %[[MAX]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[S:.*]] = memref.load %[[SUM]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[C:.*]] = memref.load %[[COMP]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[M]] fastmath<contract> : f32
// CODEGEN-NEXT: %[[E:.*]] = math.exp %[[D]] fastmath<contract,afn> : f32
// CODEGEN-NEXT: %[[TERM:.*]] = arith.subf %[[E]], %[[C]] : f32
// CODEGEN-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[TERM]] : f32
// CODEGEN-NEXT: %[[U:.*]] = arith.subf %[[T]], %[[S]] : f32
// CODEGEN-NEXT: %[[L:.*]] = arith.subf %[[U]], %[[TERM]] : f32
// CODEGEN-NEXT: %[[ABS:.*]] = math.absf %[[T]] : f32
// CODEGEN-NEXT: %[[FIN:.*]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// CODEGEN-NEXT: %[[KEPT:.*]] = arith.select %[[FIN]], %[[L]], %[[ZERO]] : f32
// CODEGEN-NEXT: memref.store %[[T]], %[[SUM]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: memref.store %[[KEPT]], %[[COMP]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: }
// exp(x - max) / sum, written to the output.
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: %[[A:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<64x1024xf32>
// CODEGEN-NEXT: %[[M:.*]] = memref.load %[[MAX]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[S:.*]] = memref.load %[[SUM]][%[[I]]] : memref<64xf32>
// CODEGEN-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[M]] fastmath<contract> : f32
// CODEGEN-NEXT: %[[E:.*]] = math.exp %[[D]] fastmath<contract,afn> : f32
// CODEGEN-NEXT: %[[R:.*]] = arith.divf %[[E]], %[[S]] fastmath<contract,afn> : f32
// CODEGEN-NEXT: memref.store %[[R]], %[[Y]][%[[I]], %[[J]]] : memref<64x1024xf32>
// CODEGEN-NEXT: }
// CODEGEN-NEXT: }
// CODEGEN-NOT: scf.for
// CODEGEN-DAG: memref.dealloc %[[SUM]] : memref<64xf32>
// CODEGEN-DAG: memref.dealloc %[[MAX]] : memref<64xf32>
// CODEGEN-DAG: memref.dealloc %[[COMP]] : memref<64xf32>
// CODEGEN: return

// Nothing but the llvm dialect is left (see the implicit-check-not options).
// LLVM: module {
// (the program's body is the entry's: one argument, the array of pointers
// to the memref descriptors, fusion-cpu-argv-entries)
// LLVM: llvm.func @_mlir_ciface_softmax(%[[ARGV:.*]]: !llvm.ptr)
// LLVM: llvm.getelementptr %[[ARGV]][0]
// LLVM: llvm.getelementptr %[[ARGV]][1]
// LLVM: llvm.call @malloc
// LLVM: llvm.call @malloc
// LLVM: llvm.fcmp
// LLVM: llvm.select
// LLVM: llvm.fsub
// LLVM: llvm.intr.exp
// LLVM: llvm.fadd
// LLVM: llvm.fsub
// LLVM: llvm.intr.exp
// LLVM: llvm.fdiv
// LLVM: llvm.call @free
// LLVM: llvm.call @free
// LLVM-NOT: llvm.call @softmax

module {
  func.func @softmax(%x: tensor<64x1024xf32> {kfuse.name = "x"}) -> (tensor<64x1024xf32> {kfuse.name = "out0"}) {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %e2 = tensor.empty() : tensor<64x1024xf32>
    %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%minit : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<64x1024xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %v = arith.subf %in, %mx : f32
      linalg.yield %v : f32
    } -> tensor<64x1024xf32>
    %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<64x1024xf32>) outs(%e2 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<64x1024xf32>
    %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<64x1024xf32>) outs(%sinit : tensor<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<64xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %s : tensor<64x1024xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %sum: f32, %out: f32):
      %v = arith.divf %in, %sum : f32
      linalg.yield %v : f32
    } -> tensor<64x1024xf32>
    return %y : tensor<64x1024xf32>
  }
}
