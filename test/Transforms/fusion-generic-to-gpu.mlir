// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu))' | FileCheck %s
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-exchange=fence}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXCHANGE
// EXCHANGE: fusion-generic-to-gpu: row-exchange must be 'barrier' or 'async', got 'fence'
// Each row option out of range is refused, naming it (the pass's own checks,
// before any kernel is emitted).
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-shift=maybe}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHIFT
// SHIFT: fusion-generic-to-gpu: row-shift must be auto, true or false, got 'maybe'
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-trip=33}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRIP
// TRIP: fusion-generic-to-gpu: row-trip must be 0 to 32, got 33
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-tile=64}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILE
// TILE: fusion-generic-to-gpu: row-tile must be 0 or a power of two up to 32, got 64
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-persist=2 row-cluster=1}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PERSIST
// PERSIST: fusion-generic-to-gpu: row-persist must be 0, or -1 or > 0 with row-cluster above 1, got 2
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-prefetch=2 chip=sm_80}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PREFETCH
// PREFETCH: fusion-generic-to-gpu: row-prefetch needs sm_90 or later (cp.async.bulk.prefetch), chip is sm_80
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{chip=sm_75}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP
// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{chip=sm_75 sm-count=40}))' -o /dev/null
// CHIP: fusion-generic-to-gpu: unknown chip 'sm_75' (known: sm_80, sm_86, sm_89, sm_90); pass sm-count= to use another

// Tagged elementwise generics on memrefs become one gpu.launch each, following
// the #fusion.strategy: a grid-stride loop over vectors of the flattened
// iteration space, `unroll` vectors per trip, then a remainder loop.

// 10240 f32 = 2560 vectors of 4. 4 blocks x 64 threads = 256 vectors per
// grid step, x 4 unrolled = 1024 per trip: 2 full trips, then a remainder
// loop over vectors 2048..2560 striding by 256.
// CHECK-LABEL: func.func @grid_stride
// CHECK-SAME: (%[[X:[^:]*]]: memref<10240xf32>, %[[Y:[^:]*]]: memref<10240xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %[[C4]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]])
// CHECK-SAME: threads(%[[TX:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %[[C64]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]])
// CHECK-SAME: module(@kfuse_kernels) function(@grid_stride_g0)
// CHECK: %[[BOFF:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[TID:.*]] = arith.addi %[[BOFF]], %[[TX]] : index
// CHECK: %[[TRIPS:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[TRIPS]] step %{{.*}} {
// CHECK: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: %[[T:.*]] = arith.muli %[[I]], %[[C1024]] : index
// CHECK: %[[V0:.*]] = arith.addi %[[T]], %[[TID]] : index
// CHECK: arith.constant 256 : index
// CHECK: %[[V1:.*]] = arith.addi %[[V0]], %{{.*}} : index
// CHECK: arith.constant 512 : index
// CHECK: %[[V2:.*]] = arith.addi %[[V0]], %{{.*}} : index
// CHECK: arith.constant 768 : index
// CHECK: %[[V3:.*]] = arith.addi %[[V0]], %{{.*}} : index
// The four loads are issued before any arithmetic.
// CHECK: %[[O0:.*]] = arith.muli %[[V0]], %{{.*}} : index
// CHECK: %[[L0:.*]] = vector.load %[[X]][%[[O0]]] {alignment = 16 : i64} : memref<10240xf32>, vector<4xf32>
// CHECK: %[[O1:.*]] = arith.muli %[[V1]], %{{.*}} : index
// CHECK: %[[L1:.*]] = vector.load %[[X]][%[[O1]]] {alignment = 16 : i64}
// CHECK: %[[O2:.*]] = arith.muli %[[V2]], %{{.*}} : index
// CHECK: %[[L2:.*]] = vector.load %[[X]][%[[O2]]] {alignment = 16 : i64}
// CHECK: %[[O3:.*]] = arith.muli %[[V3]], %{{.*}} : index
// CHECK: %[[L3:.*]] = vector.load %[[X]][%[[O3]]] {alignment = 16 : i64}
// CHECK-NOT: vector.load
// CHECK: %[[R0:.*]] = math.exp %[[L0]] : vector<4xf32>
// CHECK: %[[R1:.*]] = math.exp %[[L1]] : vector<4xf32>
// CHECK: %[[R2:.*]] = math.exp %[[L2]] : vector<4xf32>
// CHECK: %[[R3:.*]] = math.exp %[[L3]] : vector<4xf32>
// CHECK: vector.store %[[R0]], %[[Y]][%[[O0]]] {alignment = 16 : i64} : memref<10240xf32>, vector<4xf32>
// CHECK: vector.store %[[R1]], %[[Y]][%[[O1]]]
// CHECK: vector.store %[[R2]], %[[Y]][%[[O2]]]
// CHECK: vector.store %[[R3]], %[[Y]][%[[O3]]]
// CHECK-NEXT: {{^ *\}$}}
// Remainder: from tid + 2048 to 2560, one vector per step of 256.
// CHECK: %[[C2048:.*]] = arith.constant 2048 : index
// CHECK: %[[START:.*]] = arith.addi %[[TID]], %[[C2048]] : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C2560:.*]] = arith.constant 2560 : index
// CHECK: scf.for %[[J:.*]] = %[[START]] to %[[C2560]] step %[[C256]] {
// CHECK: %[[OJ:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[LJ:.*]] = vector.load %[[X]][%[[OJ]]] {alignment = 16 : i64}
// CHECK: %[[RJ:.*]] = math.exp %[[LJ]] : vector<4xf32>
// CHECK: vector.store %[[RJ]], %[[Y]][%[[OJ]]] {alignment = 16 : i64}
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NEXT: gpu.terminator
func.func @grid_stride(%x: memref<10240xf32>, %y: memref<10240xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<10240xf32>) outs(%y : memref<10240xf32>)
      attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 64, vector = 4, unroll = 4, blocks = 4>} {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  }
  return
}

