// REQUIRES: ptxas
//
// Streaming row kernels (row-chunks=0 streams every row; by default rows too
// long for one block's registers stream, and so does a group that one pass
// serves: every reduction folds in one pass and no row-wide result is
// stored, so registers would save no read) fold their reductions in
// passes: one column loop per pass, 4 vectors per thread and trip (8, one
// trip, where that is the whole row; the last trip masked), for every
// reduction whose inputs are ready when it starts.
// With fast numerics a max `m` and the sum of exp(e - m) over the same `e`
// share a pass ("online"): the sum is kept relative to the running max and
// rescaled by exp(old - new) as the max grows. Softmax cross-entropy (max,
// sum of exp) then reads each row once; the label's logit, written as a sum
// of the one column equal to the label, is read alone (a gather: see
// fusion-picks-as-gathers), after the row's sums.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-chunks=0})' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-chunks=0 numerics=strict})' | FileCheck %s --check-prefix=STRICT
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=DEFAULT
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{numerics=strict})' | FileCheck %s --check-prefix=REGS
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-chunks=0},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-chunks=-1})' 2>&1 | FileCheck %s --check-prefix=BAD

// In PTX, the 8 loads of the trip are issued together; LLVM proves the
// first 7 in the row (a thread's first column is at most 124), so only the
// last branches over its load (the threads from 26 on: columns from 1000).
// PTX-LABEL: .entry xent_g0(
// PTX-COUNT-7: ld.global.v4.b32
// PTX-NOT: fma
// PTX: @%p{{[0-9]+}} bra
// PTX-NEXT: ld.global.v4.b32 {{.*}}+3584]
// PTX-NEXT: $L__

// BAD: fusion-codegen-cuda: row-chunks must be >= 0 (0: stream rows), got -1

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>

