// REQUIRES: ptxas
//
// (row-smem=0 throughout: rows in registers only; cuda-row-smem.mlir
// covers rows kept in shared memory too. row-split-tail=0: the layer norm
// over 2 rows of 70001, a prime, would otherwise split into slices and a
// tail, see cuda-split-tail.mlir.)
//
// Shifted chunks: a row kernel over rows whose width is no multiple of the
// vector width still moves 16-byte vectors. Row r of a [rows, 1025] buffer
// starts (r * 1025) mod 4 = r mod 4 floats past a 16-byte boundary, so the
// threads step over virtual columns v = column + shift and every chunk is
// one aligned vector.load: the row's first and last chunks read into the
// rows beside it, and the reductions select away their lanes outside the
// row (vector<4xi1>); only a chunk that may pass the buffer's end (the last
// row's) tests for it and loads lane by lane there. A chunk in the middle
// of every row has no tests. Stores: one aligned vector.store where the
// chunk lies in the row, else lane by lane under each lane's test.
// An operand in another layout (@scaled: a weight per column, w[1025]) is
// read lane by lane in every chunk. A layer norm over 70001 columns
// (@layernorm_long) is too long for one block: a cluster of 8 blocks each
// holds a whole-vector share of the shifted row (the last share ragged);
// streamed (row-chunks=0, and row-shift=true: by default streamed rows
// move single floats) it folds its mean and centered sum of squares
// with a count per lane (uitofp of the lane masks; the row's ends leave
// some lanes fewer columns). Not shifted: a width that takes whole vectors
// (@aligned), and every kernel with row-shift=false (single floats, and no
// cluster: the row's width is no multiple of a cluster's vectors).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0})' -o %t.codegen.mlir
// RUN: FileCheck %s --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0 row-shift=false},fusion-target-cuda)' -o %t.off.mlir
// RUN: %python %S/extract_ptx.py %t.off.mlir > %t.off.ptx
// RUN: FileCheck %s --check-prefix=OFF --input-file=%t.off.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0 row-chunks=0 row-shift=true})' | FileCheck %s --check-prefix=STREAM

// 96 threads, 3 chunks each: the first may be the row's head, the second
// is in the middle, the third may pass the row's (and the buffer's) end.
// CHECK-LABEL: gpu.func @softmax_g0(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x1025xf32>, %[[Y:[^:]*]]: memref<4x1025xf32>
// CHECK: %[[SHIFT:.*]] = arith.remui %block_id_x, %c4 : index
// CHECK: %[[COL0:.*]] = arith.subi %{{.*}}, %[[SHIFT]] : index
// CHECK: %[[WHOLE0:.*]] = arith.andi %{{.*}} : i1
// CHECK: %[[LANES0:.*]] = arith.andi %{{.*}} : vector<4xi1>
// CHECK: %[[COL1:.*]] = arith.subi %{{.*}}, %[[SHIFT]] : index
// CHECK: %[[COL2:.*]] = arith.subi %{{.*}}, %[[SHIFT]] : index
// CHECK: %[[START2:.*]] = arith.addi %{{.*}}, %[[COL2]] : index
// CHECK: %[[INBUF2:.*]] = arith.cmpi sle, %[[START2]], %c4096 : index
// CHECK: %[[LANES2:.*]] = arith.andi %{{.*}} : vector<4xi1>
// The three chunks' loads come first (the last one's under its tests),
// then the max's folds.
// CHECK: %[[V0:.*]] = vector.load %[[X]][%block_id_x, %[[COL0]]] {alignment = 16 : i64}
// CHECK-NEXT: vector.load %[[X]][%block_id_x, %[[COL1]]] {alignment = 16 : i64}
// CHECK-NOT: arith.select
// CHECK: scf.if %[[INBUF2]] -> (vector<4xf32>) {
// CHECK-NEXT: vector.load %[[X]][%block_id_x, %[[COL2]]] {alignment = 16 : i64}
// CHECK: } else {
// CHECK-NEXT: vector.maskedload %[[X]][%block_id_x, %[[COL2]]], %[[LANES2]]
// CHECK-NOT: arith.maximumf
// CHECK: arith.select %[[LANES0]], %[[V0]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: arith.select %[[LANES2]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: scf.if %[[WHOLE0]] {
// CHECK-NEXT: vector.store %{{.*}}, %[[Y]][%block_id_x, %[[COL0]]] {alignment = 16 : i64}
// CHECK: } else {
// CHECK: vector.extract %[[LANES0]][0]
// CHECK: scf.if
// CHECK: memref.store
// CHECK: arith.divf
// CHECK-NEXT: vector.store %{{.*}}, %[[Y]][%block_id_x, %[[COL1]]] {alignment = 16 : i64}
// CHECK-LABEL: gpu.func @scaled_g0(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x1025xf32>, %[[W:[^:]*]]: memref<1025xf32>
// CHECK-NOT: vector.load %[[W]]
// CHECK: vector.load %[[X]]
// CHECK-NOT: vector.load %[[W]]
// CHECK: memref.load %[[W]]
// CHECK-NOT: vector.load %[[W]]
// CHECK-LABEL: gpu.func @layernorm_long_g0(
// CHECK-SAME: known_grid_size = array<i32: 16, 1, 1>, nvvm.cluster_dim = array<i32: 8, 1, 1>
// CHECK-NOT: scf.for
// CHECK: vector.load
// CHECK: gpu.return
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0 row-chunks=0})' | FileCheck %s --check-prefix=AUTO
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-shift=maybe})' 2>&1 | FileCheck %s --check-prefix=BADSHIFT

