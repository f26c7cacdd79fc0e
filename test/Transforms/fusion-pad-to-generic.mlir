// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-pad-to-generic))' \
// RUN:   | FileCheck %s

// fusion-pad-to-generic: a tensor.pad of static shape, constant non-negative
// low/high amounts and a padding value that does not depend on the position
// becomes a linalg.generic over the padded space with no inputs (the source
// is read with tensor.extract, a gather) that computes
//
//   out[i] = inside(i) ? src[clamp(i - low, 0, size - 1)] : pad
//
// Every other pad is left unchanged.

// One padded dimension: low 1, high 2 around 8 elements (11 in all). Inside
// is 1 <= i < 9; the source index i - 1 is clamped to [0, 7], so every read
// is in bounds.
// CHECK-LABEL: func.func @pad_1d
// CHECK-SAME: (%[[SRC:[^:]*]]: tensor<8xf32>) -> tensor<11xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK-DAG: %[[PAD:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<11xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(%[[E]] : tensor<11xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[C9]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[SH:.*]] = arith.subi %[[I]], %[[C1]] : index
// CHECK-NEXT: %[[LO:.*]] = arith.maxsi %[[SH]], %[[C0]] : index
// CHECK-NEXT: %[[AT:.*]] = arith.minsi %[[LO]], %[[C7]] : index
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[SRC]][%[[AT]]] : tensor<8xf32>
// CHECK-NEXT: %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[PAD]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<11xf32>
// CHECK-NEXT: return %[[G]] : tensor<11xf32>
func.func @pad_1d(%src: tensor<8xf32>) -> tensor<11xf32> {
  %cst = arith.constant 0.5 : f32
  %p = tensor.pad %src low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<11xf32>
  return %p : tensor<11xf32>
}

// -----

// The padding value is an arith.constant defined inside the pad's region:
// it is cloned for the generic body (the region goes away with the pad;
// the pattern driver then hoists the clone to the function's entry, like
// every constant), and the select yields it. Only dimension 1 is padded (low 2, high 1 around 6:
// inside is 2 <= j < 8, the index is clamped to [0, 5]); dimension 0 reads
// the source at the loop index itself, with no compare and no clamp.
// CHECK-LABEL: func.func @pad_inner_constant
// CHECK-SAME: (%[[SRC:[^:]*]]: tensor<4x6xf32>) -> tensor<4x9xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[PAD:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x9xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[J]], %[[C8]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[SH:.*]] = arith.subi %[[J]], %[[C2]] : index
// CHECK-NEXT: %[[LO:.*]] = arith.maxsi %[[SH]], %[[C0]] : index
// CHECK-NEXT: %[[AT:.*]] = arith.minsi %[[LO]], %[[C5]] : index
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[SRC]][%[[I]], %[[AT]]] : tensor<4x6xf32>
// CHECK-NEXT: %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[PAD]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<4x9xf32>
// CHECK-NOT: tensor.pad
func.func @pad_inner_constant(%src: tensor<4x6xf32>) -> tensor<4x9xf32> {
  %p = tensor.pad %src low[0, 2] high[0, 1] {
  ^bb0(%i: index, %j: index):
    %c = arith.constant -1.0 : f32
    tensor.yield %c : f32
  } : tensor<4x6xf32> to tensor<4x9xf32>
  return %p : tensor<4x9xf32>
}

// -----

