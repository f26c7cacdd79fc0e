// REQUIRES: ptxas
//
// A long row that no good number of slices divides (a prime length) is
// split anyway: equal slices of a multiple of 8 columns from the row's
// start (subviews of the row, viewed as [slices, len]) and a tail of the
// rest, reduced by one more block a row into a partial of its own. The
// tail's blocks run as the last blocks of the partials kernel (the code of
// both under a test of the block id), count in their rows' counters like
// the slices' (the counter wraps at slices, not slices - 1), and the last
// block to count folds the slices' partials, then the tail's. 1000003
// floats: 244 slices of 4096 and a tail of 579 (columns 999424 on), 245
// blocks; 7 rows of 100003: 24 slices of 4160 and a tail of 163 a row,
// 7 x 24 + 7 blocks, whose rows start off vector boundaries (shifted
// chunks over the views' strides, with row-shift=true: the slices stream
// in one pass, which by default moves single floats). A stored result (x / |x|) is stored by one more
// kernel, over pieces of the slices (488 of 2048 floats, blocks of 256
// threads) and the tail alike. Along rows (x.sum(0) over a
// prime count of rows) rows / ceil(rows / most) slices take rows / slices
// rows each and the tail the rest: x[100003, 256] in 526 slices of 190
// rows and a tail of 63,
// a thread per slice and column, the tail's 256 threads the partials
// kernel's last block (527 blocks instead of 32). `row-split-tail=0`
// leaves such rows unsplit; `row-last-block=0` keeps the finish a kernel of its own,
// the tails still merged into the partials kernel.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-shift=true})' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-shift=true})' | FileCheck %s --check-prefix=KERN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-shift=true},fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-split-tail=0})' | FileCheck %s --check-prefix=NOTAIL
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-smem=0 row-last-block=0})' | FileCheck %s --check-prefix=TWO

