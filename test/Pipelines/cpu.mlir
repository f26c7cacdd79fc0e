// The three-op chain through the CPU pipelines: one loop nest computing the
// whole chain, with a C interface, then the LLVM dialect only (the entry
// takes one array of pointers to the memref descriptors and holds the
// program's body: fusion-cpu-argv-entries).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cpu,fusion-target-cpu)' \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not=scf. --implicit-check-not=cf. \
// RUN:       --implicit-check-not=func.func --implicit-check-not=memref. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast

// CODEGEN-LABEL: func.func @f
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<16777216xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<16777216xf32> {kfuse.name = "out0"})
// CODEGEN-SAME: attributes {llvm.emit_c_interface}
// CODEGEN-NOT: linalg.
// CODEGEN-NOT: memref.alloc
// CODEGEN: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CODEGEN-NEXT: %[[A:.*]] = memref.load %[[X]][%[[I]]] : memref<16777216xf32>
// CODEGEN-NEXT: %[[E:.*]] = math.exp %[[A]] fastmath<contract,afn> : f32
// CODEGEN-NEXT: %[[S:.*]] = arith.addf %[[E]], %{{.*}} fastmath<contract> : f32
// CODEGEN-NEXT: %[[L:.*]] = math.log %[[S]] fastmath<contract> : f32
// CODEGEN-NEXT: memref.store %[[L]], %[[Y]][%[[I]]] : memref<16777216xf32>
// CODEGEN-NEXT: }
// CODEGEN-NOT: scf.for
// CODEGEN: return

// Nothing but the llvm dialect is left (see the implicit-check-not options).
// LLVM: module {
// LLVM: llvm.func @_mlir_ciface_f(%[[ARGV:.*]]: !llvm.ptr)
// LLVM: %[[P0:.*]] = llvm.getelementptr %[[ARGV]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM: %[[X:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// LLVM: %[[P1:.*]] = llvm.getelementptr %[[ARGV]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM: %[[Y:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// LLVM: llvm.load %[[X]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// LLVM: llvm.load %[[Y]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// LLVM: llvm.intr.exp
// LLVM: llvm.fadd
// LLVM: llvm.intr.log
// LLVM-NOT: llvm.func @f(
// LLVM-NOT: llvm.call @f(

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