// Rank 3, two padded dimensions: dimension 1 (low 1, high 0 around 3: inside
// is 1 <= j < 4, clamped to [0, 2]) and dimension 2 (low 0, high 2 around 4:
// inside is 0 <= k < 4, clamped to [0, 3]; a zero low amount still tests
// and clamps when the dimension grows; k - 0 folds away). Dimension 0 is
// not padded. The two
// tests are combined into one predicate. The padding value is a function
// argument (defined outside the region): the select uses it directly.
// CHECK-LABEL: func.func @pad_3d
// CHECK-SAME: (%[[SRC:[^:]*]]: tensor<2x3x4xf32>, %[[PV:[^:]*]]: f32) -> tensor<2x4x6xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x4x6xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[JGE:.*]] = arith.cmpi sge, %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[JLT:.*]] = arith.cmpi slt, %[[J]], %[[C4]] : index
// CHECK-NEXT: %[[JIN:.*]] = arith.andi %[[JGE]], %[[JLT]] : i1
// CHECK-NEXT: %[[JSH:.*]] = arith.subi %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[JLO:.*]] = arith.maxsi %[[JSH]], %[[C0]] : index
// CHECK-NEXT: %[[JAT:.*]] = arith.minsi %[[JLO]], %[[C2]] : index
// CHECK-NEXT: %[[KGE:.*]] = arith.cmpi sge, %[[K]], %[[C0]] : index
// CHECK-NEXT: %[[KLT:.*]] = arith.cmpi slt, %[[K]], %[[C4]] : index
// CHECK-NEXT: %[[KIN:.*]] = arith.andi %[[KGE]], %[[KLT]] : i1
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[JIN]], %[[KIN]] : i1
// CHECK-NEXT: %[[KLO:.*]] = arith.maxsi %[[K]], %[[C0]] : index
// CHECK-NEXT: %[[KAT:.*]] = arith.minsi %[[KLO]], %[[C3]] : index
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[SRC]][%[[I]], %[[JAT]], %[[KAT]]] : tensor<2x3x4xf32>
// CHECK-NEXT: %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[PV]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<2x4x6xf32>
func.func @pad_3d(%src: tensor<2x3x4xf32>, %v: f32) -> tensor<2x4x6xf32> {
  %p = tensor.pad %src low[0, 1, 0] high[0, 0, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %v : f32
  } : tensor<2x3x4xf32> to tensor<2x4x6xf32>
  return %p : tensor<2x4x6xf32>
}

// -----

// A pad that pads nothing (nofold: otherwise it folds to its source) is a
// plain copy: the generic reads the source at the loop indices, with no
// compare, no clamp and no select.
// CHECK-LABEL: func.func @pad_nothing
// CHECK-SAME: (%[[SRC:[^:]*]]: tensor<4x6xi32>) -> tensor<4x6xi32>
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%{{.*}}: i32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[SRC]][%[[I]], %[[J]]] : tensor<4x6xi32>
// CHECK-NEXT: linalg.yield %[[X]] : i32
// CHECK-NEXT: } -> tensor<4x6xi32>
func.func @pad_nothing(%src: tensor<4x6xi32>) -> tensor<4x6xi32> {
  %c = arith.constant 7 : i32
  %p = tensor.pad %src nofold low[0, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : i32
  } : tensor<4x6xi32> to tensor<4x6xi32>
  return %p : tensor<4x6xi32>
}

// -----

// Negative: a dynamic padding amount (low[%l]) is left unchanged.
// CHECK-LABEL: func.func @pad_dynamic_amount
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %{{.*}} low[%{{.*}}] high[2]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_dynamic_amount(%src: tensor<8xf32>, %l: index) -> tensor<?xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %src low[%l] high[2] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}

// -----

// Negative: a dynamic source shape is left unchanged.
// CHECK-LABEL: func.func @pad_dynamic_source
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %{{.*}} low[1] high[1]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_dynamic_source(%src: tensor<?xf32>) -> tensor<?xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %src low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<?xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}

// -----

// Negative: the padding value depends on the position (it is computed from
// the region's index argument), so it is not one value: left unchanged.
// CHECK-LABEL: func.func @pad_position_dependent
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %{{.*}} low[1] high[1] {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index):
// CHECK-NEXT: %[[N:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[N]] : i32 to f32
// CHECK-NEXT: tensor.yield %[[F]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_position_dependent(%src: tensor<8xf32>) -> tensor<10xf32> {
  %p = tensor.pad %src low[1] high[1] {
  ^bb0(%i: index):
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    tensor.yield %f : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p : tensor<10xf32>
}

// -----

// Negative: an empty source (a dimension of size 0) has nothing to read in
// bounds, so the clamp has no valid index: left unchanged.
// CHECK-LABEL: func.func @pad_empty_source
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %{{.*}} low[1, 0] high[1, 0]
// CHECK: } : tensor<0x4xf32> to tensor<2x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_empty_source(%src: tensor<0x4xf32>) -> tensor<2x4xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %src low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<0x4xf32> to tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}