// CHECK-LABEL: func.func @l2(
// CHECK-SAME: %[[X:[^:]*]]: memref<1000003xf32>
// CHECK: %[[TAILP:.*]] = memref.alloc() : memref<1xf32>
// CHECK: %[[TAIL:.*]] = memref.subview %[[X]][999424] [579] [1] : memref<1000003xf32> to memref<579xf32, strided<[1], offset: 999424>>
// CHECK: %[[TAILV:.*]] = memref.expand_shape %[[TAIL]] {{\[\[}}0, 1]] output_shape [1, 579]
// CHECK: %[[P:.*]] = memref.alloc() : memref<244xf32>
// CHECK: %[[MAIN:.*]] = memref.subview %[[X]][0] [999424] [1]
// CHECK: %[[MAINV:.*]] = memref.expand_shape %[[MAIN]] {{\[\[}}0, 1]] output_shape [244, 4096] {{.*}} into memref<244x4096xf32>
// CHECK: %[[COUNT:.*]] = memref.alloc() {kfuse.counter} : memref<1xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@l2_g0 blocks in (%c245, %c1, %c1)
// CHECK-SAME: args(%[[MAINV]] : memref<244x4096xf32>, %[[P]] : memref<244xf32>, %[[TAILV]] : memref<1x579xf32, strided<[579, 1], offset: 999424>>, %[[TAILP]] : memref<1xf32>, %[[COUNT]] : memref<1xi32>
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @rows(
// CHECK: memref.subview %{{.*}}[0, 99840] [7, 163] [1, 1] : memref<7x100003xf32> to memref<7x163xf32, strided<[100003, 1], offset: 99840>>
// CHECK: memref.alloc() : memref<7x24xf32>
// CHECK: memref.subview %{{.*}}[0, 0] [7, 99840] [1, 1]
// CHECK: memref.expand_shape {{.*}} into memref<7x24x4160xf32, strided<[100003, 4160, 1]>>
// CHECK: memref.alloc() {kfuse.counter} : memref<7xi32>
// CHECK: gpu.launch_func @kfuse_kernels::@rows_g0 blocks in (%c175, %c1, %c1)
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @normalize(
// CHECK-SAME: %[[NX:[^:]*]]: memref<1000003xf32>, %[[NY:[^:]*]]: memref<1000003xf32>
// CHECK: gpu.launch_func @kfuse_kernels::@normalize_g0 blocks in (%c245, %c1, %c1)
// CHECK: memref.subview %[[NY]][999424] [579] [1]
// CHECK: memref.subview %[[NY]][0] [999424] [1]
// CHECK: gpu.launch_func @kfuse_kernels::@normalize_g0_store blocks in (%c489, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: func.func @colsum(
// CHECK-SAME: %[[CX:[^:]*]]: memref<100003x256xf32>
// CHECK: %[[CTP:.*]] = memref.alloc() : memref<1x256xf32>
// CHECK: %[[CT:.*]] = memref.subview %[[CX]][99940, 0] [63, 256] [1, 1] : memref<100003x256xf32> to memref<63x256xf32, strided<[256, 1], offset: 25584640>>
// CHECK: %[[CTV:.*]] = memref.expand_shape %[[CT]] {{\[\[}}0, 1], [2]] output_shape [1, 63, 256]
// CHECK: %[[CP:.*]] = memref.alloc() : memref<526x256xf32>
// CHECK: %[[CM:.*]] = memref.subview %[[CX]][0, 0] [99940, 256] [1, 1]
// CHECK: %[[CMV:.*]] = memref.expand_shape %[[CM]] {{\[\[}}0, 1], [2]] output_shape [526, 190, 256]
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_g0_partial blocks in (%c527, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-SAME: args(%[[CMV]] : memref<526x190x256xf32, strided<[48640, 256, 1]>>, %[[CP]] : memref<526x256xf32>, %[[CTV]] : {{.*}}, %[[CTP]] : memref<1x256xf32>)
// CHECK: gpu.launch_func @kfuse_kernels::@colsum_g0 blocks
// CHECK-SAME: args(%[[CTP]] : memref<1x256xf32>, %[[CP]] : memref<526x256xf32>,
// CHECK-NOT: gpu.launch_func

// The slices' blocks, then the tail's (block id - 244), then the count:
// the counter wraps at 244 (245 blocks), the last block folds the 244
// partials and adds the tail's.
// KERN-LABEL: gpu.func @l2_g0(
// KERN: %[[B:.*]] = gpu.block_id x
// KERN: %[[MINE:.*]] = arith.cmpi ult, %[[B]], %c244 : index
// KERN: scf.if %[[MINE]] {
// KERN: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<244x4096xf32>, vector<4xf32>
// KERN: } else {
// KERN: arith.subi %[[B]], %c244 : index
// KERN: vector.load %arg2[{{.*}}] {alignment = 16 : i64} : memref<1x579xf32, strided<[579, 1], offset: 999424>>
// KERN: vector.maskedload %arg2[{{.*}}], {{.*}} : memref<1x579xf32, strided<[579, 1], offset: 999424>>, vector<4xi1>
// KERN: }
// KERN: arith.select
// KERN: atom.relaxed.gpu.global.inc.u32
// KERN-SAME: %c244_i32
// KERN: scf.if
// KERN: memref.load %arg3[%c0] : memref<1xf32>
// KERN: math.sqrt
// KERN: gpu.return
// (7 rows of 100003: the slices' rows start off 16-byte boundaries, at
// r * 100003 + s * 4160 in the view, so their chunks shift: one aligned
// vector a chunk, the shift (r * 3) mod 4 from the view's strides, a
// chunk lane by lane only where it would pass the view's last element,
// 699857 (the tail's view, from 99840: 600180))
// KERN-LABEL: gpu.func @rows_g0(
// KERN: %[[RB:.*]] = arith.cmpi ult, %{{.*}}, %c168 : index
// KERN: scf.if %[[RB]] {
// KERN: %[[R:.*]] = arith.divui %{{.*}}, %c24 : index
// KERN: %[[R3:.*]] = arith.muli %[[R]], %c3 : index
// KERN: arith.remui %[[R3]], %c4 : index
// KERN: arith.cmpi sle, %{{.*}}, %c699854 : index
// KERN: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<7x24x4160xf32, strided<[100003, 4160, 1]>>, vector<4xf32>
// KERN: arith.cmpi sle, %{{.*}}, %c600177 : index
// KERN: vector.load %arg2[{{.*}}] {alignment = 16 : i64} : memref<7x1x163xf32, strided<[100003, 163, 1], offset: 99840>>, vector<4xf32>
// (the store of x / |x| vectors as the loads: 4 floats at a time over
// the slices, one by one over the tail of an odd width)
// KERN-LABEL: gpu.func @normalize_g0_store(
// KERN: vector.store {{.*}} {alignment = 16 : i64} : memref<488x2048xf32>, vector<4xf32>
// KERN: } else {
// KERN: memref.store {{.*}} : memref<1x579xf32, strided<[579, 1], offset: 999424>>
// (along rows: a thread per slice and column over 190 rows, 16 a trip,
// the trips wholly in the rows untested, up to 190 - 15, then the last one
// tested; the tail's block over 63, 32 a trip: its two trips unrolled, the
// first untested, the second loading rows 32 to 62)
// KERN-LABEL: gpu.func @colsum_g0_partial(
// KERN: arith.cmpi ult, %{{.*}}, %c526 : index
// KERN: scf.for %{{.*}} = %c0 to %c175 step %c16
// KERN: } else {
// KERN: arith.subi %{{.*}}, %c526 : index
// KERN-NOT: scf.for
// KERN: memref.load %arg2[%{{.*}}, %c62, %{{.*}}]
// KERN-NOT: memref.load %arg2[%{{.*}}, %c63, %{{.*}}]
// KERN: memref.store {{.*}} : memref<1x256xf32>

// The tail's loads at its offset: 999424 floats, 3997696 bytes.
// PTX: .entry l2_g0(
// PTX: ld.global.v4.b32
// PTX: 3997696
// PTX: .entry rows_g0(
// PTX: ld.global.v4.b32

// NOTAIL-LABEL: func.func @l2(
// NOTAIL-NOT: kfuse.counter
// NOTAIL: gpu.launch_func @kfuse_kernels::@l2_g0 blocks in (%c1, %c1, %c1)
// NOTAIL-LABEL: func.func @rows(
// NOTAIL: gpu.launch_func @kfuse_kernels::@rows_g0 blocks in (%c7, %c1, %c1)
// NOTAIL-LABEL: func.func @colsum(
// NOTAIL: gpu.launch_func @kfuse_kernels::@colsum_g0 blocks in (%c32, %c1, %c1)

// TWO-LABEL: func.func @l2(
// TWO-NOT: kfuse.counter
// TWO: gpu.launch_func @kfuse_kernels::@l2_g0_partial blocks in (%c245, %c1, %c1)
// TWO: gpu.launch_func @kfuse_kernels::@l2_g0 blocks in (%c1, %c1, %c1)

func.func @l2(%x: tensor<1000003xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
       iterator_types = ["reduction"]}
       ins(%x : tensor<1000003xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %o = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
       iterator_types = []}
       ins(%r : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %q = math.sqrt %a : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  return %o : tensor<f32>
}

func.func @rows(%x: tensor<7x100003xf32>) -> tensor<7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<7xf32>) -> tensor<7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
       iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<7x100003xf32>) outs(%f : tensor<7xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<7xf32>
  return %r : tensor<7xf32>
}
func.func @normalize(%x: tensor<1000003xf32>) -> tensor<1000003xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
       iterator_types = ["reduction"]}
       ins(%x : tensor<1000003xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %ey = tensor.empty() : tensor<1000003xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
       iterator_types = ["parallel"]}
       ins(%x, %r : tensor<1000003xf32>, tensor<f32>) outs(%ey : tensor<1000003xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = math.sqrt %s : f32
    %d = arith.divf %a, %q : f32
    linalg.yield %d : f32
  } -> tensor<1000003xf32>
  return %y : tensor<1000003xf32>
}

func.func @colsum(%x: tensor<100003x256xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
       iterator_types = ["reduction", "parallel"]}
       ins(%x : tensor<100003x256xf32>) outs(%f : tensor<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}