// A grid that covers the space in one trip (4 blocks x 128 threads = 512
// vectors >= 2000 / 4 = 500): no full-trip loop, only the loop from tid to
// the number of vectors, striding by the grid.
// CHECK-LABEL: func.func @one_trip
// CHECK: gpu.launch
// CHECK-SAME: function(@one_trip_k)
// CHECK-NOT: scf.for
// CHECK-DAG: %[[N:.*]] = arith.constant 500 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 512 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %[[STEP]] {
// CHECK: vector.load
// CHECK: arith.negf %{{.*}} : vector<4xf32>
// CHECK: vector.store
// CHECK-NEXT: {{^ *\}$}}
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
func.func @one_trip(%x: memref<2000xf32>, %y: memref<2000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<2000xf32>) outs(%y : memref<2000xf32>)
      attrs = {fusion.kernel = "k", fusion.strategy = #fusion.strategy<threads = 128, vector = 4, unroll = 4, blocks = 4>} {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  }
  return
}

// Broadcasts on a 2-D space with f16 vectors of 8 (16 bytes): x is
// contiguous (vector.load of the collapsed buffer), the row operand
// (d0, d1) -> (d0) does not vary along the innermost loop (one scalar load,
// splatted), the column operand (d0, d1) -> (d1) is contiguous in the
// innermost loop (vector.load at the column index).
// CHECK-LABEL: func.func @broadcasts
// CHECK-SAME: (%[[X:[^:]*]]: memref<4x8xf16>, %[[R:[^:]*]]: memref<4xf16>, %[[C:[^:]*]]: memref<8xf16>, %[[Y:[^:]*]]: memref<4x8xf16>)
// CHECK: gpu.launch
// CHECK-SAME: function(@broadcasts_g1)
// CHECK-DAG: %[[XF:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<4x8xf16> into memref<32xf16>
// CHECK-DAG: %[[YF:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1]] : memref<4x8xf16> into memref<32xf16>
// CHECK: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[LIN:.*]] = arith.muli %[[V]], %{{.*}} : index
// CHECK: %[[COL:.*]] = arith.remui %[[LIN]], %[[C8:.*]] : index
// CHECK: %[[ROW:.*]] = arith.divui %[[LIN]], %[[C8]] : index
// CHECK: %[[XV:.*]] = vector.load %[[XF]][%[[LIN]]] {alignment = 16 : i64} : memref<32xf16>, vector<8xf16>
// CHECK: arith.muli %[[ROW]]
// CHECK: %[[RS:.*]] = memref.load %[[R]][%{{.*}}] : memref<4xf16>
// CHECK: %[[RV:.*]] = vector.broadcast %[[RS]] : f16 to vector<8xf16>
// CHECK: arith.muli %[[COL]]
// CHECK: %[[CV:.*]] = vector.load %[[C]][%{{.*}}] {alignment = 16 : i64} : memref<8xf16>, vector<8xf16>
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[RV]] : vector<8xf16>
// CHECK: %[[M:.*]] = arith.mulf %[[S]], %[[CV]] : vector<8xf16>
// CHECK: vector.store %[[M]], %[[YF]][%[[LIN]]] {alignment = 16 : i64} : memref<32xf16>, vector<8xf16>
func.func @broadcasts(%x: memref<4x8xf16>, %r: memref<4xf16>, %c: memref<8xf16>, %y: memref<4x8xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %c : memref<4x8xf16>, memref<4xf16>, memref<8xf16>) outs(%y : memref<4x8xf16>)
      attrs = {fusion.kernel = "g1", fusion.strategy = #fusion.strategy<threads = 32, vector = 8, unroll = 1, blocks = 1>} {
  ^bb0(%a: f16, %b: f16, %cc: f16, %out: f16):
    %v = arith.addf %a, %b : f16
    %w = arith.mulf %v, %cc : f16
    linalg.yield %w : f16
  }
  return
}