// -----

// Negative: a negative amount (a crop) is left unchanged.
// CHECK-LABEL: func.func @pad_negative_amount
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %{{.*}} low[-1] high[0]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pad_negative_amount(%src: tensor<8xf32>) -> tensor<7xf32> {
  %cst = arith.constant 0.5 : f32
  %p = tensor.pad %src low[-1] high[0] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<7xf32>
  return %p : tensor<7xf32>
}

// -----

// The same pass reads a gather of the only use of an elementwise producer
// through that producer: pad(exp(...)) reads the producer's inputs at the
// clamped point (each through its own map: identity, transposed, a row
// broadcast, a scalar) and evaluates the producer's body there. The
// producer's generic and its intermediate tensor disappear.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#sc = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @pad_of_elementwise
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x6xf32>, %[[Y:[^:]*]]: tensor<6x4xf32>, %[[R:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: f32) -> tensor<4x9xf32>
// CHECK-DAG: %[[PAD:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: tensor.pad
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x9xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[AT:.*]] = arith.minsi
// CHECK-NEXT: %[[A:.*]] = tensor.extract %[[X]][%[[I]], %[[AT]]] : tensor<4x6xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract %[[Y]][%[[AT]], %[[I]]] : tensor<6x4xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.extract %[[R]][%[[I]]] : tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[V1:.*]] = arith.mulf %[[V0]], %[[C]] : f32
// CHECK-NEXT: %[[V2:.*]] = arith.subf %[[V1]], %[[S]] : f32
// CHECK-NEXT: %[[V3:.*]] = math.exp %[[V2]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[IN]], %[[V3]], %[[PAD]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<4x9xf32>
// CHECK-NEXT: return %[[G]] : tensor<4x9xf32>
func.func @pad_of_elementwise(%x: tensor<4x6xf32>, %y: tensor<6x4xf32>, %r: tensor<4xf32>, %s: f32) -> tensor<4x9xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.generic {indexing_maps = [#id2, #tr, #row, #sc, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %r, %s : tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>, f32) outs(%e : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %out: f32):
    %v0 = arith.addf %a, %b : f32
    %v1 = arith.mulf %v0, %c : f32
    %v2 = arith.subf %v1, %d : f32
    %v3 = math.exp %v2 : f32
    linalg.yield %v3 : f32
  } -> tensor<4x6xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[0, 2] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<4x6xf32> to tensor<4x9xf32>
  return %p : tensor<4x9xf32>
}

// -----

// Negative (gather through a producer): the producer's result is also
// returned; the pad still becomes a gather, but of the producer's result.
#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @pad_of_shared_elementwise
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: math.exp
// CHECK: } -> tensor<8xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK-NOT: math.exp
// CHECK: tensor.extract %[[T]][%{{.*}}] : tensor<8xf32>
// CHECK-NOT: math.exp
// CHECK: return %{{.*}}, %[[T]]
func.func @pad_of_shared_elementwise(%x: tensor<8xf32>) -> (tensor<10xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p, %t : tensor<10xf32>, tensor<8xf32>
}

// -----

