// Gathers at indices from the data through the CUDA pipelines: an
// embedding lookup (an elementwise kernel, two columns a thread) and the
// label pick of a loss (in the row kernel of the row's max). The token id
// and the label are compared with their dimension (unsigned: a negative id
// fails too), the read takes index 0 where they are out of range, and the
// kernel stores 1 into the first of its gather's two words of @kfuse_status
// where any lane was, and the index into the second (last in the kernel,
// after the loads and stores of its values); the host
// takes the status buffer before the launch and passes it to the kernel as
// an argument. test/Pipelines/cuda-gather-guard-ptxas.mlir assembles the PTX.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX

// Two status words a gather: the table's (words 0 and 1), the logits'
// (words 2 and 3).
// CODEGEN: memref.global @kfuse_status : memref<4xi64> = dense<0> {kfuse.guards = ["index out of range in a gather from input #1 (tensor<100x64xf32>): dimension 0 (size 100) (tensor.extract at {{.*}}cuda-gather-guard.mlir:{{[0-9]+}}:{{[0-9]+}})", "index out of range in a gather from input #0 (tensor<64x1000xf32>): dimension 1 (size 1000) (tensor.extract at {{.*}})"]}
// CODEGEN-LABEL: func.func @embedding
// CODEGEN-SAME: (%[[IDS:[^:]*]]: memref<8xi64>, %[[T:[^:]*]]: memref<100x64xf32>, %[[Y:[^:]*]]: memref<8x64xf32>)
// CODEGEN: %[[S:.*]] = memref.get_global @kfuse_status : memref<4xi64>
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@embedding_g0 {{.*}} args(%[[Y]] : memref<8x64xf32>, %[[IDS]] : memref<8xi64>, %[[T]] : memref<100x64xf32>, %[[S]] : memref<4xi64>)
// CODEGEN: gpu.func @embedding_g0(%{{.*}}: memref<8x64xf32>, %[[KIDS:[^:]*]]: memref<8xi64>, %[[KT:[^:]*]]: memref<100x64xf32>, %[[KS:[^:]*]]: memref<4xi64>) kernel
// CODEGEN-DAG: %[[W1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[W0:.*]] = arith.constant 0 : index
// CODEGEN-DAG: %[[C100:.*]] = arith.constant dense<100> : vector<2xindex>
// CODEGEN-DAG: %[[C0:.*]] = arith.constant dense<0> : vector<2xindex>
// CODEGEN: %[[ID64:.*]] = memref.load %[[KIDS]]
// CODEGEN: %[[ID:.*]] = arith.index_cast %{{.*}} : vector<2xi64> to vector<2xindex>
// CODEGEN: %[[OK:.*]] = arith.cmpi ult, %[[ID]], %[[C100]] : vector<2xindex>
// CODEGEN-NEXT: %[[AT:.*]] = arith.select %[[OK]], %[[ID]], %[[C0]] : vector<2xi1>, vector<2xindex>
// CODEGEN-COUNT-2: memref.load %[[KT]]
// CODEGEN: %[[ALL:.*]] = vector.reduction <and>, %[[OK]] : vector<2xi1> into i1
// CODEGEN-NEXT: %[[BAD:.*]] = arith.xori %[[ALL]], %{{.*}} : i1
// CODEGEN: vector.store
// CODEGEN-NEXT: scf.if %[[BAD]] {
// CODEGEN-NEXT: memref.store %{{.*}}, %[[KS]][%[[W0]]] {alignment = 8 : i64} : memref<4xi64>
// Each lane that failed stores its id (both lanes of a thread share one row's).
// CODEGEN-COUNT-2: memref.atomic_rmw assign %{{.*}}, %[[KS]][%[[W1]]] : (i64, memref<4xi64>) -> i64
// CODEGEN: gpu.return

// CODEGEN: gpu.func @nll_g0(%{{.*}}: memref<64xi64>, %[[KX:[^:]*]]: memref<64x1000xf32>, %{{.*}}: memref<64xf32>, %[[KS:[^:]*]]: memref<4xi64>
// CODEGEN-DAG: %[[W2:.*]] = arith.constant 2 : index
// CODEGEN-DAG: %[[W3:.*]] = arith.constant 3 : index
// The label's logit is loaded before the row's loop (its latency hidden
// behind the loop's), the label checked after the row's max.
// CODEGEN: %[[L:.*]] = arith.index_cast %[[L64:.*]] : i64 to index
// CODEGEN-NEXT: %[[OK:.*]] = arith.cmpi ult, %[[L]], %{{.*}} : index
// CODEGEN-NEXT: %[[AT:.*]] = arith.select %[[OK]], %[[L]], %{{.*}} : index
// CODEGEN-NEXT: memref.load %[[KX]][%{{.*}}, %[[AT]]] : memref<64x1000xf32>
// CODEGEN-NEXT: scf.for
// CODEGEN: gpu.shuffle
// CODEGEN: %[[BAD:.*]] = arith.cmpi uge, %[[L]], %{{.*}} : index
// The word's store comes after the loss's, which thread 0 makes.
// CODEGEN: scf.if %{{.*}} {
// CODEGEN-NEXT: memref.store
// CODEGEN-NEXT: }
// CODEGEN-NEXT: scf.if %[[BAD]] {
// CODEGEN-NEXT: memref.store %{{.*}}, %[[KS]][%[[W2]]] {alignment = 8 : i64} : memref<4xi64>
// CODEGEN-NEXT: memref.atomic_rmw assign %[[L64]], %[[KS]][%[[W3]]] : (i64, memref<4xi64>) -> i64
// CODEGEN-NEXT: }
// CODEGEN-NEXT: gpu.return

// The host side of the loss, after the kernels' module.
// CODEGEN: func.func @nll
// CODEGEN: %[[S:.*]] = memref.get_global @kfuse_status : memref<4xi64>
// CODEGEN-NEXT: gpu.launch_func @kfuse_kernels::@nll_g0 {{.*}} %[[S]] : memref<4xi64>

// In the PTX each kernel takes the status buffer as its parameter and stores
// 1 into its first word and exchanges the index into its second (the
// loss's are the third and fourth: 16 and 24 bytes in), behind a branch.
// PTX: .visible .entry embedding_g0(
// PTX-COUNT-4: .param .u64
// PTX: setp.lt.u64 %p{{[0-9]+}}, %rd{{[0-9]+}}, 100;
// PTX: st.global.b64 [%rd{{[0-9]+}}], 1;
// PTX: atom.global.exch.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}+8], %rd{{[0-9]+}};
// PTX: .visible .entry nll_g0(
// PTX: setp.lt.u64 %p{{[0-9]+}}, %rd{{[0-9]+}}, 1000;
// PTX: st.global.b64 [%rd{{[0-9]+}}+16], 1;
// PTX: atom.global.exch.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}+24], %rd{{[0-9]+}};

#row = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>

func.func @embedding(%ids: tensor<8xi64>, %table: tensor<100x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<100x64xf32>
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

func.func @nll(%x: tensor<64x1000xf32>, %labels: tensor<64xi64>) -> tensor<64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%m0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %loss = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%m, %labels : tensor<64xf32>, tensor<64xi64>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%mx: f32, %lab: i64, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %lab : i64 to index
    %p = tensor.extract %x[%r, %c] : tensor<64x1000xf32>
    %d = arith.subf %mx, %p : f32
    linalg.yield %d : f32
  } -> tensor<64xf32>
  return %loss : tensor<64xf32>
}