// A transposed operand is gathered lane by lane: element (d1 + lane, d0) of
// the 8x4 buffer; linalg.index of the innermost loop becomes its index plus
// a lane step.
// CHECK-LABEL: func.func @gather_and_index
// CHECK: scf.for
// CHECK: %[[LIN:.*]] = arith.muli
// CHECK: %[[D1:.*]] = arith.remui %[[LIN]], %{{.*}} : index
// CHECK: %[[D0:.*]] = arith.divui %[[LIN]], %{{.*}} : index
// CHECK: arith.muli %[[D1]], %[[C4:.*]] : index
// CHECK: %[[E0:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<32xf32>
// CHECK: %[[D1P1:.*]] = arith.addi %[[D1]], %{{.*}} : index
// CHECK: arith.muli %[[D1P1]], %{{.*}} : index
// CHECK: %[[E1:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<32xf32>
// CHECK: %[[XV:.*]] = vector.from_elements %[[E0]], %[[E1]] : vector<2xf32>
// CHECK: %[[B:.*]] = vector.broadcast %[[D1]] : index to vector<2xindex>
// CHECK: %[[STEP:.*]] = vector.step : vector<2xindex>
// CHECK: %[[IDX:.*]] = arith.addi %[[B]], %[[STEP]] : vector<2xindex>
// CHECK: arith.index_cast %[[IDX]] : vector<2xindex> to vector<2xi32>
// CHECK: arith.addf %[[XV]], %{{.*}} : vector<2xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[LIN]]] {alignment = 8 : i64} : memref<32xf32>, vector<2xf32>
func.func @gather_and_index(%x: memref<8x4xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%y : memref<4x8xf32>)
      attrs = {fusion.kernel = "t", fusion.strategy = #fusion.strategy<threads = 32, vector = 2, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.addf %a, %f : f32
    linalg.yield %v : f32
  }
  return
}

