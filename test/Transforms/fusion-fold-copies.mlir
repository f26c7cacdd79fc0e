// RUN: fuse-opt %s -split-input-file -mlir-print-local-scope --pass-pipeline='builtin.module(func.func(fusion-fold-copies))' \
// RUN:   | FileCheck %s
// RUN: fuse-opt %s -split-input-file -mlir-print-local-scope --pass-pipeline='builtin.module(fusion-normalize,fusion-plan{multi-tensor=0})' \
// RUN:   | FileCheck %s --check-prefix=PLAN

// fusion-fold-copies: a copy linalg.generic (one tensor input, a body that
// yields it, identity output map, all loops parallel: a generalized
// transpose or broadcast) is folded into every generic that reads it: the
// reader reads the copy's input through the composed map (copy input map
// composed with the reader's map for the copy). A fold is skipped where
// linalg could no longer infer a loop's range from an operand, and for a row
// reduction whose composed map is not a projected permutation.
//
// A reshape of a copy is a copy over the reshaped space (a collapsed loop
// c over dims of sizes (.., s) reads them at c floordiv s, c mod s; an
// expanded dimension read directly expands the copy's input too).
//
// A static tensor.extract_slice that takes whole aligned blocks of its source
// (x[..., k*s:(k+1)*s] of a dimension of n*s, x[..., o::t] of a dimension of
// s*t, single indices) becomes a view: an expand_shape of the source and a
// copy generic with constant indices in its input map, which then folds like
// any copy. Any other static slice becomes a generic with no inputs over the
// slice whose body gathers out[i] = src[offset + i * stride] with
// tensor.extract (a "positional gather"); a generic reading a positional
// gather evaluates the gather's body at the point it reads, unless the
// operand is the only one that gives some loop its range.
//
// -mlir-print-local-scope prints the indexing maps inline, so the composed
// maps are checked exactly. The PLAN run (fusion-normalize, fusion-plan)
// only checks the last case.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A transpose read by an elementwise generic: the copy's input map (d1, d0)
// composed with the reader's identity map is (d1, d0), so exp reads %x
// through (d1, d0). The copy had no other use: it is gone.
// CHECK-LABEL: func.func @transpose_into_elementwise
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<8x4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<8x4xf32>
// CHECK-NEXT: return %[[R]] : tensor<8x4xf32>
// CHECK-NOT: linalg.generic
func.func @transpose_into_elementwise(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// The same transpose, also returned: the reader still reads %x directly,
// and the copy stays for its other use (the function's second result).
// CHECK-LABEL: func.func @transpose_with_other_use
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: return %[[R]], %[[T]] : tensor<8x4xf32>, tensor<8x4xf32>
func.func @transpose_with_other_use(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %r, %t : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A copy reading a copy is a reader too: transpose(transpose(x)) composes to
// the identity, and exp reads %x as it is. Both copies are gone.
// CHECK-LABEL: func.func @two_transposes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]] : tensor<4x8xf32>
func.func @two_transposes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %t2 = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t2 : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

// A broadcast of a row vector read by an add: the composed map is the
// broadcast map (d0, d1) -> (d1), so the add reads the 8-element vector
// itself. Loop d0 still gets its range from %a and the output.
// CHECK-LABEL: func.func @broadcast_into_elementwise
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[Q:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = arith.addf %[[P]], %[[Q]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]] : tensor<4x8xf32>
func.func @broadcast_into_elementwise(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#unit = affine_map<(d0, d1) -> (0, d1)>

// Broadcasts as torch-mlir writes them: from a 0-d tensor (map to ()) and
// from a keepdims row (constant index 0). The composed maps keep the
// constant and the empty result list; the output alone gives both loops
// their ranges.
// CHECK-LABEL: func.func @scalar_and_unit_broadcasts
// CHECK-SAME: (%[[S:[^:]*]]: tensor<f32>, %[[B:[^:]*]]: tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]], %[[B]] : tensor<f32>, tensor<1x8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK: arith.addf
// CHECK: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]] : tensor<4x8xf32>
func.func @scalar_and_unit_broadcasts(%s: tensor<f32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %sb = linalg.generic {indexing_maps = [#scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<f32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %bb = linalg.generic {indexing_maps = [#unit, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sb, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// x @ w^T (a linear layer's weight, [out, in] = 32x64): the matmul reads the
// transposed weight through (d2, d1); composed with the transpose (d1, d0)
// that is (d0, d1, d2) -> (d1, d2): the matmul reads %w in place, and the
// 64x32 transpose is never built.
// CHECK-LABEL: func.func @transpose_into_matmul
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x64xf32>, %[[W:[^:]*]]: tensor<32x64xf32>, %[[ACC:[^:]*]]: tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK-NOT: tensor<64x32xf32>
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<8x64xf32>, tensor<32x64xf32>) outs(%[[ACC]] : tensor<8x32xf32>) {
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[Q:[^:]*]]: f32, %[[O:[^:]*]]: f32):
// CHECK-NEXT: %[[MUL:.*]] = arith.mulf %[[P]], %[[Q]] : f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[O]], %[[MUL]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK-NEXT: } -> tensor<8x32xf32>
// CHECK-NEXT: return %[[M]] : tensor<8x32xf32>
func.func @transpose_into_matmul(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x32xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wt : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.mulf %p, %q : f32
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %m : tensor<8x32xf32>
}

// -----

// Unaligned static slices returned as they are: each becomes a positional
// gather (no inputs, identity output map, all loops parallel) over the slice.
//  - [0, 0, 64] [2, 16, 64] [1, 1, 1] of 2x16x200: only the last index is
//    offset (k + 64); unit strides and zero offsets add no arithmetic.
//  - [0, 1] [4, 3] [1, 2] of 4x9: column j reads j * 2 + 1.
//  - [1, 0] [1, 8] [1, 1] of 4x9 to tensor<8xf32> (rank-reducing): the
//    dropped dimension reads the constant offset 1, the kept one the loop.
// The index constants are hoisted to the function's entry.
// CHECK-LABEL: func.func @slices_returned
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x16x200xf32>, %[[Y:[^:]*]]: tensor<4x9xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<2x16x64xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%[[E0]] : tensor<2x16x64xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[K64:.*]] = arith.addi %[[K]], %[[C64]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[J]], %[[K64]]] : tensor<2x16x200xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E1]] : tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J2:.*]] = arith.muli %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[J21:.*]] = arith.addi %[[J2]], %[[C1]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[Y]][%[[I]], %[[J21]]] : tensor<4x9xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<4x3xf32>
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[E2]] : tensor<8xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[J:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[Y]][%[[C1]], %[[J]]] : tensor<4x9xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<8xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]] : tensor<2x16x64xf32>, tensor<4x3xf32>, tensor<8xf32>
func.func @slices_returned(%x: tensor<2x16x200xf32>, %y: tensor<4x9xf32>) -> (tensor<2x16x64xf32>, tensor<4x3xf32>, tensor<8xf32>) {
  %a = tensor.extract_slice %x[0, 0, 64] [2, 16, 64] [1, 1, 1] : tensor<2x16x200xf32> to tensor<2x16x64xf32>
  %b = tensor.extract_slice %y[0, 1] [4, 3] [1, 2] : tensor<4x9xf32> to tensor<4x3xf32>
  %c = tensor.extract_slice %y[1, 0] [1, 8] [1, 1] : tensor<4x9xf32> to tensor<8xf32>
  return %a, %b, %c : tensor<2x16x64xf32>, tensor<4x3xf32>, tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A slice of an argument both read by a generic and returned: the generic
// reads it as a slice (a view), the return a gather (a copy of it).
// CHECK-LABEL: func.func @slice_read_and_returned
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x20xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: tensor.extract %[[X]]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 3] [4, 8] [1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4x8xf32>)
// CHECK: return %[[R]], %[[G]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @slice_read_and_returned(%x: tensor<4x20xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tensor.extract_slice %x[0, 3] [4, 8] [1, 1] : tensor<4x20xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// An unaligned slice of an argument read by an elementwise generic stays a
// slice: bufferized, a view of the argument's buffer (memref.subview) that
// the reader's kernel addresses through its strides and offset, not a
// gather. The reader keeps its attributes.
// CHECK-LABEL: func.func @slice_into_elementwise
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x200xf32>) -> tensor<4x64xf32>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][0, 64] [4, 64] [1, 1] : tensor<4x200xf32> to tensor<4x64xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x64xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<4x64xf32>) outs(%[[E]] : tensor<4x64xf32>) attrs = {tag = "reader"} {
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]] : tensor<4x64xf32>
func.func @slice_into_elementwise(%x: tensor<4x200xf32>) -> tensor<4x64xf32> {
  %s = tensor.extract_slice %x[0, 64] [4, 64] [1, 1] : tensor<4x200xf32> to tensor<4x64xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) attrs = {tag = "reader"} {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#cols = affine_map<(d0, d1) -> (d1)>

// A slice of an argument read transposed stays a slice (a view), read
// through the reader's map; a strided rank-reducing slice (row 2, every
// other column: not contiguous along its last dimension) becomes a gather,
// evaluated at the reader's map applied to its loops, not at its own
// loops: read as a broadcast ((d1): out[i, j] = exp(x[2, j * 2])), where
// loop d0 is not used at all.
// CHECK-LABEL: func.func @slices_read_through_maps
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x20xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[S:.*]] = tensor.extract_slice %[[X]][0, 8] [4, 8] [1, 1] : tensor<4x20xf32> to tensor<4x8xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) {
// CHECK-NOT: tensor.extract
// CHECK: } -> tensor<8x4xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<3x8xf32>
// CHECK-NEXT: %[[Q:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<3x8xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J2:.*]] = arith.muli %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[C2]], %[[J2]]] : tensor<4x20xf32>
// CHECK-NEXT: math.exp %[[V]] : f32
// CHECK: } -> tensor<3x8xf32>
// CHECK-NEXT: return %[[R]], %[[Q]] : tensor<8x4xf32>, tensor<3x8xf32>
func.func @slices_read_through_maps(%x: tensor<4x20xf32>) -> (tensor<8x4xf32>, tensor<3x8xf32>) {
  %s = tensor.extract_slice %x[0, 8] [4, 8] [1, 1] : tensor<4x20xf32> to tensor<4x8xf32>
  %v = tensor.extract_slice %x[2, 0] [1, 8] [1, 2] : tensor<4x20xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = math.exp %in : f32
    linalg.yield %w : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<3x8xf32>
  %q = linalg.generic {indexing_maps = [#cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<8xf32>) outs(%e2 : tensor<3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = math.exp %in : f32
    linalg.yield %w : f32
  } -> tensor<3x8xf32>
  return %r, %q : tensor<8x4xf32>, tensor<3x8xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// An unaligned slice of an argument as a matmul's right operand (8 columns
// of 20) stays a slice (a view): the matmul reads it in place.
// CHECK-LABEL: func.func @slice_into_matmul
// CHECK-SAME: (%[[A:[^:]*]]: tensor<8x8xf32>, %[[X:[^:]*]]: tensor<8x20xf32>, %[[ACC:[^:]*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[Q:.*]] = tensor.extract_slice %[[X]][0, 8] [8, 8] [1, 1]
// CHECK-NEXT: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[Q]] : tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[ACC]] : tensor<8x8xf32>) {
// CHECK-NOT: tensor.extract
// CHECK: return %[[M]] : tensor<8x8xf32>
func.func @slice_into_matmul(%a: tensor<8x8xf32>, %x: tensor<8x20xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %q = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x20xf32> to tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %q : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.mulf %u, %v : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// Both matmul operands are unaligned slices of one argument: both stay
// slices (views), read in place (as gathers, one had to stay a generic of
// its own, whose result the matmul read: linalg infers the reduction
// loop's range from it).
// CHECK-LABEL: func.func @two_slices_into_matmul
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x20xf32>, %[[ACC:[^:]*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[P:.*]] = tensor.extract_slice %[[X]][0, 0] [8, 8] [1, 1]
// CHECK-NEXT: %[[Q:.*]] = tensor.extract_slice %[[X]][0, 8] [8, 8] [1, 1]
// CHECK-NEXT: %[[M:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[Q]] : tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[ACC]] : tensor<8x8xf32>) {
// CHECK-NOT: tensor.extract
// CHECK: return %[[M]] : tensor<8x8xf32>
func.func @two_slices_into_matmul(%x: tensor<8x20xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %p = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x20xf32> to tensor<8x8xf32>
  %q = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x20xf32> to tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %q : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.mulf %u, %v : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Negative: a copy and a gather marked fusion.materialize are neither folded
// nor erased; their readers still read them as operands.
// CHECK-LABEL: func.func @materialized
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<64xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) attrs = {fusion.materialize}
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[T]] : tensor<8x4xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<8xf32>) attrs = {fusion.materialize}
// CHECK: tensor.extract %[[Y]]
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[G]] : tensor<8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @materialized(%x: tensor<4x8xf32>, %y: tensor<64xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) attrs = {fusion.materialize} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %c8 = arith.constant 8 : index
  %e1 = tensor.empty() : tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
      outs(%e1 : tensor<8xf32>) attrs = {fusion.materialize} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = arith.addi %i, %c8 : index
    %v = tensor.extract %y[%j] : tensor<64xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r, %s : tensor<8x4xf32>, tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#rows = affine_map<(d0, d1) -> (d0)>

// A row reduction (parallel, reduction; projected-permutation maps) reading
// a transpose folds: the composed map (d1, d0) is a permutation, and %x
// (16x8) still gives d0 (8) and the reduction loop d1 (16) their ranges.
// CHECK-LABEL: func.func @transpose_into_row_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x8xf32>, %[[INIT:[^:]*]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<16x8xf32>) outs(%[[INIT]] : tensor<8xf32>) {
// CHECK: arith.addf
// CHECK: } -> tensor<8xf32>
// CHECK-NEXT: return %[[R]] : tensor<8xf32>
func.func @transpose_into_row_reduction(%x: tensor<16x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#strided = affine_map<(d0, d1) -> (d0, d1 * 2)>
#rows = affine_map<(d0, d1) -> (d0)>

// Negative for row reductions: a strided copy (every other column of %x)
// read by a row reduction (a dot product of rows with %y, which also gives
// every loop its range) is kept, because the composed map (d0, d1 * 2) is
// not a projected permutation. The elementwise exp reading the same copy
// does fold (row-reduction rule only), so the copy stays for the reduction
// alone.
// CHECK-LABEL: func.func @strided_copy_into_row_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x16xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>, %[[INIT:[^:]*]]: tensor<4xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 * 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[Y]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK: %[[Z:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 * 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<4x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: return %[[R]], %[[Z]]
func.func @strided_copy_into_row_reduction(%x: tensor<4x16xf32>, %y: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#strided, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %v = arith.addf %m, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %z = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r, %z : tensor<4xf32>, tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>

// Negative (loop ranges): a row sum of a broadcast is not folded. The
// composed map (d0, d1) -> (d0) is a projected permutation, but then no
// operand would index the reduction loop d1, and linalg could not infer its
// range (16).
// CHECK-LABEL: func.func @broadcast_into_row_reduction
// CHECK-SAME: (%[[B:[^:]*]]: tensor<8xf32>, %[[INIT:[^:]*]]: tensor<8xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : tensor<8xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[T]] : tensor<8x16xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: return %[[R]]
func.func @broadcast_into_row_reduction(%b: tensor<8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.generic {indexing_maps = [#rows, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>

// A row sum of an unaligned slice of an argument reads the slice (a view)
// in place (as a gather, the gather had to stay the reduction's operand, a
// generic of its own: the only operand indexing the reduction loop d1).
// CHECK-LABEL: func.func @slice_into_row_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x20xf32>, %[[INIT:[^:]*]]: tensor<4xf32>)
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][0, 8] [4, 8] [1, 1]
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]]
func.func @slice_into_row_reduction(%x: tensor<4x20xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[0, 8] [4, 8] [1, 1] : tensor<4x20xf32> to tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Negative: a slice at a dynamic offset is left as it is (no gather), and
// its reader keeps reading it.
// CHECK-LABEL: func.func @dynamic_slice
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>, %[[I:[^:]*]]: index)
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][%[[I]]] [8] [1] : tensor<64xf32> to tensor<8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[S]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]]
func.func @dynamic_slice(%x: tensor<64xf32>, %i: index) -> tensor<8xf32> {
  %s = tensor.extract_slice %x[%i] [8] [1] : tensor<64xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Negative: a generic with no inputs that gathers but also reads its outs
// argument (it adds the gathered value to %acc) is not a positional gather:
// its value depends on %acc, so its reader keeps it as an operand.
// CHECK-LABEL: func.func @gather_reads_outs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>, %[[ACC:[^:]*]]: tensor<8xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[ACC]] : tensor<8xf32>)
// CHECK: tensor.extract %[[X]]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[G]] : tensor<8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[R]]
func.func @gather_reads_outs(%x: tensor<64xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %c8 = arith.constant 8 : index
  %g = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
      outs(%acc : tensor<8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = arith.addi %i, %c8 : index
    %v = tensor.extract %x[%j] : tensor<64xf32>
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id1 = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (7 - d0)>

// Negative: a generic with one input that yields its outs argument is not a
// copy of its input: its result is %acc, so the reader must not read %x
// (the input nothing reads is dropped).
// CHECK-LABEL: func.func @yields_outs_not_copy
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[ACC:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: ins(%[[X]]
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[ACC]] : tensor<8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[G]] : tensor<8xf32>)
// CHECK: return %[[R]]
func.func @yields_outs_not_copy(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %g = linalg.generic {indexing_maps = [#rev, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %out : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

// End to end, a linear layer as torch-mlir emits it: linalg.transpose of
// the [out, in] weight, linalg.matmul into a zero fill, bias add.
//
// fusion-fold-copies alone sees no copy generic (named ops are generalized
// by fusion-normalize first): the transpose stays.
// CHECK-LABEL: func.func @linear
// CHECK: linalg.transpose
// CHECK: linalg.matmul
//
// Through fusion-normalize and fusion-plan the generalized transpose folds
// into the matmul, which reads the 32x64 weight through (d1, d2): one
// "contraction" group (fill, matmul, bias add) reading x, w and b, and no
// transpose kernel or 64x32 tensor anywhere.
// PLAN-LABEL: func.func @linear
// PLAN-SAME: (%[[X:[^:]*]]: tensor<8x64xf32>, %[[W:[^:]*]]: tensor<32x64xf32>, %[[B:[^:]*]]: tensor<32xf32>) -> tensor<8x32xf32>
// PLAN-NEXT: %[[G:.*]] = fusion.group "g0" "contraction" ins(%[[X]], %[[W]], %[[B]] : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) {
// PLAN-NEXT: ^bb0(%[[XA:[^:]*]]: tensor<8x64xf32>, %[[WA:[^:]*]]: tensor<32x64xf32>, %[[BA:[^:]*]]: tensor<32xf32>):
// PLAN-NOT: tensor<64x32xf32>
// PLAN: %[[F:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// PLAN-NOT: tensor<64x32xf32>
// PLAN: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XA]], %[[WA]] : tensor<8x64xf32>, tensor<32x64xf32>) outs(%[[F]] : tensor<8x32xf32>)
// PLAN: arith.mulf
// PLAN: arith.addf
// PLAN: %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[M]], %[[BA]] : tensor<8x32xf32>, tensor<32xf32>)
// PLAN: arith.addf
// PLAN: fusion.yield %[[S]] : tensor<8x32xf32>
// PLAN-NEXT: } -> tensor<8x32xf32>
// PLAN-NEXT: return %[[G]] : tensor<8x32xf32>
// PLAN-NOT: fusion.group
// PLAN-NOT: tensor<64x32xf32>
func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x32xf32>
  %transposed = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%0 : tensor<64x32xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<8x32xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = linalg.matmul ins(%x, %transposed : tensor<8x64xf32>, tensor<64x32xf32>) outs(%2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %4 = linalg.generic {indexing_maps = [#id2, #cols, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%3, %b : tensor<8x32xf32>, tensor<32xf32>) outs(%1 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.addf %in, %in_0 : f32
    linalg.yield %5 : f32
  } -> tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}

// -----

// A gather that computes on the data (here exp, pulled through a slice) is
// not folded into a contraction, which would recompute it for every read;
// an elementwise reader takes it.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// (the slice itself, pure data movement, is folded into the matmul, which
// gathers from exp's result)
// CHECK-LABEL: func.func @arithmetic_gather_into_matmul
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<8x8xf32>)
// CHECK-NOT: math.exp
// CHECK: tensor.extract %[[EXP]]
// CHECK-NOT: math.exp
// CHECK: } -> tensor<8x8xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} outs(
// CHECK: tensor.extract %{{.*}} : tensor<8x16xf32>
// CHECK-NEXT: math.exp
// CHECK-NEXT: math.tanh
// Planned: exp is one kernel the matmul reads; the tanh reader computes exp
// itself where it gathers.
// PLAN-LABEL: func.func @arithmetic_gather_into_matmul
// PLAN: %[[E:.*]] = fusion.group "g0" "elementwise"
// PLAN: fusion.group "g1" "contraction" ins(%[[E]],
// PLAN: fusion.group "g2" "elementwise"
// PLAN-NOT: fusion.group
// PLAN: return
func.func @arithmetic_gather_into_matmul(%a: tensor<8x8xf32>, %x: tensor<8x16xf32>, %acc: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %q = tensor.extract_slice %ex[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %q : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.mulf %u, %v : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %ex2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %q2 = tensor.extract_slice %ex2[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q2 : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %m, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Aligned slices returned as they are: each becomes an expand_shape of the
// source (where a dimension splits) and a copy generic with constant indices
// in its input map.
//  - [0, 0, 64] [2, 16, 64] of 2x16x192 (the k third of a fused qkv): the
//    last dimension splits into 3x64, read at block 1.
//  - [0, 1] [4, 4] [1, 2] of 4x8 (odd columns): 8 splits into 4x2, read at
//    lane 1.
//  - [1, 0] [1, 8] of 4x8 to tensor<8xf32> (a row, rank-reducing): no split,
//    the dropped dimension reads the constant 1.
// CHECK-LABEL: func.func @aligned_slices_returned
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x16x192xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>)
// CHECK-NOT: tensor.extract
// CHECK-DAG: %[[XV:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 16, 3, 64] : tensor<2x16x192xf32> into tensor<2x16x3x64xf32>
// CHECK-DAG: %[[YV:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1, 2]] output_shape [4, 4, 2] : tensor<4x8xf32> into tensor<4x4x2xf32>
// CHECK-DAG: %[[A:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XV]] : tensor<2x16x3x64xf32>) outs(%{{.*}} : tensor<2x16x64xf32>)
// CHECK-DAG: %[[B:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[YV]] : tensor<4x4x2xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK-DAG: %[[C:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (1, d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[Y]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[A]], %[[B]], %[[C]] : tensor<2x16x64xf32>, tensor<4x4xf32>, tensor<8xf32>
func.func @aligned_slices_returned(%x: tensor<2x16x192xf32>, %y: tensor<4x8xf32>) -> (tensor<2x16x64xf32>, tensor<4x4xf32>, tensor<8xf32>) {
  %a = tensor.extract_slice %x[0, 0, 64] [2, 16, 64] [1, 1, 1] : tensor<2x16x192xf32> to tensor<2x16x64xf32>
  %b = tensor.extract_slice %y[0, 1] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
  %c = tensor.extract_slice %y[1, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
  return %a, %b, %c : tensor<2x16x64xf32>, tensor<4x4xf32>, tensor<8xf32>
}

// -----

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhsT = affine_map<(d0, d1, d2) -> (d1, d2)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>

// q @ k^T with q and k the two aligned halves of one tensor: both slices
// fold, since each view still indexes the reduction loop d2 directly. The
// matmul reads %x (as 8x2x8) twice, at blocks 0 and 1; nothing gathers and
// no copy is left. Planned, it is one contraction group and nothing else.
// CHECK-LABEL: func.func @aligned_slices_into_matmul
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[ACC:[^:]*]]: tensor<8x8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d1, 1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x2x8xf32>, tensor<8x2x8xf32>) outs(%[[ACC]] : tensor<8x8xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return %[[M]] : tensor<8x8xf32>
// PLAN-LABEL: func.func @aligned_slices_into_matmul
// PLAN: fusion.group "g0" "contraction"
// PLAN-NOT: tensor.extract
// PLAN-NOT: fusion.group
// PLAN: return
func.func @aligned_slices_into_matmul(%x: tensor<8x16xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %q = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %k = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %m = linalg.generic {indexing_maps = [#lhs, #rhsT, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.mulf %u, %v : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Negative for views: an aligned slice of the only use of a generic's result
// stays a gather, so the producer (exp) is evaluated where the slice reads:
// one generic reading %x, no expand_shape, no exp kernel of its own.
// CHECK-LABEL: func.func @aligned_slice_of_a_generic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x16xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[V:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: math.exp %[[V]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
func.func @aligned_slice_of_a_generic(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %s = tensor.extract_slice %ex[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#heads = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#bl = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#br = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#bo = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Multi-head attention's head split: q (2x16x64) viewed as 4 heads of 16,
// transposed to (batch, head, seq, dim) and merged into a batch of 8. The
// collapse of the transpose is a copy over 8x16x16 reading the view at
// (b floordiv 4, s, b mod 4, d), and it folds into the batch matmul, which
// still finds the reduction loop's range (16) in that operand. No copy is
// left. Planned, it is one contraction group.
// CHECK-LABEL: func.func @heads_into_batch_matmul
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x64xf32>, %[[K:[^:]*]]: tensor<8x16x16xf32>, %[[ACC:[^:]*]]: tensor<8x16x16xf32>)
// CHECK-NEXT: %[[V:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [2, 16, 4, 16]
// CHECK-NEXT: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0 floordiv 4, d1, d0 mod 4, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[V]], %[[K]] : tensor<2x16x4x16xf32>, tensor<8x16x16xf32>) outs(%[[ACC]] : tensor<8x16x16xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]
// PLAN-LABEL: func.func @heads_into_batch_matmul
// PLAN: fusion.group "g0" "contraction"
// PLAN-NOT: fusion.group
// PLAN: return
func.func @heads_into_batch_matmul(%q: tensor<2x16x64xf32>, %k: tensor<8x16x16xf32>, %acc: tensor<8x16x16xf32>) -> tensor<8x16x16xf32> {
  %v = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<2x16x64xf32> into tensor<2x16x4x16xf32>
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %t = linalg.generic {indexing_maps = [#heads, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x16x4x16xf32>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x4x16x16xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
  %m = linalg.generic {indexing_maps = [#bl, #br, #bo], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%c, %k : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%acc : tensor<8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16x16xf32>
  return %m : tensor<8x16x16xf32>
}

// -----

// Expands of copies. A transpose split along a dimension it reads directly
// (d1 of 6x8 reads x at d1): x is expanded too (8 -> 2x4), and the copy
// reads it at (d1, d2, d0), folded into exp. A strided copy (d0, d1 * 2)
// split along d1 (8 -> 2x4): d1 is not read directly, so it becomes
// d1 * 4 + d2, times 2: (d0, d1 * 8 + d2 * 2), folded into negf.
// CHECK-LABEL: func.func @expand_of_copies
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x6xf32>, %[[Y:[^:]*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[XV:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XV]] : tensor<2x4x6xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: tensor.empty
// CHECK-NEXT: %[[N:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 8 + d2 * 2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Y]] : tensor<4x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.negf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]], %[[N]]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#strided = affine_map<(d0, d1) -> (d0, d1 * 2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @expand_of_copies(%x: tensor<8x6xf32>, %y: tensor<4x16xf32>) -> (tensor<6x2x4xf32>, tensor<4x2x4xf32>) {
  %e = tensor.empty() : tensor<6x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x6xf32>) outs(%e : tensor<6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<6x8xf32>
  %te = tensor.expand_shape %t [[0], [1, 2]] output_shape [6, 2, 4] : tensor<6x8xf32> into tensor<6x2x4xf32>
  %e1 = tensor.empty() : tensor<6x2x4xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%te : tensor<6x2x4xf32>) outs(%e1 : tensor<6x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = math.exp %in : f32
    linalg.yield %w : f32
  } -> tensor<6x2x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#strided, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x16xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %se = tensor.expand_shape %s [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %e3 = tensor.empty() : tensor<4x2x4xf32>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%se : tensor<4x2x4xf32>) outs(%e3 : tensor<4x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = arith.negf %in : f32
    linalg.yield %w : f32
  } -> tensor<4x2x4xf32>
  return %r, %n : tensor<6x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// Negative: a reshape of a generic that computes (exp) is not a copy; the
// collapse stays (fusion-hoist-reshapes moves such reshapes).
// CHECK-LABEL: func.func @collapse_of_compute
// CHECK: %[[T:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: tensor.collapse_shape %[[T]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>

#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @collapse_of_compute(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = math.exp %in : f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %c : tensor<32xf32>
}

// -----

// A transpose of the only use of a contraction's result (autograd's key
// gradient, (Q^T dS)^T): the contraction writes its result through the
// transpose instead, from a zero fill of the transposed shape; the copy and
// the 2x32x16 intermediate disappear. (fusion-normalize then orders the
// loops by the result: one contraction group.)
// CHECK-LABEL: func.func @transpose_of_contraction
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x16x32xf32>, %[[DS:[^:]*]]: tensor<2x16x16xf32>) -> tensor<2x16x32xf32>
// CHECK: %[[F:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x16x32xf32>)
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[DS]] : tensor<2x16x32xf32>, tensor<2x16x16xf32>) outs(%[[F]] : tensor<2x16x32xf32>)
// CHECK-NOT: tensor<2x32x16xf32>
// CHECK: return %[[M]]
// PLAN-LABEL: func.func @transpose_of_contraction
// PLAN: fusion.group "g0" "contraction"
// PLAN-NOT: fusion.group
// PLAN: return
func.func @transpose_of_contraction(%q: tensor<2x16x32xf32>, %ds: tensor<2x16x16xf32>) -> tensor<2x16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x16xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%z : f32) outs(%e : tensor<2x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x32x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %ds : tensor<2x16x32xf32>, tensor<2x16x16xf32>) outs(%f : tensor<2x32x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x16xf32>
  %e2 = tensor.empty() : tensor<2x16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x32x16xf32>) outs(%e2 : tensor<2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x32xf32>
  return %r : tensor<2x16x32xf32>
}

// -----

// Negative: the contraction's result is also returned untransposed: the
// transpose stays a copy of it.
// CHECK-LABEL: func.func @transpose_of_shared_contraction
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<2x32x16xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<2x32x16xf32>) outs(%{{.*}} : tensor<2x16x32xf32>)
// CHECK: return %[[R]], %[[T]]
func.func @transpose_of_shared_contraction(%q: tensor<2x16x32xf32>, %ds: tensor<2x16x16xf32>) -> (tensor<2x16x32xf32>, tensor<2x32x16xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x16xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%z : f32) outs(%e : tensor<2x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x32x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %ds : tensor<2x16x32xf32>, tensor<2x16x16xf32>) outs(%f : tensor<2x32x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x16xf32>
  %e2 = tensor.empty() : tensor<2x16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x32x16xf32>) outs(%e2 : tensor<2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x32xf32>
  return %r, %t : tensor<2x16x32xf32>, tensor<2x32x16xf32>
}

// -----

// A splat constant operand becomes a constant in the reader's body. dO * 1
// (autograd's gradient of a sum) then folds to dO: the multiply is a copy,
// which the contraction reads in place.
// CHECK-LABEL: func.func @splat_ones_into_contraction
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[W:.*]]: tensor<32x8xf32>)
// CHECK-NOT: dense<1.0
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<16x32xf32>, tensor<32x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: return %[[R]]
// PLAN-LABEL: func.func @splat_ones_into_contraction
// PLAN: fusion.group
// PLAN-NOT: fusion.group
// PLAN: return
func.func @splat_ones_into_contraction(%x: tensor<16x32xf32>, %w: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %ones = arith.constant dense<1.0> : tensor<16x32xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ones : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%g, %w : tensor<16x32xf32>, tensor<32x8xf32>) outs(%f : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

// A fill of a constant read as an operand, and a splat of another value: both
// become body constants; the tensor that is not a splat stays an operand.
// CHECK-LABEL: func.func @splat_and_fill_operands
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[D:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[D]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: arith.mulf %[[A]], %[[TWO]]
// CHECK-DAG: arith.addf %{{.*}}, %[[THREE]]
// CHECK-DAG: arith.subf %{{.*}}, %[[B]]
func.func @splat_and_fill_operands(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = arith.constant dense<2.0> : tensor<4x8xf32>
  %d = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %c3 = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %three = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : f32) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %two, %d, %three : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %t: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %t : f32
    %s = arith.addf %m, %c : f32
    %u = arith.subf %s, %b : f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Negative: the splat is the only operand that gives the reduced loop its
// range (linalg could not infer it without): it stays an operand. The fill
// of an element read from a 0-d tensor is read where the reduction reads it:
// the 0-d tensor is an input read through a constant map (no scalar crosses
// into a group).
// CHECK-LABEL: func.func @splat_that_gives_a_loop_its_range
// CHECK-SAME: (%[[T:.*]]: tensor<f32>)
// CHECK: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<4x8xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0)>]{{.*}} ins(%[[C]], %[[T]] : tensor<4x8xf32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[A]], %[[S]]
func.func @splat_that_gives_a_loop_its_range(%t: tensor<f32>) -> tensor<4xf32> {
  %c = arith.constant dense<0.5> : tensor<4x8xf32>
  %s = tensor.extract %t[] : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : f32) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%c, %f : tensor<4x8xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s2 = arith.addf %o, %m : f32
    linalg.yield %s2 : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Scalars computed outside a body (an element of a 0-d tensor, arithmetic
// on it) are computed in the body that uses them; constants stay outside.
// The element is then an input read through a constant map; planned, the
// 0-d tensor is an input of the group.
// CHECK-LABEL: func.func @scalar_computed_outside
// CHECK-SAME: (%[[T:.*]]: tensor<f32>, %[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[TWO:.*]] = arith.constant 2.0
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[T]] : tensor<4x8xf32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[E:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[E]], %[[TWO]]
// CHECK-NEXT: arith.mulf %[[A]], %[[S]]
// PLAN-LABEL: func.func @scalar_computed_outside
// PLAN-SAME: (%[[T:.*]]: tensor<f32>, %[[X:.*]]: tensor<4x8xf32>)
// PLAN: fusion.group "g0" "elementwise" ins(%{{.*}}, %{{.*}} : tensor<{{.*}}>, tensor<{{.*}}>)
// PLAN-NOT: fusion.group
// PLAN: return
func.func @scalar_computed_outside(%t: tensor<f32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = tensor.extract %t[] : tensor<f32>
  %c2 = arith.constant 2.0 : f32
  %s = arith.mulf %s0, %c2 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Comparisons and clamps the loop ranges decide fold (i in [0, 3], j in
// [0, 7]): a slice of a concat [x; y] along rows 0..3 reads only x, and the
// read at loop indices is then an input (not a gather); i - 4 < 0 always,
// so torch's negative-index wrap (i < 0 ? i + 4 : i) folds too.
// CHECK-LABEL: func.func @decided_index_arithmetic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[A]]
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @decided_index_arithmetic(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %iy = arith.subi %i, %c4 : index
    %neg = arith.cmpi slt, %iy, %c0 : index
    %wrapped = arith.addi %iy, %c4 : index
    %iw = arith.select %neg, %wrapped, %iy : index
    %iy0 = arith.maxsi %iw, %c0 : index
    %iy1 = arith.minsi %iy0, %c3 : index
    %vy = tensor.extract %y[%iy1, %j] : tensor<4x8xf32>
    %ix0 = arith.maxsi %i, %c0 : index
    %ix1 = arith.minsi %ix0, %c3 : index
    %vx = tensor.extract %x[%ix1, %j] : tensor<4x8xf32>
    %inx = arith.cmpi slt, %i, %c4 : index
    %v = arith.select %inx, %vx, %vy : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Negative: the comparison depends on a value read from a tensor, and a
// gather of part of a tensor at loop indices stays a gather (as an input it
// would give its loop the tensor's extent).
// CHECK-LABEL: func.func @undecided_index_arithmetic
// CHECK: arith.cmpi slt
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<16xf32>
func.func @undecided_index_arithmetic(%x: tensor<16xf32>, %n: tensor<8xi64>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%n : tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%k: i64, %o: f32):
    %i = linalg.index 0 : index
    %neg = arith.cmpi slt, %k, %c0 : i64
    %v = tensor.extract %x[%i] : tensor<16xf32>
    %z = arith.constant 0.0 : f32
    %w = arith.select %neg, %z, %v : f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Index arithmetic the loop ranges reduce to a loop index is that index (b
// in [0, 1], t in [0, 7]): a reader of a reshape that runs over the
// reshape's loops linearizes its old index (t + 8 * b), and a gather
// through the same reshape delinearizes it, ((t + 8 * b) mod 8, ((t + 8 *
// b) floordiv 8) mod 2) = (t, b). The gather then reads x at (b, t, label).
// CHECK-LABEL: func.func @index_arithmetic_at_loop_indices
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x9x5xf32>, %[[L:[^:]*]]: tensor<2x8xi64>)
// CHECK: linalg.generic
// CHECK-DAG: %[[T:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[B:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[K:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NOT: arith.remsi
// CHECK-NOT: arith.divsi
// CHECK: tensor.extract %[[X]][%[[B]], %[[T]], %[[K]]] : tensor<2x9x5xf32>
func.func @index_arithmetic_at_loop_indices(%x: tensor<2x9x5xf32>, %l: tensor<2x8xi64>) -> tensor<2x8xf32> {
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b, t)>], iterator_types = ["parallel", "parallel"]}
      ins(%l : tensor<2x8xi64>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%k: i64, %o: f32):
    %t = linalg.index 1 : index
    %b = linalg.index 0 : index
    %b8 = arith.muli %b, %c8 : index
    %row = arith.addi %t, %b8 : index
    %ki = arith.index_cast %k : i64 to index
    %tt = arith.remsi %row, %c8 : index
    %q = arith.divsi %row, %c8 : index
    %bb = arith.remsi %q, %c2 : index
    %v = tensor.extract %x[%bb, %tt, %ki] : tensor<2x9x5xf32>
    linalg.yield %v : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// Negative: (t + 8 * b) mod 3 is no loop index: the arithmetic stays.
// CHECK-LABEL: func.func @index_arithmetic_not_at_loop_indices
// CHECK: arith.remsi %{{.*}}, %{{.*}} : index
// CHECK: tensor.extract
func.func @index_arithmetic_not_at_loop_indices(%x: tensor<3x5xf32>, %l: tensor<2x8xi64>) -> tensor<2x8xf32> {
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b, t)>], iterator_types = ["parallel", "parallel"]}
      ins(%l : tensor<2x8xi64>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%k: i64, %o: f32):
    %t = linalg.index 1 : index
    %b = linalg.index 0 : index
    %b8 = arith.muli %b, %c8 : index
    %row = arith.addi %t, %b8 : index
    %ki = arith.index_cast %k : i64 to index
    %m = arith.remsi %row, %c3 : index
    %v = tensor.extract %x[%m, %ki] : tensor<3x5xf32>
    linalg.yield %v : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// A reshape of a gather is the gather over the reshaped space (torch.stack
// along an inner axis views a concat with a new axis): the expand's index
// (i, s, j) is the gather's (i, s * 4 + j), a collapse's index c is
// (c floordiv 8, c mod 8). The elementwise reader then evaluates the gather.
// CHECK-LABEL: func.func @reshapes_of_a_gather
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x8xf32>, %[[C:[^:]*]]: tensor<4x2x4xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<4x2x4xf32>)
// CHECK: %[[S:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[M:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[K:.*]] = arith.addi %[[J]], %[[M]] : index
// CHECK: tensor.extract %[[X]][%{{.*}}, %[[K]]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<32xf32>)
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: tensor.extract %[[X]]
// CHECK: return
func.func @reshapes_of_a_gather(%x: tensor<6x8xf32>, %c: tensor<4x2x4xf32>) -> (tensor<4x2x4xf32>, tensor<32xf32>) {
  %half = tensor.extract_slice %x[1, 0] [4, 8] [1, 1] : tensor<6x8xf32> to tensor<4x8xf32>
  %s = tensor.expand_shape %half [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %e = tensor.empty() : tensor<4x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, s, j) -> (i, s, j)>, affine_map<(i, s, j) -> (i, s, j)>, affine_map<(i, s, j) -> (i, s, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %c : tensor<4x2x4xf32>, tensor<4x2x4xf32>) outs(%e : tensor<4x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x2x4xf32>
  %flat = tensor.collapse_shape %half [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %r, %flat : tensor<4x2x4xf32>, tensor<32xf32>
}

// -----

// torch-mlir gathers group norm's statistics per channel through constant
// index tensors: n (the row) and c floordiv 2 (the group of channel c). The
// tensors hold functions of their position, computed from linalg.index
// instead of loaded; the gather at (n, c floordiv 2) then splits the
// channel loop in two (c = g * 2 + k): the statistics are read at (n, g), an
// ordinary input (a broadcast over k, collapsed back to [2, 4]: a copy the
// collapse folds into, reading through (n, c floordiv 2)).
// CHECK-LABEL: func.func @index_tensors_as_positions
// CHECK-SAME: (%[[S:[^:]*]]: tensor<2x2xf32>)
// CHECK-NOT: arith.constant dense
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[A]]
// CHECK-NOT: tensor.extract
// CHECK: return %[[G]]
func.func @index_tensors_as_positions(%s: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %n = arith.constant dense<[[0, 0, 0, 0], [1, 1, 1, 1]]> : tensor<2x4xi64>
  %g = arith.constant dense<[[0, 0, 1, 1], [0, 0, 1, 1]]> : tensor<2x4xi64>
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%n, %g : tensor<2x4xi64>, tensor<2x4xi64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: i64, %b: i64, %o: f32):
    %i = arith.index_cast %a : i64 to index
    %j = arith.index_cast %b : i64 to index
    %v = tensor.extract %s[%i, %j] : tensor<2x2xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// The other kinds of positions: an arange with an offset and a step
// (3 + 2 * j) and a cycle (j mod 2), each computed from linalg.index.
// CHECK-LABEL: func.func @arange_and_cycle_positions
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-NOT: arith.constant dense
// CHECK: linalg.generic {{.*}} outs(
// CHECK-DAG: %[[J1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[M:.*]] = arith.remsi %[[J1]], %[[C2]] : index
// CHECK-DAG: arith.index_cast %[[M]] : index to i64
// CHECK-DAG: %[[J2:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[S:.*]] = arith.muli %[[J2]], %[[C2]] : index
// CHECK-DAG: %[[A:.*]] = arith.addi %[[S]], %[[C3]] : index
// CHECK-DAG: arith.index_cast %[[A]] : index to i32
// CHECK: return
func.func @arange_and_cycle_positions() -> (tensor<3x4xi32>, tensor<3x4xi64>) {
  %a = arith.constant dense<[[3, 5, 7, 9], [3, 5, 7, 9], [3, 5, 7, 9]]> : tensor<3x4xi32>
  %m = arith.constant dense<[[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1]]> : tensor<3x4xi64>
  %e = tensor.empty() : tensor<3x4xi32>
  %e2 = tensor.empty() : tensor<3x4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %m : tensor<3x4xi32>, tensor<3x4xi64>) outs(%e, %e2 : tensor<3x4xi32>, tensor<3x4xi64>) {
  ^bb0(%x: i32, %y: i64, %o: i32, %o2: i64):
    %z = arith.addi %x, %x : i32
    %w = arith.muli %y, %y : i64
    linalg.yield %z, %w : i32, i64
  } -> (tensor<3x4xi32>, tensor<3x4xi64>)
  return %r#0, %r#1 : tensor<3x4xi32>, tensor<3x4xi64>
}

// -----

// Negative: indices that are no function of one position (a permutation of
// the channels), and a division of a loop whose range is no multiple of
// the divisor (i floordiv 2 over 5): the index tensor stays an input and
// the gathers stay gathers.
// CHECK-LABEL: func.func @positions_that_stay_gathers
// CHECK: arith.constant dense<{{\[}}[2, 0, 3, 1]]> : tensor<1x4xi64>
// CHECK: tensor.extract
// CHECK: arith.divsi
// CHECK: tensor.extract
func.func @positions_that_stay_gathers(%s: tensor<4xf32>, %t: tensor<3xf32>) -> (tensor<1x4xf32>, tensor<5xf32>) {
  %p = arith.constant dense<[[2, 0, 3, 1]]> : tensor<1x4xi64>
  %e = tensor.empty() : tensor<1x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<1x4xi64>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%a: i64, %o: f32):
    %i = arith.index_cast %a : i64 to index
    %v = tensor.extract %s[%i] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<1x4xf32>
  %c2 = arith.constant 2 : index
  %e5 = tensor.empty() : tensor<5xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e5 : tensor<5xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %q = arith.divsi %i, %c2 : index
    %v = tensor.extract %t[%q] : tensor<3xf32>
    linalg.yield %v : f32
  } -> tensor<5xf32>
  return %r, %h : tensor<1x4xf32>, tensor<5xf32>
}

// -----

// A gather through views: a [4, 4] view of a [16] tensor read at
// (i floordiv 4, i mod 4) is the tensor read at i; a [4, 1] view read at
// (i, 0) is the [4] tensor read at i (the unit dimension read at a
// constant is dropped). Both become inputs.
// CHECK-LABEL: func.func @gathers_through_views
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]{{.*}} ins(%[[X]] : tensor<16xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]{{.*}} ins(%[[Y]] : tensor<4xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @gathers_through_views(%x: tensor<16xf32>, %y: tensor<4xf32>) -> (tensor<16xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %v = tensor.expand_shape %x [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e : tensor<16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %q = arith.divui %i, %c4 : index
    %m = arith.remui %i, %c4 : index
    %a = tensor.extract %v[%q, %m] : tensor<4x4xf32>
    linalg.yield %a : f32
  } -> tensor<16xf32>
  %u = tensor.expand_shape %y [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e4 : tensor<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %a = tensor.extract %u[%i, %c0] : tensor<4x1xf32>
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r, %s : tensor<16xf32>, tensor<4xf32>
}

// -----

// A pad of a pad of a one-element tensor (a random program, seed 3606): the
// inner pad's gather becomes a read of x collapsed to rank 0; the outer
// pad, gathering through the inner one's body, reads the same collapse. It
// read x itself through the rank-0 map, which the verifier refused (a
// collapse to rank 0 has no reassociation groups: x's dimension is read at 0).
// CHECK-LABEL: func.func @pad_of_pad_of_one_element
// CHECK-SAME: (%[[X:.*]]: tensor<1xf64>)
// CHECK: %[[C0:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1xf64> into tensor<f64>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], {{.*}} ins(%[[C0]] : tensor<f64>) outs(%{{.*}} : tensor<2xf64>)
// CHECK: %[[C1:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1xf64> into tensor<f64>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], {{.*}} ins(%[[C1]] : tensor<f64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK-NOT: tensor.extract
// PLAN-LABEL: func.func @pad_of_pad_of_one_element
func.func @pad_of_pad_of_one_element(%x: tensor<1xf64>) -> (tensor<2xf64>, tensor<4xf64>) {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f64
  %m1 = arith.constant -1.000000e+00 : f64
  %e2 = tensor.empty() : tensor<2xf64>
  %p = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e2 : tensor<2xf64>) {
  ^bb0(%out: f64):
    %i = linalg.index 0 : index
    %ge = arith.cmpi sge, %i, %c0 : index
    %lt = arith.cmpi slt, %i, %c1 : index
    %in = arith.andi %ge, %lt : i1
    %lo = arith.maxsi %i, %c0 : index
    %at = arith.minsi %lo, %c0 : index
    %v = tensor.extract %x[%at] : tensor<1xf64>
    %r = arith.select %in, %v, %m1 : f64
    linalg.yield %r : f64
  } -> tensor<2xf64>
  %e2b = tensor.empty() : tensor<2xf64>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : tensor<2xf64>) outs(%e2b : tensor<2xf64>) {
  ^bb0(%a: f64, %out: f64):
    %s = arith.mulf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<2xf64>
  %e4 = tensor.empty() : tensor<4xf64>
  %pp = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e4 : tensor<4xf64>) {
  ^bb0(%out: f64):
    %i = linalg.index 0 : index
    %ge = arith.cmpi sge, %i, %c0 : index
    %lt = arith.cmpi slt, %i, %c2 : index
    %in = arith.andi %ge, %lt : i1
    %lo = arith.maxsi %i, %c0 : index
    %at = arith.minsi %lo, %c1 : index
    %v = tensor.extract %p[%at] : tensor<2xf64>
    %r = arith.select %in, %v, %zero : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  return %sq, %pp : tensor<2xf64>, tensor<4xf64>
}

// -----

// x[:, :12, 0] of a [4, 13, 5] x collapsed to [48] (a random program, seed
// 630): the slice is a gather over part of x's dimension 1, so splitting
// the merged loop for it would leave a gather, whose collapse merges the
// loop again; the two rewrites took turns until the budget ran out. The
// loop stays merged: one gather at (i floordiv 12, i mod 12, 0).
// CHECK-LABEL: func.func @collapsed_strided_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x13x5xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<48xf32>)
// CHECK: tensor.extract %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<4x13x5xf32>
// CHECK: math.exp
// CHECK-NOT: tensor.collapse_shape
// PLAN-LABEL: func.func @collapsed_strided_slice
// PLAN: fusion.group
func.func @collapsed_strided_slice(%x: tensor<4x13x5xf32>) -> tensor<48xf32> {
  %s = tensor.extract_slice %x[0, 0, 0] [4, 12, 1] [1, 1, 1] : tensor<4x13x5xf32> to tensor<4x12xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<4x12xf32> into tensor<48xf32>
  %e = tensor.empty() : tensor<48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<48xf32>) outs(%e : tensor<48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<48xf32>
  return %r : tensor<48xf32>
}
