// REQUIRES: ptxas
//
// row-trip: the chunks each thread of a streamed row (a block per row)
// loads per trip of its column loop. By default 4 (every chunk of a share
// of at most 8 in one trip); a chunk is a 16-byte vector where rows start
// on one and a single element where they do not, so rows of an odd width
// keep 4 floats a thread in flight where aligned ones keep 64 bytes:
// row-trip=16 asks for as many bytes. Cross-entropy over rows of 5001
// floats (one pass serves it: streamed, single floats, 320 threads a row).
// The trips do not divide the row: those whose chunks all lie in it run
// untested, up to 5001 - (k - 1) x 320, then the rest (one trip at most)
// tests its chunks (row-peel, default true; false: every trip tests them).
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=DEFAULT
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-trip=8})' | FileCheck %s --check-prefix=PEEL8
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-trip=8 row-peel=false})' | FileCheck %s --check-prefix=TRIP8
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-trip=32})' | FileCheck %s --check-prefix=WHOLE
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-trip=8 row-peel=false},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-trip=8},fusion-target-cuda)' -o %t.peel.mlir
// RUN: %python %S/extract_ptx.py %t.peel.mlir > %t.peel.ptx
// RUN: %ptxas -arch=sm_90 %t.peel.ptx -o %t.peel.cubin
// RUN: FileCheck %s --check-prefix=PEELPTX < %t.peel.ptx
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-trip=33})' 2>&1 | FileCheck %s --check-prefix=BAD

// 4 a trip: the untested trips up to 5001 - 3 x 320, four loads each,
// then the rest from the first column past them.
// DEFAULT-LABEL: gpu.func @xent_g0(
// DEFAULT-SAME: %[[LOGITS:[^:]*]]: memref<256x5001xf32>
// DEFAULT-SAME: known_block_size = array<i32: 320, 1, 1>
// DEFAULT: %[[MAIN:.*]]:2 = scf.for %[[C:.*]] = %thread_id_x to %c4041 step %c1280 iter_args
// DEFAULT-NOT: scf.if
// DEFAULT: memref.load %[[LOGITS]][%block_id_x, %[[C]]]
// DEFAULT-COUNT-3: memref.load %[[LOGITS]]
// DEFAULT-NOT: memref.load %[[LOGITS]]
// DEFAULT: scf.yield
// DEFAULT: %[[PAST:.*]] = arith.maxui %thread_id_x, %c4041
// DEFAULT: %[[SPAN:.*]] = arith.subi %[[PAST]], %thread_id_x
// DEFAULT: %[[NTRIPS:.*]] = arith.ceildivui %[[SPAN]], %c1280
// DEFAULT: scf.for %{{.*}} = %{{.*}} to %c5001 step %c1280 iter_args(%{{.*}} = %[[MAIN]]#0, %{{.*}} = %[[MAIN]]#1)
// DEFAULT: memref.load %[[LOGITS]]
// DEFAULT-NEXT: scf.if %{{.*}} -> (f32) {
// DEFAULT-COUNT-3: memref.load %[[LOGITS]]
// DEFAULT-NOT: memref.load %[[LOGITS]]
// DEFAULT: scf.yield

// PEEL8-LABEL: gpu.func @xent_g0(
// PEEL8-SAME: %[[LOGITS:[^:]*]]: memref<256x5001xf32>
// PEEL8: scf.for %[[C:.*]] = %thread_id_x to %c2761 step %c2560 iter_args
// PEEL8-NOT: scf.if
// PEEL8-COUNT-8: memref.load %[[LOGITS]]
// PEEL8-NOT: scf.if
// PEEL8: scf.yield
// PEEL8: scf.for %{{.*}} to %c5001 step %c2560 iter_args
// PEEL8: memref.load %[[LOGITS]]
// PEEL8-NEXT: scf.if %{{.*}} -> (f32) {
// PEEL8-COUNT-7: memref.load %[[LOGITS]][%block_id_x, %{{[0-9]+}}]

// 8 a trip, every trip tested: the first column of each trip lies in the
// row, the 7 after it load under their test (a column past the row's end
// reads column 0, and its fold selects the neutral value).
// TRIP8-LABEL: gpu.func @xent_g0(
// TRIP8-SAME: %[[LOGITS:[^:]*]]: memref<256x5001xf32>
// TRIP8: scf.for %[[C:.*]] = %thread_id_x to %c5001 step %c2560 iter_args
// TRIP8: memref.load %[[LOGITS]][%block_id_x, %[[C]]]
// TRIP8-NEXT: scf.if %{{.*}} -> (f32) {
// TRIP8-COUNT-7: memref.load %[[LOGITS]][%block_id_x, %{{[0-9]+}}]
// TRIP8-NOT: memref.load %[[LOGITS]]
// TRIP8: scf.yield %{{.*}}, %{{.*}} : f32, f32

// More than the row holds: one trip of the 16 chunks a thread's share of
// the row takes (320 threads x 16 columns), tested: each thread's only trip
// is its last (untested in the threads whose 16 columns all lie in the row,
// the warp the bound passes through would run the trip both ways).
// WHOLE: scf.for %{{.*}} = %thread_id_x to %c5001 step %c5120 iter_args
// WHOLE-NOT: scf.for
// WHOLE: gpu.return

// In PTX (every trip tested), the trip's 8 loads are issued before the
// first fold, 320 floats (1280 bytes) apart; LLVM proves the first 7 in the
// row (a thread's first column is at most 2560 + 319), so only the last
// branches over its load.
// PTX-LABEL: .entry xent_g0(
// (the label's logit, loaded before the loop)
// PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+-5120];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+-?[0-9]+)?}}];
// PTX-NOT: ld.global
// PTX: max.NaN.f32
// PTX: @%p{{[0-9]+}} bra
// PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+3840];
// PTX-NOT: ld.global

// Peeled, the untested loop's 8 loads branch over nothing: its body has no
// predicated branch before its back edge. The running sum's rescale to the
// trip's new max is an ex2.approx like the terms' exps (9 a trip), not a
// correctly rounded exp (its range reduction rounds down: fma.rm); all 9
// flush subnormal results (.ftz: the sum holds its max's term 1).
// PEELPTX-LABEL: .entry xent_g0(
// PEELPTX: $L__BB0_[[LOOP:[0-9]+]]:
// PEELPTX-COUNT-8: ld.global.b32
// PEELPTX-COUNT-9: ex2.approx.ftz.f32
// PEELPTX-NOT: @%p{{[0-9]+}} bra
// PEELPTX-NOT: fma.rm
// PEELPTX: @%p{{[0-9]+}} bra $L__BB0_[[LOOP]];

// BAD: fusion-codegen-cuda: row-trip must be 0 to 32, got 33

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>

func.func @xent(%x: tensor<256x5001xf32>, %labels: tensor<256xi64>) -> tensor<256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x5001xf32>) outs(%m0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<256x5001xf32>, tensor<256xf32>) outs(%s0 : tensor<256xf32>) {
  ^bb0(%in: f32, %mx: f32, %acc: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    %v = arith.addf %e, %acc : f32
    linalg.yield %v : f32
  } -> tensor<256xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<256x5001xf32>, tensor<256xi64>) outs(%p0 : tensor<256xf32>) {
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