// 1000 columns at 32 threads x 4 floats: 8 vectors a thread, all in one
// trip (a row that takes a thread at most 8 vectors loads them at once;
// longer ones 4 per trip), masked: a vector that may lie past the row's
// end loads under its test (nothing past it: zeros, which its folds select
// away), every vector of the trip loaded before the first fold.
// (the label, addressed by the row alone, is loaded once before the loop)
// CHECK-LABEL: gpu.func @xent_g0(
// CHECK-SAME: %[[LABELS:[^:]*]]: memref<256xi64>, %[[LOGITS:[^:]*]]: memref<256x1000xf32>
// CHECK: memref.load %[[LABELS]][%block_id_x]
// The label's logit: one load, before the loop (its latency hidden behind
// the loop's), at column 999 where the label is outside the row (its term
// then 0, as in the sum).
// CHECK: %[[L:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT: %[[AT:.*]] = arith.minui %[[L]], %c999 : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[LOGITS]][%block_id_x, %[[AT]]]
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %{{.*}} to %c1000 step %c1024 iter_args(%[[M:.*]] = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (vector<4xf32>, vector<4xf32>)
// CHECK: arith.cmpi ult
// CHECK: %[[X0:.*]] = vector.load %[[LOGITS]][%{{.*}}, %[[C]]]
// CHECK-NEXT: %[[X1:.*]] = scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: vector.load %[[LOGITS]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.*}} : vector<4xf32>
// CHECK-COUNT-6: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK-NOT: scf.if
// CHECK: arith.maximumf %[[X0]], %[[M]]
// CHECK-NEXT: arith.maximumf %[[X1]]
// CHECK: %[[SAME:.*]] = arith.cmpf oeq, %[[M]], %[[MNEW:[^ ]*]] : vector<4xf32>
// The rescale and the terms' exps (8, one a vector) may flush subnormal
// results (kfuse.ftz: ex2.approx.ftz): the sum holds its max's term 1.
// CHECK: %[[D:.*]] = arith.subf %[[M]], %[[MNEW]]
// CHECK: %[[E:.*]] = math.exp %[[D]] fastmath<contract,afn> {kfuse.ftz}
// CHECK: %[[SCALE:.*]] = arith.select %[[SAME]], %{{.*}}, %[[E]]
// CHECK: arith.mulf %[[S]], %[[SCALE]]
// CHECK: arith.cmpf oeq, %[[MNEW]], %{{.*}} : vector<4xf32>
// CHECK: %[[REF:.*]] = arith.select {{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: arith.subf %[[X0]], %[[REF]]
// CHECK-COUNT-8: math.exp %{{.*}} {kfuse.ftz} : vector<4xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: arith.cmpi eq
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: %[[MT:.*]] = arith.maximumf %{{.*}}, %shuffleResult
// The sums' lanes rescaled to the row's max before they are added up
// (a correctly rounded exp, once a row, kept as it is).
// CHECK: arith.subf %[[LOOP]]#0
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK: arith.mulf %[[LOOP]]#1
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK-NOT: gpu.shuffle
// The finish, r = the max here: a row whose max is -inf gets NaN (as
// exp(-inf - -inf) in every term), one whose max is +inf exp(+inf - r).
// CHECK: arith.cmpf one, %[[MT]], %[[NINF:[^ ]*]] : f32
// CHECK-NEXT: %[[NONE:.*]] = arith.select
// CHECK-NEXT: arith.cmpf oeq, %[[MT]], %[[NINF]] : f32
// CHECK-NEXT: %[[LOW:.*]] = arith.select %{{.*}}, %[[NONE]], %{{.*}} : f32
// CHECK-NEXT: arith.cmpf oeq, %[[MT]], %{{.*}} : f32
// CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %[[LOW]] : f32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[L]], %c1000 : index
// CHECK-NEXT: arith.select %[[IN]], %[[X]], %{{.*}} : f32
// CHECK-NOT: scf.for
// CHECK: gpu.return
//
// Strict numerics: the sum waits for the finished max (a second pass).
// STRICT-LABEL: gpu.func @xent_g0(
// STRICT: scf.for {{.*}} -> (vector<4xf32>) {
// STRICT: gpu.shuffle xor %{{.*}}, %c16_i32
// STRICT-NEXT: arith.maximumf %{{.*}}, %shuffleResult
// STRICT: scf.for {{.*}} -> (vector<4xf32>)
// STRICT: gpu.shuffle xor %{{.*}}, %c16_i32
// STRICT-NEXT: arith.addf %{{.*}}, %shuffleResult
//
// By default cross-entropy streams: its one pass reads the row once, as
// registers would, with fewer registers per thread (one warp per row here,
// one trip of 8 vectors per thread, as with row-chunks=0).
// DEFAULT-LABEL: gpu.func @xent_g0(
// DEFAULT: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>)
// DEFAULT-NOT: scf.for
// DEFAULT: gpu.return
// The softmax and the sums below need their rows twice: registers.
// DEFAULT-LABEL: gpu.func @softmax_g0(
// DEFAULT-NOT: scf.for
// DEFAULT: gpu.return
// DEFAULT-LABEL: gpu.func @not_online_g0(
// DEFAULT-NOT: scf.for
// DEFAULT: gpu.return
//
// With strict numerics the sum waits for the max: two passes, so the row
// stays in registers.
// REGS-LABEL: gpu.func @xent_g0(
// REGS-NOT: scf.for
// REGS: gpu.return
func.func @xent(%x: tensor<256x1000xf32>, %labels: tensor<256xi64>) -> tensor<256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x1000xf32>) outs(%m0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<256x1000xf32>, tensor<256xf32>) outs(%s0 : tensor<256xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<256x1000xf32>, tensor<256xi64>) outs(%p0 : tensor<256xf32>) {
  ^bb0(%in: f32, %lab: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %hit, %in, %zero : f32
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %loss = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%s, %m, %picked : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e1 : tensor<256xf32>) {
  ^bb0(%sum: f32, %mx: f32, %pk: f32, %o: f32):
    %l = math.log %sum : f32
    %a = arith.addf %l, %mx : f32
    %r = arith.subf %a, %pk : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  return %loss : tensor<256xf32>
}

// A softmax over rows of 4096 with the shift as its own op (x - m stored by
// one generic, exp by another, as torch-mlir writes it): the sum still
// joins the max's pass; the output loop recomputes exp(x - m) with the
// finished max.
// CHECK-LABEL: gpu.func @softmax_g0(
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.maximumf %{{.*}}, %shuffleResult
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK: scf.for
// CHECK: vector.store
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @softmax(%x: tensor<8x4096xf32>) -> tensor<8x4096xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x4096xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x4096xf32>, tensor<8xf32>) outs(%e2 : tensor<8x4096xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %v = arith.subf %in, %mx : f32
    linalg.yield %v : f32
  } -> tensor<8x4096xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x4096xf32>) outs(%e2 : tensor<8x4096xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4096xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<8x4096xf32>) outs(%s0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<8x4096xf32>, tensor<8xf32>) outs(%e2 : tensor<8x4096xf32>) {
  ^bb0(%in: f32, %sum: f32, %o: f32):
    %v = arith.divf %in, %sum : f32
    linalg.yield %v : f32
  } -> tensor<8x4096xf32>
  return %y : tensor<8x4096xf32>
}