// A gather that runs few times (once per row: 4 runs, the producer has 256
// elements and 2 tensor inputs) recomputes a producer that has other uses:
// torch's cross-entropy picks the label's log-probability out of a whole
// x - max. The producer stays for the row sum; the pick reads x and m.
#id2s = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
#id1s = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @pick_from_shared_elementwise
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x64xf32>, %[[M:[^:]*]]: tensor<4xf32>, %[[L:[^:]*]]: tensor<4xindex>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[M]] : tensor<4x64xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[L]] : tensor<4xindex>)
// CHECK-NEXT: ^bb0(%[[C:[^:]*]]: index, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[A:.*]] = tensor.extract %[[X]][%[[I]], %[[C]]] : tensor<4x64xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract %[[M]][%[[I]]] : tensor<4xf32>
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[D]] : f32
// CHECK: return %[[S]], %{{.*}}
func.func @pick_from_shared_elementwise(%x: tensor<4x64xf32>, %m: tensor<4xf32>, %l: tensor<4xindex>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#id2s, #rows, #id2s], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2s, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id1s, #id1s], iterator_types = ["parallel"]}
      ins(%l : tensor<4xindex>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%c: index, %out: f32):
    %i = linalg.index 0 : index
    %v = tensor.extract %t[%i, %c] : tensor<4x64xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %s, %p : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative (gather through a producer): a gather that runs as often as the
// shared producer has elements (256 runs, 2 tensor inputs: 512 reads
// instead of 256) gathers from the producer's result.
#id2s = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @many_picks_from_shared_elementwise
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.index 0
// CHECK-NEXT: linalg.index 1
// CHECK-NEXT: arith.subi
// CHECK-NEXT: tensor.extract %[[T]]
// CHECK-NEXT: linalg.yield
func.func @many_picks_from_shared_elementwise(%x: tensor<4x64xf32>, %m: tensor<4xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#id2s, #rows, #id2s], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %c63 = arith.constant 63 : index
  %r = linalg.generic {indexing_maps = [#id2s], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x64xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.subi %c63, %j : index
    %v = tensor.extract %t[%i, %k] : tensor<4x64xf32>
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  return %t, %r : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// Negative (gather through a producer): a producer marked fusion.materialize
// is kept and gathered from.
#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @pad_of_materialized
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>) attrs = {fusion.materialize}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK-NOT: math.exp
// CHECK: tensor.extract %[[T]][%{{.*}}] : tensor<8xf32>
func.func @pad_of_materialized(%x: tensor<8xf32>) -> tensor<10xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"], fusion.materialize}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p : tensor<10xf32>
}

// -----

// Gather through a producer that reads linalg.index: the producer's index
// is the gathered (clamped) position, so it is evaluated there too. A row
// reduction (not elementwise) below is kept and gathered from.
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @pad_of_index_producer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: ins(
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK: %[[CL:.*]] = arith.minsi
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[CL]]] : tensor<8xf32>
// CHECK: %[[N:.*]] = arith.index_cast %[[CL]] : index to i32
// CHECK: arith.sitofp %[[N]]
// CHECK: return
func.func @pad_of_index_producer(%x: tensor<8xf32>) -> tensor<10xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %v = arith.addf %a, %f : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p : tensor<10xf32>
}
// CHECK-LABEL: func.func @pad_of_reduction
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x4xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK: tensor.extract %[[T]][%{{.*}}] : tensor<8xf32>
// CHECK: return
func.func @pad_of_reduction(%x: tensor<8x4xf32>) -> tensor<10xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.addf %a, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %p = tensor.pad %t low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p : tensor<10xf32>
}

// -----

// Negative for reading through the producer: a producer whose body reads its
// outs operand (it updates %acc) stays, and the gather reads its result.
// CHECK-LABEL: func.func @gather_of_an_update
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: tensor.extract %[[P]]
func.func @gather_of_an_update(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<10xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %s low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<10xf32>
  return %p : tensor<10xf32>
}

// -----

