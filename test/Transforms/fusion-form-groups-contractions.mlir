// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{recompute=always})' \
// RUN:   | FileCheck %s --check-prefix=ALWAYS

// Contractions: a linalg.generic with reduction loops that is not a row
// reduction (a generalized matmul, batch_matmul or convolution; also a
// reduction over a leading dimension) forms a "contraction" group. Only
// elementwise epilogues over its output space (their loops are the
// contraction's parallel loops, and they read its result through those
// loops, in order) join it; producers never do (a contraction reads each
// input element many times), and horizontal fusion leaves it alone. Named ops
// are generalized by fusion-normalize first, so these cases run the real
// planning pipeline.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#inner2 = affine_map<(d0, d1, d2) -> (d1, d2)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

// matmul + bias + relu + residual: fusion-normalize generalizes the matmul
// and its fill; the matmul is a contraction, and the three elementwise ops
// run over its output space [64, 128], reading its result (and each other's)
// through the identity map: epilogues, all in one "contraction" group. The
// fill only initializes the matmul, so it is cloned in. The group reads
// exactly a, b, bias and the residual, and writes only the final sum.
// CHECK-LABEL: func.func @matmul_bias_relu_residual
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>, %[[BIAS:[^:]*]]: tensor<128xf32>, %[[RES:[^:]*]]: tensor<64x128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]], %[[BIAS]], %[[RES]] : tensor<64x32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<64x128xf32>) {
// CHECK-NEXT: ^bb0(%[[AA:[^:]*]]: tensor<64x32xf32>, %[[BA:[^:]*]]: tensor<32x128xf32>, %[[BIASA:[^:]*]]: tensor<128xf32>, %[[RESA:[^:]*]]: tensor<64x128xf32>):
// CHECK: %[[F:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x128xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<64x32xf32>, tensor<32x128xf32>) outs(%[[F]] : tensor<64x128xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[BI:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[M]], %[[BIASA]] : tensor<64x128xf32>, tensor<128xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[BI]] : tensor<64x128xf32>)
// CHECK: arith.maximumf
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[R]], %[[RESA]] : tensor<64x128xf32>, tensor<64x128xf32>)
// CHECK: arith.addf
// CHECK: fusion.yield %[[S]] : tensor<64x128xf32>
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G]] : tensor<64x128xf32>
func.func @matmul_bias_relu_residual(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>, %res: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %biased = linalg.generic {indexing_maps = [#id2, #cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %out: f32):
    %v = arith.maximumf %x, %zero : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%relu, %res : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %r: f32, %out: f32):
    %v = arith.addf %x, %r : f32
    linalg.yield %v : f32
  } -> tensor<64x128xf32>
  return %sum : tensor<64x128xf32>
}

// batch_matmul and a scale: one "contraction" group over the output space
// [4, 16, 8] (three parallel loops, one reduction loop).
// CHECK-LABEL: func.func @batch_matmul_scale
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x16x32xf32>, %[[B:[^:]*]]: tensor<4x32x8xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<4x16x32xf32>, tensor<4x32x8xf32>) {
// CHECK-NEXT: ^bb0(%[[AA:[^:]*]]: tensor<4x16x32xf32>, %[[BA:[^:]*]]: tensor<4x32x8xf32>):
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] : tensor<4x16x32xf32>, tensor<4x32x8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[M]] : tensor<4x16x8xf32>)
// CHECK: arith.mulf
// CHECK: fusion.yield %[[S]] : tensor<4x16x8xf32>
// CHECK-NEXT: } -> tensor<4x16x8xf32>
// CHECK-NEXT: return %[[G]] : tensor<4x16x8xf32>
func.func @batch_matmul_scale(%a: tensor<4x16x32xf32>, %b: tensor<4x32x8xf32>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x8xf32>) outs(%f : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<4x16x8xf32>) outs(%e : tensor<4x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %scale : f32
    linalg.yield %v : f32
  } -> tensor<4x16x8xf32>
  return %s : tensor<4x16x8xf32>
}