// By default (row-shift=auto) the streamed layer norm moves single floats:
// a trip of four, no vector.
// AUTO-LABEL: gpu.func @layernorm_long_g0(
// AUTO: scf.for {{.*}} -> (f32, f32, f32)
// AUTO-NOT: vector.load
// AUTO: gpu.return
// BADSHIFT: row-shift must be auto, true or false, got 'maybe'

// STREAM-LABEL: gpu.func @layernorm_long_g0(
// STREAM: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// STREAM: arith.uitofp %{{.*}} : vector<4xi1> to vector<4xf32>
// CHECK-LABEL: gpu.func @aligned_g0(
// CHECK-NOT: vector<4xi1>
// CHECK: gpu.return

// The softmax's three chunks a thread: the two inside the row loaded, then
// the last one under its test (an aligned vector, or the lanes in the row),
// all before the first max, so that the three are in flight together.
// PTX-LABEL: .entry softmax_g0(
// PTX-NOT: max.NaN.f32
// PTX: ld.global.v4.b32
// PTX-NOT: max.NaN.f32
// PTX: ld.global.v4.b32
// PTX-NOT: max.NaN.f32
// PTX: ld.global.v4.b32
// PTX-NOT: max.NaN.f32
// PTX: ld.global.b32
// PTX: max.NaN.f32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry scaled_g0(
// PTX: ld.global.v4.b32
// PTX-LABEL: .entry layernorm_long_g0(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry aligned_g0(
// PTX: ld.global.v4.b32

// OFF-LABEL: .entry softmax_g0(
// OFF-NOT: .v4.
// OFF-LABEL: .entry scaled_g0(
// OFF-NOT: .v4.
// OFF-LABEL: .entry layernorm_long_g0(
// OFF-NOT: .v4.
// OFF-NOT: cluster
// OFF-LABEL: .entry aligned_g0(
// OFF: ld.global.v4.b32

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @softmax(%x: tensor<4x1025xf32>) -> tensor<4x1025xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1025xf32>) outs(%mi : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x1025xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x1025xf32>, tensor<4xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x1025xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x1025xf32>) outs(%si : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x1025xf32>, tensor<4xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x1025xf32>
  return %y : tensor<4x1025xf32>
}

// x - mean(x), times a weight per column
func.func @scaled(%x: tensor<4x1025xf32>, %w: tensor<1025xf32>) -> tensor<4x1025xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 1025.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1025xf32>) outs(%si : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x1025xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %w : tensor<4x1025xf32>, tensor<4xf32>, tensor<1025xf32>) outs(%ee : tensor<4x1025xf32>) {
  ^bb0(%a: f32, %b: f32, %ww: f32, %o: f32):
    %m = arith.divf %b, %n : f32
    %d = arith.subf %a, %m : f32
    %r = arith.mulf %d, %ww : f32
    linalg.yield %r : f32
  } -> tensor<4x1025xf32>
  return %y : tensor<4x1025xf32>
}

func.func @layernorm_long(%x: tensor<2x70001xf32>) -> tensor<2x70001xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 70001.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x70001xf32>) outs(%si : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %ed = tensor.empty() : tensor<2x70001xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<2x70001xf32>, tensor<2xf32>) outs(%ed : tensor<2x70001xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.divf %b, %n : f32
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x70001xf32>
  %vi = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %v = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<2x70001xf32>) outs(%vi : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %a, %a : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %v : tensor<2x70001xf32>, tensor<2xf32>) outs(%ed : tensor<2x70001xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %var = arith.divf %b, %n : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %r = arith.mulf %a, %rs : f32
    linalg.yield %r : f32
  } -> tensor<2x70001xf32>
  return %y : tensor<2x70001xf32>
}

func.func @aligned(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1024xf32>) outs(%si : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x1024xf32>, tensor<4xf32>) outs(%ee : tensor<4x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x1024xf32>
  return %y : tensor<4x1024xf32>
}
