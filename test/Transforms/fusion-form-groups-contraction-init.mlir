// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s
// The pass alone, after generalizing the named ops, decides the same.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,fusion-form-groups))' \
// RUN:   | FileCheck %s --check-prefix=PASS
// With no-fusion=1, every op is a group of its own: the accumulator's
// producer too.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{no-fusion=1})' \
// RUN:   | FileCheck %s --check-prefix=NOFUSION

// A contraction's accumulator (its outs operand) may start from an
// elementwise value over its output space instead of a fill: PyTorch's
// convolution and linear layers broadcast the bias into the output and
// accumulate onto it. When that producer is used only as the accumulator,
// runs over the contraction's output space and writes it through the
// identity map, and the contraction writes its output at its parallel loops
// in order, the producer (with the group it belongs to) joins the
// contraction's group: the bias vector becomes a group input and the
// broadcast tensor is never written to memory. A producer with another use,
// one marked fusion.materialize, one whose group holds a contraction, or an
// accumulator written through a transposed map keeps a group of its own. A
// fill is cloned into the group as before.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

// matmul accumulating onto bias broadcast over the rows: one "contraction"
// group that reads the bias vector, a and b; the broadcast runs inside it
// and initializes the matmul.
// CHECK-LABEL: func.func @matmul_bias_init
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>, %[[BIAS:[^:]*]]: tensor<128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[BIAS]], %[[A]], %[[B]] : tensor<128xf32>, tensor<64x32xf32>, tensor<32x128xf32>) {
// CHECK-NEXT: ^bb0(%[[BIASA:[^:]*]]: tensor<128xf32>, %[[AA:[^:]*]]: tensor<64x32xf32>, %[[BA:[^:]*]]: tensor<32x128xf32>):
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[BIASA]] : tensor<128xf32>) outs(%{{.*}} : tensor<64x128xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<64x32xf32>, tensor<32x128xf32>) outs(%[[INIT]] : tensor<64x128xf32>)
// CHECK: fusion.yield %[[M]] : tensor<64x128xf32>
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G]] : tensor<64x128xf32>
// PASS-LABEL: func.func @matmul_bias_init
// PASS-COUNT-1: fusion.group "g0" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<128xf32>, tensor<64x32xf32>, tensor<32x128xf32>)
// PASS-NOT: fusion.group
// PASS: return
// NOFUSION-LABEL: func.func @matmul_bias_init
// NOFUSION: fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<128xf32>)
// NOFUSION: fusion.group "g1" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x128xf32>, tensor<64x128xf32>)
// NOFUSION-NOT: fusion.group
// NOFUSION: return
func.func @matmul_bias_init(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// conv_2d_nchw_fchw accumulating onto the per-channel bias broadcast over
// (n, c, h, w) -> (c): the generalized convolution (7 loops, 4 parallel)
// and the broadcast form one group; the bias vector is a group input.
// CHECK-LABEL: func.func @conv_bias_init
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x10x10xf32>, %[[W:[^:]*]]: tensor<8x3x3x3xf32>, %[[BIAS:[^:]*]]: tensor<8xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[BIAS]], %[[X]], %[[W]] : tensor<8xf32>, tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) {
// CHECK-NEXT: ^bb0(%[[BIASA:[^:]*]]: tensor<8xf32>, %[[XA:[^:]*]]: tensor<2x3x10x10xf32>, %[[WA:[^:]*]]: tensor<8x3x3x3xf32>):
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[BIASA]] : tensor<8xf32>) outs(%{{.*}} : tensor<2x8x8x8xf32>)
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XA]], %[[WA]] : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%[[INIT]] : tensor<2x8x8x8xf32>)
// CHECK: fusion.yield %[[C]] : tensor<2x8x8x8xf32>
// CHECK-NEXT: } -> tensor<2x8x8x8xf32>
// CHECK-NEXT: return %[[G]] : tensor<2x8x8x8xf32>
// PASS-LABEL: func.func @conv_bias_init
// PASS-COUNT-1: fusion.group "g0" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>)
// PASS-NOT: fusion.group
// PASS: return
// NOFUSION-LABEL: func.func @conv_bias_init
// NOFUSION: fusion.group "g0" "elementwise"
// NOFUSION: fusion.group "g1" "contraction"
func.func @conv_bias_init(%x: tensor<2x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>) -> tensor<2x8x8x8xf32> {
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %init = linalg.generic {indexing_maps = [#chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%bv: f32, %out: f32):
    linalg.yield %bv : f32
  } -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %c : tensor<2x8x8x8xf32>
}

// The accumulator is bias broadcast + a residual: one elementwise op (the
// broadcast folds into it) that joins the matmul's group.
// CHECK-LABEL: func.func @init_chain
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>, %[[BIAS:[^:]*]]: tensor<128xf32>, %[[RES:[^:]*]]: tensor<64x128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[BIAS]], %[[RES]], %[[A]], %[[B]] : tensor<128xf32>, tensor<64x128xf32>, tensor<64x32xf32>, tensor<32x128xf32>) {
// CHECK-NEXT: ^bb0(%[[BIASA:[^:]*]]: tensor<128xf32>, %[[RESA:[^:]*]]: tensor<64x128xf32>, %[[AA:[^:]*]]: tensor<64x32xf32>, %[[BA:[^:]*]]: tensor<32x128xf32>):
// (fusion-normalize folds the broadcast copy into the add's indexing map)
// CHECK-NOT: ins(%[[BIASA]] : tensor<128xf32>)
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BIASA]], %[[RESA]] : tensor<128xf32>, tensor<64x128xf32>)
// CHECK: arith.addf
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<64x32xf32>, tensor<32x128xf32>) outs(%[[INIT]] : tensor<64x128xf32>)
// CHECK: fusion.yield %[[M]] : tensor<64x128xf32>
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G]] : tensor<64x128xf32>
func.func @init_chain(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>, %res: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %bc = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bc, %res : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// Negative: the broadcast bias is also returned. Joining the contraction's
// group would not save its write, so it stays a group of its own, whose
// result the contraction group reads as its accumulator.
// CHECK-LABEL: func.func @init_second_use
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>, %[[BIAS:[^:]*]]: tensor<128xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[BIAS]] : tensor<128xf32>)
// CHECK-NOT: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[A]], %[[B]], %[[G0]] : tensor<64x32xf32>, tensor<32x128xf32>, tensor<64x128xf32>) {
// CHECK-NEXT: ^bb0(%[[AA:[^:]*]]: tensor<64x32xf32>, %[[BA:[^:]*]]: tensor<32x128xf32>, %[[INITA:[^:]*]]: tensor<64x128xf32>):
// CHECK-NEXT: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<64x32xf32>, tensor<32x128xf32>) outs(%[[INITA]] : tensor<64x128xf32>)
// CHECK: fusion.yield %[[M]] : tensor<64x128xf32>
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G1]], %[[G0]] : tensor<64x128xf32>, tensor<64x128xf32>
// PASS-LABEL: func.func @init_second_use
// PASS: fusion.group "g0" "elementwise"
// PASS: fusion.group "g1" "contraction"
func.func @init_second_use(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %e = tensor.empty() : tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m, %init : tensor<64x128xf32>, tensor<64x128xf32>
}

