// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(fusion-results-in-place))' \
// RUN:   | FileCheck %s

// fusion-results-in-place: a buffer copied into an output argument through
// reshapes (unit dimensions restored before the return) is the output
// itself, seen through the inverse reshapes; the copy goes.

// The result [1, 128, 1] was computed as [128]: the store goes to the
// output collapsed to [128], and nothing is copied.
// CHECK-LABEL: func.func @unit_dims
// CHECK-SAME: (%[[X:[^:]*]]: memref<128xf32>, %[[OUT:[^:]*]]: memref<1x128x1xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[V:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1, 2]] : memref<1x128x1xf32> into memref<128xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[V]] : memref<128xf32> to memref<128xf32>
// CHECK-NEXT: return
func.func @unit_dims(%x: memref<128xf32>, %out: memref<1x128x1xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  memref.copy %x, %buf : memref<128xf32> to memref<128xf32>
  %e = memref.expand_shape %buf [[0, 1, 2]] output_shape [1, 128, 1] : memref<128xf32> into memref<1x128x1xf32>
  memref.copy %e, %out : memref<1x128x1xf32> to memref<1x128x1xf32>
  return
}

// -----

// Two reshapes (a collapse, then an expand): both undone, in reverse order.
// CHECK-LABEL: func.func @two_reshapes
// CHECK-SAME: (%[[X:[^:]*]]: memref<4x8xf32>, %[[OUT:[^:]*]]: memref<2x16xf32>)
// CHECK: %[[C:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1]] : memref<2x16xf32> into memref<32xf32>
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[V]]
// CHECK-NEXT: return
func.func @two_reshapes(%x: memref<4x8xf32>, %out: memref<2x16xf32>) {
  %buf = memref.alloc() : memref<4x8xf32>
  memref.copy %x, %buf : memref<4x8xf32> to memref<4x8xf32>
  %c = memref.collapse_shape %buf [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
  memref.copy %e, %out : memref<2x16xf32> to memref<2x16xf32>
  return
}

// -----

// The buffer is read after its copy into %out: that copy stays. Its last
// copy, into %out2, has nothing after it: %out2 takes the buffer's place.
// CHECK-LABEL: func.func @read_after_copy
// CHECK-SAME: (%[[X:[^:]*]]: memref<128xf32>, %[[OUT:[^:]*]]: memref<1x128xf32>, %[[OUT2:[^:]*]]: memref<128xf32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.copy %[[X]], %[[OUT2]] : memref<128xf32> to memref<128xf32>
// CHECK-NEXT: %[[E:.*]] = memref.expand_shape %[[OUT2]]
// CHECK-NEXT: memref.copy %[[E]], %[[OUT]] : memref<1x128xf32> to memref<1x128xf32>
// CHECK-NEXT: return
func.func @read_after_copy(%x: memref<128xf32>, %out: memref<1x128xf32>, %out2: memref<128xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  memref.copy %x, %buf : memref<128xf32> to memref<128xf32>
  %e = memref.expand_shape %buf [[0, 1]] output_shape [1, 128] : memref<128xf32> into memref<1x128xf32>
  memref.copy %e, %out : memref<1x128xf32> to memref<1x128xf32>
  memref.copy %buf, %out2 : memref<128xf32> to memref<128xf32>
  return
}

// -----

// The output argument is also used elsewhere (read after the copy): the
// copy stays.
// CHECK-LABEL: func.func @output_used_twice
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: memref.copy %{{.*}}, %[[OUT:.*]] : memref<1x128xf32> to memref<1x128xf32>
func.func @output_used_twice(%x: memref<128xf32>, %out: memref<1x128xf32>, %y: memref<1x128xf32>) {
  %buf = memref.alloc() : memref<128xf32>
  memref.copy %x, %buf : memref<128xf32> to memref<128xf32>
  %e = memref.expand_shape %buf [[0, 1]] output_shape [1, 128] : memref<128xf32> into memref<1x128xf32>
  memref.copy %e, %out : memref<1x128xf32> to memref<1x128xf32>
  memref.copy %out, %y : memref<1x128xf32> to memref<1x128xf32>
  return
}

// -----

// The copied buffer is an argument (an input returned as an output), not an
// allocation: the copy stays.
// CHECK-LABEL: func.func @input_returned
// CHECK: %[[E:.*]] = memref.expand_shape
// CHECK: memref.copy %[[E]], %{{.*}} : memref<1x128xf32> to memref<1x128xf32>
func.func @input_returned(%x: memref<128xf32>, %out: memref<1x128xf32>) {
  %e = memref.expand_shape %x [[0, 1]] output_shape [1, 128] : memref<128xf32> into memref<1x128xf32>
  memref.copy %e, %out : memref<1x128xf32> to memref<1x128xf32>
  return
}