// conv_2d_nchw_fchw + per-channel bias + relu: the generalized convolution
// (input map (d0, d4, d2 + d5, d3 + d6), not a projected permutation) is a
// contraction over the output space [2, 8, 8, 8]; the bias (read through
// (n, c, h, w) -> (c)) and relu epilogue joins it.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x10x10xf32>, %[[W:[^:]*]]: tensor<8x3x3x3xf32>, %[[BIAS:[^:]*]]: tensor<8xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[X]], %[[W]], %[[BIAS]] : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) {
// CHECK-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<2x3x10x10xf32>, %[[WA:[^:]*]]: tensor<8x3x3x3xf32>, %[[BA:[^:]*]]: tensor<8xf32>):
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XA]], %[[WA]] : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]], %[[BA]] : tensor<2x8x8x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: fusion.yield %[[R]] : tensor<2x8x8x8xf32>
// CHECK-NEXT: } -> tensor<2x8x8x8xf32>
// CHECK-NEXT: return %[[G]] : tensor<2x8x8x8xf32>
func.func @conv_bias_relu(%x: tensor<2x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>) -> tensor<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<2x8x8x8xf32>, tensor<8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%in: f32, %bv: f32, %out: f32):
    %s = arith.addf %in, %bv : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x8x8x8xf32>
  return %r : tensor<2x8x8x8xf32>
}

