// RUN: fuse-opt %s --pass-pipeline='builtin.module(gpu.module(fusion-fast-div))' | FileCheck %s

// f32 divisions that allow approximation (afn, set by fast numerics) become
// llvm.nvvm.div.full (div.full.f32), lane by lane for vectors. A vector
// divided by a broadcast scalar is multiplied by the scalar's reciprocal,
// one correctly rounded division (no afn) right after the scalar, shared by
// every division by it. Divisions without afn, of f64, and by a constant
// power of two (which LLVM turns into a multiplication by its exact
// reciprocal) stay.

// CHECK-LABEL: gpu.func @divs
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[V:.*]]: vector<2xf32>, %[[W:.*]]: vector<2xf32>, %[[C:.*]]: f64, %[[D:.*]]: f64)
// CHECK: %[[S:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[A]], %[[B]]) : (f32, f32) -> f32
// CHECK: %[[V0:.*]] = vector.extract %[[V]][0]
// CHECK: %[[W0:.*]] = vector.extract %[[W]][0]
// CHECK: %[[Q0:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[V0]], %[[W0]])
// CHECK: %[[V1:.*]] = vector.extract %[[V]][1]
// CHECK: %[[W1:.*]] = vector.extract %[[W]][1]
// CHECK: %[[Q1:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[V1]], %[[W1]])
// CHECK: %[[Q:.*]] = vector.from_elements %[[Q0]], %[[Q1]] : vector<2xf32>
// CHECK: %[[T:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[A]], %{{.*}}) : (f32, f32) -> f32
// CHECK: arith.divf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK: arith.divf %[[C]], %[[D]] fastmath<contract,afn> : f64
// CHECK: arith.divf %[[A]], %{{.*}} fastmath<contract,afn> : f32
// CHECK: arith.divf %[[V]], %{{.*}} fastmath<contract,afn> : vector<2xf32>
// CHECK-NOT: llvm.call_intrinsic
// CHECK: gpu.return %[[S]], %[[Q]], %[[T]]

gpu.module @k {
  gpu.func @divs(%a: f32, %b: f32, %v: vector<2xf32>, %w: vector<2xf32>, %c: f64, %d: f64)
      -> (f32, vector<2xf32>, f32, f32, f64, f32, vector<2xf32>) {
    %three = arith.constant 3.0 : f32
    %quarter = arith.constant 0.25 : f32
    %eighths = arith.constant dense<0.125> : vector<2xf32>
    %s = arith.divf %a, %b fastmath<contract,afn> : f32
    %q = arith.divf %v, %w fastmath<contract,afn> : vector<2xf32>
    %t = arith.divf %a, %three fastmath<contract,afn> : f32
    %exact = arith.divf %a, %b fastmath<contract> : f32
    %wide = arith.divf %c, %d fastmath<contract,afn> : f64
    %pow2 = arith.divf %a, %quarter fastmath<contract,afn> : f32
    %vpow2 = arith.divf %v, %eighths fastmath<contract,afn> : vector<2xf32>
    gpu.return %s, %q, %t, %exact, %wide, %pow2, %vpow2 : f32, vector<2xf32>, f32, f32, f64, f32, vector<2xf32>
  }
}

// CHECK-LABEL: gpu.func @by_row_value
// CHECK-SAME: (%[[X:.*]]: vector<4xf32>, %[[Y:.*]]: vector<4xf32>, %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[ONE]], %[[SUM]] : f32
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]] : f32 to vector<4xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[RV]] fastmath<contract> : vector<4xf32>
// CHECK: %[[RV2:.*]] = vector.broadcast %[[R]] : f32 to vector<4xf32>
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[Y]], %[[RV2]] fastmath<contract> : vector<4xf32>
// CHECK-NOT: arith.divf
// CHECK-NOT: llvm.call_intrinsic
// CHECK: gpu.return %[[P]], %[[P2]]
gpu.module @rows {
  gpu.func @by_row_value(%x: vector<4xf32>, %y: vector<4xf32>, %a: f32, %b: f32)
      -> (vector<4xf32>, vector<4xf32>) {
    %sum = arith.addf %a, %b : f32
    %bs = vector.broadcast %sum : f32 to vector<4xf32>
    %p = arith.divf %x, %bs fastmath<contract,afn> : vector<4xf32>
    %bs2 = vector.broadcast %sum : f32 to vector<4xf32>
    %p2 = arith.divf %y, %bs2 fastmath<contract,afn> : vector<4xf32>
    gpu.return %p, %p2 : vector<4xf32>, vector<4xf32>
  }
}