// tensor.concat of static shapes: a gather over the result. Along the
// concatenated dimension (1), each input is read at its clamped position
// (b at j - 3, clamped to [0, 4]; a at j, clamped to [0, 2]) and a select
// picks a where j < 3: no branch, every read in bounds.
// CHECK-LABEL: func.func @concat_two
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x3xf32>, %[[B:[^:]*]]: tensor<4x5xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[JB:.*]] = arith.subi %[[J]], %[[C3]] : index
// CHECK-NEXT: %[[JB0:.*]] = arith.maxsi %[[JB]], %[[C0]] : index
// CHECK-NEXT: %[[JB1:.*]] = arith.minsi %[[JB0]], %[[C4]] : index
// CHECK-NEXT: %[[VB:.*]] = tensor.extract %[[B]][%[[I]], %[[JB1]]] : tensor<4x5xf32>
// CHECK-NEXT: %[[JA0:.*]] = arith.maxsi %[[J]], %[[C0]] : index
// CHECK-NEXT: %[[JA1:.*]] = arith.minsi %[[JA0]], %[[C2]] : index
// CHECK-NEXT: %[[VA:.*]] = tensor.extract %[[A]][%[[I]], %[[JA1]]] : tensor<4x3xf32>
// CHECK-NEXT: %[[IN_A:.*]] = arith.cmpi slt, %[[J]], %[[C3]] : index
// CHECK-NEXT: %[[V:.*]] = arith.select %[[IN_A]], %[[VA]], %[[VB]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NOT: tensor.concat
func.func @concat_two(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// Negative: a concat of dynamic shapes is left as it is.
// CHECK-LABEL: func.func @concat_dynamic
// CHECK-NEXT: tensor.concat dim(0)
// CHECK-NOT: linalg.generic
func.func @concat_dynamic(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %c : tensor<?x3xf32>
}

// -----

// torch.roll: a concat of two slices each cast to a dynamic size reads the
// static slices.
// CHECK-LABEL: func.func @concat_of_casts
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x3xf32>, %[[B:[^:]*]]: tensor<4x5xf32>)
// CHECK-NOT: tensor.concat
// CHECK: tensor.extract %[[B]]
// CHECK: tensor.extract %[[A]]
// CHECK-NOT: tensor.concat
func.func @concat_of_casts(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %ca = tensor.cast %a : tensor<4x3xf32> to tensor<4x?xf32>
  %cb = tensor.cast %b : tensor<4x5xf32> to tensor<4x?xf32>
  %c = tensor.concat dim(1) %ca, %cb : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A strided insert into a fill (a transposed convolution's zero-stuffed
// input): position (i, j) holds x[(i - 1) / 2, j / 3] where i - 1 and j are
// non-negative multiples of the strides below the slice's extent, else the
// fill's value.
// CHECK-LABEL: func.func @strided_insert_into_fill
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x8xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: arith.cmpi sge, %[[I]], %[[C1:.*]] : index
// CHECK: arith.cmpi slt, %[[I]], %[[C5:.*]] : index
// CHECK: %[[RI:.*]] = arith.subi %[[I]], %[[C1]] : index
// CHECK: arith.remsi %[[RI]], %[[C2:.*]] : index
// CHECK: %[[QI:.*]] = arith.divsi %[[RI]], %[[C2]] : index
// CHECK: arith.maxsi %[[QI]]
// CHECK: arith.cmpi slt, %[[J]], %[[C9:.*]] : index
// CHECK: arith.remsi %[[J]], %[[C3:.*]] : index
// CHECK: arith.divsi %[[J]], %[[C3]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]]
// CHECK: arith.select %{{.*}}, %[[V]], %[[Z]] : f32
// CHECK-NOT: tensor.insert_slice
func.func @strided_insert_into_fill(%x: tensor<2x3xf32>) -> tensor<5x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x8xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%z : f32) outs(%e : tensor<5x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<5x8xf32>
  %r = tensor.insert_slice %x into %f[1, 0] [2, 3] [2, 3] : tensor<2x3xf32> into tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}

// -----

// An insert into a tensor that is not a fill (torch's slice_scatter) reads
// the destination outside the slice; a dimension the source drops (rank
// reduction) is only tested, not read.
// CHECK-LABEL: func.func @insert_into_tensor
// CHECK-SAME: (%[[D:[^:]*]]: tensor<4x6xf32>, %[[S:[^:]*]]: tensor<6xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[V:.*]] = tensor.extract %[[S]][%[[J]]] : tensor<6xf32>
// CHECK: %[[W:.*]] = tensor.extract %[[D]][%[[I]], %[[J]]] : tensor<4x6xf32>
// CHECK: arith.select %{{.*}}, %[[V]], %[[W]] : f32
func.func @insert_into_tensor(%d: tensor<4x6xf32>, %s: tensor<6xf32>) -> tensor<4x6xf32> {
  %r = tensor.insert_slice %s into %d[2, 0] [1, 6] [1, 1] : tensor<6xf32> into tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// Negative: an insert at a dynamic offset is left as it is.
// CHECK-LABEL: func.func @insert_dynamic_offset
// CHECK: tensor.insert_slice
func.func @insert_dynamic_offset(%d: tensor<4x6xf32>, %s: tensor<6xf32>, %i: index) -> tensor<4x6xf32> {
  %r = tensor.insert_slice %s into %d[%i, 0] [1, 6] [1, 1] : tensor<6xf32> into tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