// Width 1: scalar loads and stores, no vectors.
// CHECK-LABEL: func.func @scalar
// CHECK: scf.for
// CHECK-NOT: vector.
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<5xf32>
// CHECK: %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK: memref.store %[[N]], %{{.*}}[%{{.*}}] : memref<5xf32>
// CHECK-NOT: vector.
// CHECK: gpu.terminator
func.func @scalar(%x: memref<5xf32>, %y: memref<5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<5xf32>) outs(%y : memref<5xf32>)
      attrs = {fusion.kernel = "s", fusion.strategy = #fusion.strategy<threads = 32, vector = 1, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A kernel without a strategy.
func.func @no_strategy(%x: memref<8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: kernel has no #fusion.strategy (run fusion-select-strategy first)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) attrs = {fusion.kernel = "g0"} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @untagged(%x: memref<8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: linalg.generic outside any fusion group (run fusion-inline-groups first)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @on_tensors(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{fusion-generic-to-gpu: expects a bufferized generic}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @bad_width(%x: memref<6xf32>, %y: memref<6xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: innermost extent 6 is not a multiple of the strategy's vector width 4}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<6xf32>) outs(%y : memref<6xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @bool_vector(%x: memref<8xi1>, %y: memref<8xf32>, %z: memref<8xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: boolean operands need vector width 1}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %y : memref<8xi1>, memref<8xf32>) outs(%z : memref<8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%c: i1, %a: f32, %out: f32):
    %s = arith.select %c, %a, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

func.func @splat_output(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: an output that does not vary along the innermost loop is not supported}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @strided_output(%x: memref<8xf32>, %y: memref<8xf32, strided<[2]>>) {
  // expected-error @+1 {{fusion-generic-to-gpu: operand #1 must be a memref of static shape with the identity layout, got 'memref<8xf32, strided<[2]>>'}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32, strided<[2]>>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @dynamic_offset(%x: memref<8xf32, strided<[1], offset: ?>>, %y: memref<8xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: operand #0 must be a memref of static shape with the identity layout or static strides, got 'memref<8xf32, strided<[1], offset: ?>>'}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32, strided<[1], offset: ?>>) outs(%y : memref<8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Inputs that are views (slices of the program's arguments, static strides
// and offset): addressed through a 1-D reinterpretation of their buffer
// from the view's offset, at row * stride + column. Rows that start on a
// vector boundary (offset 4, rows 12 apart) load whole vectors; rows that
// do not (offset 1, rows 9 apart) load each lane.
// CHECK-LABEL: func.func @views
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [4], sizes: [44], strides: [1] : memref<4x8xf32, strided<[12, 1], offset: 4>> to memref<44xf32, strided<[1], offset: 4>>
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [1], sizes: [35], strides: [1] : memref<4x8xf32, strided<[9, 1], offset: 1>> to memref<35xf32, strided<[1], offset: 1>>
// CHECK: arith.muli %{{.*}}, %c12
// CHECK: vector.load %{{.*}} : memref<44xf32, strided<[1], offset: 4>>, vector<4xf32>
// CHECK: arith.muli %{{.*}}, %c9
// CHECK-COUNT-4: memref.load %{{.*}} : memref<35xf32, strided<[1], offset: 1>>
// CHECK: vector.from_elements
func.func @views(%x: memref<4x8xf32, strided<[12, 1], offset: 4>>, %z: memref<4x8xf32, strided<[9, 1], offset: 1>>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : memref<4x8xf32, strided<[12, 1], offset: 4>>, memref<4x8xf32, strided<[9, 1], offset: 1>>) outs(%y : memref<4x8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

func.func @not_vectorizable(%x: memref<8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    // expected-error @+1 {{fusion-generic-to-gpu: cannot vectorize 'scf.execute_region' in the body of kernel 'g0'}}
    %r = scf.execute_region -> f32 {
      scf.yield %a : f32
    }
    linalg.yield %r : f32
  }
  return
}

// -----

// A strided read (d0 * 2) is gathered lane by lane; the stride is applied to
// each lane's index.
// CHECK-LABEL: func.func @affine_expr
// CHECK: gpu.launch
// CHECK-COUNT-4: memref.load %{{.*}} : memref<16xf32>
// CHECK: vector.from_elements
// CHECK: vector.store
func.func @affine_expr(%x: memref<16xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 * 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%y : memref<8xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @affine_output(%x: memref<8xf32>, %y: memref<16xf32>) {
  // expected-error @+1 {{fusion-generic-to-gpu: output #0 is written through the indexing map affine_map<(d0) -> (d0 * 2)>; only loop indices and constants are supported as results}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 * 2)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<16xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A slice along the last dimension (d1 + 4, rows of 12) stays one aligned
// vector load.
// CHECK-LABEL: func.func @slice_read
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} : memref<96xf32>, vector<4xf32>
// CHECK: vector.store
func.func @slice_read(%x: memref<8x12xf32>, %y: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 + 4)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x12xf32>) outs(%y : memref<8x4xf32>) attrs = {fusion.kernel = "g0", fusion.strategy = #fusion.strategy<threads = 32, vector = 4, unroll = 1, blocks = 1>} {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A value per row (the reduction's) read through a map that is not the
// reader's rows: here along the columns of a square space. The row kernel
// holds one row's value, so this is refused rather than computed wrong.
func.func @row_value_along_columns(%x: memref<8x8xf32>, %s: memref<8xf32>, %y: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%s : memref<8xf32>) attrs = {fusion.kernel = "r"} {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  }
  // expected-error @+1 {{kfuse cannot generate code for 'linalg.generic' yet: kernel 'r' reads operand #1, a value per row, through a map that is not its rows}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<8x8xf32>, memref<8xf32>) outs(%y : memref<8x8xf32>) attrs = {fusion.kernel = "r"} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A row kernel's epilogue that reads its output's old value (a temporary the
// group filled with 2.5 before: a sum's start, read as `init + term`) reads
// the fill's value, as it reads any earlier writer's.
// CHECK-LABEL: func.func @reads_old_output
// CHECK-DAG: %[[START:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: gpu.launch
// CHECK: gpu.shuffle xor
// CHECK: %[[S:.*]] = arith.addf %[[START]], %{{.*}} : f32
// CHECK-NEXT: arith.mulf %[[S]], %[[S]] : f32
// CHECK: memref.store
func.func @reads_old_output(%x: memref<8x128xf32>, %y: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %start = arith.constant 2.5 : f32
  %m = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%m : memref<8xf32>) attrs = {fusion.kernel = "g0"} {
  ^bb0(%o: f32):
    linalg.yield %ninf : f32
  }
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%t : memref<8xf32>) attrs = {fusion.kernel = "g0"} {
  ^bb0(%o: f32):
    linalg.yield %start : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x128xf32>) outs(%m : memref<8xf32>) attrs = {fusion.kernel = "g0"} {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%m : memref<8xf32>) outs(%t, %y : memref<8xf32>, memref<8xf32>) attrs = {fusion.kernel = "g0"} {
  ^bb0(%a: f32, %o: f32, %o2: f32):
    %s = arith.addf %o, %a : f32
    %r = arith.mulf %s, %s : f32
    linalg.yield %s, %r : f32, f32
  }
  return
}