// Negative: the producer carries the fusion.materialize directive: it is a
// group of its own and its result goes to memory.
// CHECK-LABEL: func.func @init_materialize
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<128xf32>)
// CHECK-SAME: forced by the fusion.materialize directive
// CHECK: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%{{.*}}, %{{.*}}, %[[G0]] : tensor<64x32xf32>, tensor<32x128xf32>, tensor<64x128xf32>)
// CHECK: return %[[G1]]
func.func @init_materialize(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"], fusion.materialize}
      ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// Negative: the accumulator is relu of another matmul. The relu is that
// matmul's epilogue, so its group holds a contraction: two contractions are
// never one group, and the second matmul reads the first group's result.
// CHECK-LABEL: func.func @init_from_contraction
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>, %[[C:[^:]*]]: tensor<64x64xf32>, %[[D:[^:]*]]: tensor<64x128xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<64x32xf32>, tensor<32x128xf32>)
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[C]], %[[D]], %[[G0]] : tensor<64x64xf32>, tensor<64x128xf32>, tensor<64x128xf32>)
// CHECK-NOT: arith.maximumf
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G1]]
func.func @init_from_contraction(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %c: tensor<64x64xf32>, %d: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m0 = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %init = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m0 : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    %v = arith.maximumf %x, %zero : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %m1 = linalg.matmul ins(%c, %d : tensor<64x64xf32>, tensor<64x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m1 : tensor<64x128xf32>
}

// A contraction that writes its output transposed ((d0, d1, d2) -> (d1,
// d0)) is interchanged into its output's order by fusion-normalize
// (fusion-reductions-last): its accumulator is then read at the output
// point in loop order, and the broadcast joins its group.
// CHECK-LABEL: func.func @transposed_write
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]
func.func @transposed_write(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %init = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d1, d0)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}

// A fill accumulator is cloned into the contraction's group (it costs no
// memory traffic): one group that reads only a and b.
// CHECK-LABEL: func.func @fill_init
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<64x32xf32>, tensor<32x128xf32>) {
// CHECK: %[[F:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x128xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x128xf32>) outs(%[[F]] : tensor<64x128xf32>)
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G]] : tensor<64x128xf32>
// PASS-LABEL: func.func @fill_init
// PASS-COUNT-1: fusion.group "g0" "contraction"
// PASS-NOT: fusion.group
// PASS: return
// NOFUSION-LABEL: func.func @fill_init
// NOFUSION-COUNT-1: fusion.group "g0" "contraction"
// NOFUSION-NOT: fusion.group
// NOFUSION: return
func.func @fill_init(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}
