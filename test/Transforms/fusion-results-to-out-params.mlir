// RUN: fuse-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect --pass-pipeline='builtin.module(fusion-results-to-out-params)' | FileCheck %s

// Buffer results become arguments after the others, with the results'
// attributes: an allocation of static shape is its argument; a returned
// argument, a reshape and a buffer of dynamic shape are copied into theirs;
// a buffer returned twice is its first argument, copied into the second;
// other results stay results.
// CHECK-LABEL: func.func @outs
// CHECK-SAME: (%[[X:[^:]*]]: memref<8xf32> {kfuse.name = "x"}, %[[N:[^:]*]]: index,
// CHECK-SAME: %[[O0:[^:]*]]: memref<8xf32> {kfuse.name = "y"}, %[[O1:[^:]*]]: memref<8xf32>,
// CHECK-SAME: %[[O2:[^:]*]]: memref<2x4xf32> {kfuse.name = "r"}, %[[O3:[^:]*]]: memref<?xf32>,
// CHECK-SAME: %[[O4:[^:]*]]: memref<8xf32> {kfuse.name = "again"}) -> (index {kfuse.name = "n"})
// CHECK-NOT: memref.alloc() {{.*}} : memref<8xf32>
// CHECK: "test.fill"(%[[O0]])
// CHECK: %[[R:.*]] = memref.expand_shape %[[O0]]
// CHECK: %[[D:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: memref.copy %[[X]], %[[O1]]
// CHECK: memref.copy %[[R]], %[[O2]]
// CHECK: memref.copy %[[D]], %[[O3]]
// CHECK: memref.copy %[[O0]], %[[O4]]
// CHECK: return %[[N]] : index
func.func @outs(%x: memref<8xf32> {kfuse.name = "x"}, %n: index)
    -> (memref<8xf32> {kfuse.name = "y"}, memref<8xf32>, memref<2x4xf32> {kfuse.name = "r"},
        index {kfuse.name = "n"}, memref<?xf32>, memref<8xf32> {kfuse.name = "again"}) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  "test.fill"(%a) : (memref<8xf32>) -> ()
  %r = memref.expand_shape %a [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  return %a, %x, %r, %n, %d, %a : memref<8xf32>, memref<8xf32>, memref<2x4xf32>, index, memref<?xf32>, memref<8xf32>
}

// -----

// A function without buffer results, and a declaration: unchanged.
// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%{{[^:]*}}: f32) -> f32
// CHECK-LABEL: func.func private @declared
// CHECK-SAME: () -> memref<4xf32>
func.func @scalars(%s: f32) -> f32 {
  return %s : f32
}
func.func private @declared() -> memref<4xf32>

// -----

// expected-error @+1 {{fusion-results-to-out-params: result 0 ('memref<4xf32, strided<[2]>>') does not have the identity layout}}
func.func @strided(%x: memref<8xf32>) -> memref<4xf32, strided<[2]>> {
  %s = memref.subview %x[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  return %s : memref<4xf32, strided<[2]>>
}

// -----

func.func @callee() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
func.func @caller() {
  // expected-error @+1 {{fusion-results-to-out-params: a call of 'callee', whose buffer results became arguments, is not supported}}
  %r = func.call @callee() : () -> memref<4xf32>
  return
}