// torch's logsumexp subtracts r = isinf(m) ? 0 : m, computed in the sum's
// body: the pass still folds exp(x - m') against the running max m' (the
// guard is not evaluated in the loop), and the finish computes r from the
// row's max and rescales the sum by exp(M - r). One pass, x read once.
// CHECK-LABEL: gpu.func @lse_guarded_g0(
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK-NOT: math.absf
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: math.absf %[[GM:[^ ]*]] fastmath
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[GM]] : f32
// CHECK: arith.subf %[[GM]], %[[R]]
// CHECK: math.exp
// CHECK-NOT: scf.for
// CHECK: math.log
// CHECK: gpu.return
// STRICT-LABEL: gpu.func @lse_guarded_g0(
// STRICT: scf.for {{.*}} -> (vector<4xf32>)
// STRICT: scf.for {{.*}} -> (vector<4xf32>)
func.func @lse_guarded(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%i : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%m : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %abs = math.absf %a : f32
    %isinf = arith.cmpf oeq, %abs, %inf : f32
    %v = arith.select %isinf, %zero, %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %r : tensor<8x4096xf32>, tensor<8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %d = arith.subf %a, %q : f32
    %x1 = math.exp %d : f32
    %v = arith.addf %x1, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %lse = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%sum, %r : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%s: f32, %q: f32, %o: f32):
    %l = math.log %s : f32
    %v = arith.addf %l, %q : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %lse : tensor<8xf32>
}

// Not online: the sum reads the max again (exp(x - m) * m), and the max of
// a different value (exp(y - max(x)) could overflow where the two-pass sum
// does not). Each sum waits for a second pass. Independent reductions
// (sum(x) and sum(x * x) below) still share one.
// CHECK-LABEL: gpu.func @not_online_g0(
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.maximumf %{{.*}}, %shuffleResult
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf %{{.*}}, %shuffleResult
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @not_online(%x: tensor<8x4096xf32>, %y: tensor<8x4096xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %sx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %sxx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %q = arith.mulf %in, %in : f32
    %v = arith.addf %q, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<8x4096xf32>, tensor<8xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %e2 = arith.mulf %e, %mx : f32
    %v = arith.addf %e2, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y, %m : tensor<8x4096xf32>, tensor<8xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %sx, %sxx, %s1, %s2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// A variance (the sum of squared deviations from the mean the same pass
// computes) folds in the pass that computes the mean: each lane keeps its
// running mean and centered sum of squares M2 of x - x[row, 0] (the shift,
// loaded once before the loop, keeps the running mean small), merging each
// trip's into them (delta = trip mean - mean, M2 += trip M2 + delta^2 n k /
// (n + k)); after the loop the lanes and threads combine as sum(n mean) and
// sum(M2 + n (mean_l - mean)^2), and v = M2 + n (mean - q)^2 once q, the
// mean, is known. One loop, three accumulators (sum, mean, M2), each row
// read once; strict numerics keep the two passes. `not_centered` squares
// x - q + 1, not e - q: two passes.
// CHECK-LABEL: gpu.func @rowvar_g0(
// CHECK: vector.load %arg0
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: arith.divf {{.*}} : f32
// CHECK: scf.yield
// CHECK-NOT: scf.for
// CHECK: gpu.return
// STRICT-LABEL: gpu.func @rowvar_g0(
// STRICT: scf.for
// STRICT: scf.for
// STRICT: gpu.return
// CHECK-LABEL: gpu.func @not_centered_g0(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.return
func.func @rowvar(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4096.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %s : tensor<8x4096xf32>, tensor<8xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %sum: f32, %acc: f32):
    %m = arith.divf %sum, %n : f32
    %d = arith.subf %in, %m : f32
    %q = arith.mulf %d, %d : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %v : tensor<8xf32>
}

func.func @not_centered(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 4096.0 : f32
  %e1 = tensor.empty() : tensor<8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %s : tensor<8x4096xf32>, tensor<8xf32>) outs(%z0 : tensor<8xf32>) {
  ^bb0(%in: f32, %sum: f32, %acc: f32):
    %m = arith.divf %sum, %n : f32
    %d = arith.subf %in, %m : f32
    %d1 = arith.addf %d, %one : f32
    %q = arith.mulf %d1, %d1 : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %v : tensor<8xf32>
}