// Negative: exp(a) feeds the matmul. A contraction reads each element of
// its inputs many times (each of a's elements once per column of the
// result), so its producers stay outside unless a few arith ops on one input
// make them (see @scaled_inputs): exp is a group of its own, whose value is
// materialized. Cloning exp into the contraction group is not legal either,
// even under recompute=always.
// CHECK-LABEL: func.func @producer_of_input
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32x128xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "elementwise" ins(%[[A]] : tensor<64x32xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// CHECK: math.exp
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x32xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[G0]], %[[B]] : tensor<64x32xf32>, tensor<32x128xf32>) attributes {decisions = ["operand #0 stays unfused: producers stay outside contraction groups (a contraction may read each input element many times)"]} {
// CHECK-NOT: math.exp
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: math.exp
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: return %[[G1]] : tensor<64x128xf32>

// ALWAYS-LABEL: func.func @producer_of_input
// ALWAYS: fusion.group "g0" "elementwise" {{.*}}decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]
// ALWAYS: fusion.group "g1" "contraction"
// ALWAYS-NOT: recomputes
// ALWAYS-NOT: math.exp
// ALWAYS: return
func.func @producer_of_input(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>) -> tensor<64x128xf32> {
  %ea = tensor.empty() : tensor<64x32xf32>
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x32xf32>) outs(%ea : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.matmul ins(%x, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// q * 0.125 and k * 0.125 feed q @ k (torch's scaled_dot_product_attention
// scales both so): a multiply of one input by a constant is computed where
// the contraction reads it, so the scaled tensors are never written. One
// group reads q and k.
// CHECK-LABEL: func.func @scaled_inputs
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<64x32xf32>, %[[K:[^:]*]]: tensor<32x128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[Q]], %[[K]] : tensor<64x32xf32>, tensor<32x128xf32>) attributes {decisions = ["operand #0 is computed where the contraction reads it, not written: a few arithmetic ops on one input (attention's scaled q or k)", "operand #1 is computed where the contraction reads it, not written: a few arithmetic ops on one input (attention's scaled q or k)"]} {
// CHECK-NOT: fusion.group
// CHECK: return %[[G]]
func.func @scaled_inputs(%q: tensor<64x32xf32>, %k: tensor<32x128xf32>) -> tensor<64x128xf32> {
  %s = arith.constant 0.125 : f32
  %eq = tensor.empty() : tensor<64x32xf32>
  %qs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x32xf32>) outs(%eq : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %ek = tensor.empty() : tensor<32x128xf32>
  %ks = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<32x128xf32>) outs(%ek : tensor<32x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<32x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.matmul ins(%qs, %ks : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m : tensor<64x128xf32>
}

// Negative: a + c reads two tensors through all its loops (the contraction
// would read both many times), and q * 0.125 is also a result: both stay
// outside the contraction (one elementwise group computes both, as they
// read a in common).
// CHECK-LABEL: func.func @not_prologues
// CHECK: fusion.group "g0" "elementwise"
// CHECK: fusion.group "{{g1|g2}}" "contraction" {{.*}}"operand #0 stays unfused: producers stay outside contraction groups
// CHECK: fusion.group "{{g1|g2}}" "contraction" {{.*}}"operand #0 stays unfused: producers stay outside contraction groups
// CHECK: return
func.func @not_prologues(%a: tensor<64x32xf32>, %c: tensor<64x32xf32>, %b: tensor<32x128xf32>)
    -> (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x32xf32>) {
  %s = arith.constant 0.125 : f32
  %ea = tensor.empty() : tensor<64x32xf32>
  %ac = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %c : tensor<64x32xf32>, tensor<64x32xf32>) outs(%ea : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m1 = linalg.matmul ins(%ac, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %as = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x32xf32>) outs(%ea : tensor<64x32xf32>) {
  ^bb0(%x: f32, %out: f32):
    %v = arith.mulf %x, %s : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %m2 = linalg.matmul ins(%as, %b : tensor<64x32xf32>, tensor<32x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %m1, %m2, %as : tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x32xf32>
}

// Negative: a row sum of the matmul's result runs over [16, 64] with a
// reduction loop: no elementwise epilogue. It starts a "reduction" group that
// reads the materialized matmul result.
// CHECK-LABEL: func.func @row_sum_of_matmul
// CHECK-SAME: (%[[A:[^:]*]]: tensor<16x32xf32>, %[[B:[^:]*]]: tensor<32x64xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<16x32xf32>, tensor<32x64xf32>) attributes {decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': recomputing is not legal here"]} {
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: ["parallel", "reduction"]
// CHECK: fusion.yield %{{.*}} : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "reduction" ins(%[[G0]] : tensor<16x64xf32>) attributes {decisions = ["operand #0 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x64xf32>)
// CHECK: fusion.yield %{{.*}} : tensor<16xf32>
// CHECK-NEXT: } -> tensor<16xf32>
// CHECK-NEXT: return %[[G1]] : tensor<16xf32>
func.func @row_sum_of_matmul(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%m : tensor<16x64xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// Negative: an elementwise op over a bigger space [4, 16, 64] that
// broadcasts the matmul's result (read through (d0, d1, d2) -> (d1, d2)) is
// not over the contraction's output space: a group of its own.
// CHECK-LABEL: func.func @broadcast_of_matmul
// CHECK: %[[G0:.*]] = fusion.group "g0" "contraction" {{.*}} {
// CHECK-NOT: math.exp
// CHECK: fusion.yield %{{.*}} : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]] : tensor<16x64xf32>) attributes {decisions = ["operand #0 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// CHECK: math.exp
// CHECK: fusion.yield %{{.*}} : tensor<4x16x64xf32>
// CHECK-NEXT: } -> tensor<4x16x64xf32>
// CHECK-NEXT: return %[[G1]] : tensor<4x16x64xf32>
func.func @broadcast_of_matmul(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<4x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e3 = tensor.empty() : tensor<4x16x64xf32>
  %r = linalg.generic {indexing_maps = [#inner2, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<16x64xf32>) outs(%e3 : tensor<4x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x16x64xf32>
  return %r : tensor<4x16x64xf32>
}

// Negative: an elementwise op over the output space [32, 32] that reads the
// matmul's result transposed ((d0, d1) -> (d1, d0)) is no epilogue: a
// thread computing one output point does not have the value it needs.
// CHECK-LABEL: func.func @transposed_read_of_matmul
// CHECK: %[[G0:.*]] = fusion.group "g0" "contraction" {{.*}} {
// CHECK-NOT: math.exp
// CHECK: fusion.yield %{{.*}} : tensor<32x32xf32>
// CHECK-NEXT: } -> tensor<32x32xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "elementwise" ins(%[[G0]] : tensor<32x32xf32>) attributes {decisions = ["operand #0 stays unfused: only elementwise epilogues over a contraction's output space join its group"]} {
// CHECK: math.exp
// CHECK: return %[[G1]] : tensor<32x32xf32>
func.func @transposed_read_of_matmul(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<32x32xf32>
  return %t : tensor<32x32xf32>
}

// Negative: two matmuls reading the same a are independent siblings over the
// same space, but horizontal fusion skips contractions: two groups, and no
// decision about the shared input.
// CHECK-LABEL: func.func @two_matmuls_same_input
// CHECK-SAME: (%[[A:[^:]*]]: tensor<16x32xf32>, %[[B:[^:]*]]: tensor<32x64xf32>, %[[C:[^:]*]]: tensor<32x64xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]] : tensor<16x32xf32>, tensor<32x64xf32>) {
// CHECK-COUNT-1: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: fusion.yield %{{.*}} : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NEXT: %[[G1:.*]] = fusion.group "g1" "contraction" ins(%[[A]], %[[C]] : tensor<16x32xf32>, tensor<32x64xf32>) {
// CHECK-COUNT-1: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: fusion.yield %{{.*}} : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NEXT: return %[[G0]], %[[G1]] : tensor<16x64xf32>, tensor<16x64xf32>
// CHECK-NOT: fused horizontally
func.func @two_matmuls_same_input(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<32x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m2 = linalg.matmul ins(%a, %c : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m1, %m2 : tensor<16x64xf32>, tensor<16x64xf32>
}

// An epilogue that adds two matmul results over identical loop nests takes
// both into its group: one kernel computes both dot products per output.
// CHECK-LABEL: func.func @epilogue_of_two_matmuls
// CHECK-SAME: (%[[A:[^:]*]]: tensor<16x32xf32>, %[[B:[^:]*]]: tensor<32x64xf32>, %[[C:[^:]*]]: tensor<32x64xf32>)
// CHECK-NEXT: %[[G0:.*]] = fusion.group "g0" "contraction" ins(%[[A]], %[[B]], %[[C]] : tensor<16x32xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
// CHECK-NEXT: ^bb0(%[[AA:[^:]*]]: tensor<16x32xf32>, %[[BA:[^:]*]]: tensor<32x64xf32>, %[[CA:[^:]*]]: tensor<32x64xf32>):
// CHECK: %[[M1:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[BA]] :
// CHECK: %[[M2:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AA]], %[[CA]] :
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[M1]], %[[M2]] : tensor<16x64xf32>, tensor<16x64xf32>)
// CHECK: fusion.yield %[[S]] : tensor<16x64xf32>
// CHECK-NEXT: } -> tensor<16x64xf32>
// CHECK-NEXT: return %[[G0]] : tensor<16x64xf32>
func.func @epilogue_of_two_matmuls(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m2 = linalg.matmul ins(%a, %c : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %m2 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  return %s : tensor<16x64xf32>
}

// Negative: matmuls over different reduction extents (K = 32 and K = 8) do
// not share a kernel; the epilogue joins the first, the second is read from
// memory.
// CHECK-LABEL: func.func @epilogue_of_two_matmuls_different_k
// CHECK: fusion.group "g1" "contraction"
// CHECK: fusion.group "g0" "contraction" {{.*}}decisions = ["operand #1 stays unfused: the merged group would not run over one row space"]
// CHECK-NOT: fusion.group
func.func @epilogue_of_two_matmuls_different_k(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<16x8xf32>, %d: tensor<8x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m2 = linalg.matmul ins(%c, %d : tensor<16x8xf32>, tensor<8x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %m2 : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  return %s : tensor<16x64xf32>
}

// A matrix-vector product streams its matrix (indexed by every loop, read
// once) and broadcasts the vector along the rows: a row reduction, not a
// contraction, so the matrix's producer joins it in one "reduction" group.
// CHECK-LABEL: func.func @matvec_of_producer
// CHECK-NEXT: fusion.group "g0" "reduction"
// CHECK: math.exp
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: fusion.yield
// CHECK-NEXT: } -> tensor<64xf32>
// CHECK-NEXT: return
func.func @matvec_of_producer(%a: tensor<64x32xf32>, %vec: tensor<32xf32>) -> tensor<64xf32> {
  %ea = tensor.empty() : tensor<64x32xf32>
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x32xf32>) outs(%ea : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.matvec ins(%x, %vec : tensor<64x32xf32>, tensor<32xf32>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  return %m : tensor<64xf32>
}
