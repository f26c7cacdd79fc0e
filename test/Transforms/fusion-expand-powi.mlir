// fusion-expand-powi: math.fpowi (torch-mlir's x ** 3, an i64 exponent)
// becomes multiplications by repeated squaring when the exponent is a
// constant, the reciprocal of that for a negative one; any other exponent
// becomes math.powf of it converted to float. Fast-math flags carry over.
//
// RUN: fuse-opt %s --fusion-expand-powi | FileCheck %s

// CHECK-LABEL: func.func @constants
// CHECK-SAME: (%[[X:[^:]*]]: f32)
// CHECK-NOT: math.fpowi
// x^3 = x * x^2
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] fastmath<contract> : f32
// CHECK-NEXT: %[[CUBE:.*]] = arith.mulf %[[X]], %[[SQ]] fastmath<contract> : f32
// x^-2 = 1 / x^2
// CHECK-NEXT: %[[SQ2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ2]] : f32
// x^0 = 1, x^1 = x
// CHECK-NEXT: %[[ONE0:.*]] = arith.constant 1.000000e+00 : f32
// x^10 = x^2 * x^8 (squares of squares)
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[P4:.*]] = arith.mulf %[[P2]], %[[P2]] : f32
// CHECK-NEXT: %[[P8:.*]] = arith.mulf %[[P4]], %[[P4]] : f32
// CHECK-NEXT: %[[P10:.*]] = arith.mulf %[[P2]], %[[P8]] : f32
// CHECK-NEXT: return %[[CUBE]], %[[INV]], %[[ONE0]], %[[X]], %[[P10]]
func.func @constants(%x: f32) -> (f32, f32, f32, f32, f32) {
  %c3 = arith.constant 3 : i64
  %cm2 = arith.constant -2 : i32
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c10 = arith.constant 10 : i64
  %a = math.fpowi %x, %c3 fastmath<contract> : f32, i64
  %b = math.fpowi %x, %cm2 : f32, i32
  %c = math.fpowi %x, %c0 : f32, i64
  %d = math.fpowi %x, %c1 : f32, i64
  %e = math.fpowi %x, %c10 : f32, i64
  return %a, %b, %c, %d, %e : f32, f32, f32, f32, f32
}

// A splat vector exponent multiplies whole vectors; one that is not a
// constant goes through powf.
// CHECK-LABEL: func.func @vectors_and_variables
// CHECK-SAME: (%[[V:[^:]*]]: vector<4xf32>, %[[S:[^:]*]]: f64, %[[N:[^:]*]]: i64, %[[NV:[^:]*]]: vector<4xi64>)
// CHECK: %[[VSQ:.*]] = arith.mulf %[[V]], %[[V]] : vector<4xf32>
// CHECK: %[[NF:.*]] = arith.sitofp %[[N]] : i64 to f64
// CHECK-NEXT: %[[P:.*]] = math.powf %[[S]], %[[NF]] fastmath<afn> : f64
// CHECK: %[[NVF:.*]] = arith.sitofp %[[NV]] : vector<4xi64> to vector<4xf32>
// CHECK-NEXT: %[[PV:.*]] = math.powf %[[V]], %[[NVF]] : vector<4xf32>
// CHECK-NOT: math.fpowi
// CHECK: return %[[VSQ]], %[[P]], %[[PV]]
func.func @vectors_and_variables(%v: vector<4xf32>, %s: f64, %n: i64, %nv: vector<4xi64>) -> (vector<4xf32>, f64, vector<4xf32>) {
  %c2 = arith.constant dense<2> : vector<4xi64>
  %a = math.fpowi %v, %c2 : vector<4xf32>, vector<4xi64>
  %b = math.fpowi %s, %n fastmath<afn> : f64, i64
  %c = math.fpowi %v, %nv : vector<4xf32>, vector<4xi64>
  return %a, %b, %c : vector<4xf32>, f64, vector<4xf32>
}

// math.ipowi (integers, wrapping): a constant exponent >= 0 multiplies by
// repeated squaring; any other exponent squares and multiplies over all of
// its bits with selects (7 for i8), then picks 1 / +-1 / 0 below zero.
// CHECK-LABEL: func.func @integers
// CHECK-SAME: (%[[I:[^:]*]]: i32, %[[B:[^:]*]]: i8, %[[N:[^:]*]]: i8)
// CHECK-NOT: math.ipowi
// CHECK: %[[SQ:.*]] = arith.muli %[[I]], %[[I]] : i32
// CHECK-NEXT: %[[CUBE:.*]] = arith.muli %[[I]], %[[SQ]] : i32
// CHECK-COUNT-7: arith.shrui %[[N]]
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[N]], %{{.*}} : i8
// CHECK-NEXT: %[[R:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : i8
// CHECK-NOT: math.ipowi
// CHECK: return %[[CUBE]], %[[R]]
func.func @integers(%i: i32, %b: i8, %n: i8) -> (i32, i8) {
  %c3 = arith.constant 3 : i32
  %a = math.ipowi %i, %c3 : i32
  %p = math.ipowi %b, %n : i8
  return %a, %p : i32, i8
}

// math.powf with a constant exponent of exactly 2 (`(x - mean) ** 2`, a
// scalar or a splat) is x * x, its flags kept; other exponents, 2.5 or
// one that is not a constant, stay powf.
// CHECK-LABEL: func.func @float_squares
// CHECK-SAME: (%[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<4xf64>, %[[Y:[^:]*]]: f32)
// CHECK-DAG: %[[X2:.*]] = arith.mulf %[[X]], %[[X]] fastmath<contract> : f32
// CHECK-DAG: %[[V2:.*]] = arith.mulf %[[V]], %[[V]] : vector<4xf64>
// CHECK-DAG: %[[H:.*]] = math.powf %[[X]], %{{.*}} : f32
// CHECK-DAG: %[[Z:.*]] = math.powf %[[X]], %[[Y]] : f32
// CHECK: return %[[X2]], %[[V2]], %[[H]], %[[Z]]
func.func @float_squares(%x: f32, %v: vector<4xf64>, %y: f32) -> (f32, vector<4xf64>, f32, f32) {
  %two = arith.constant 2.0 : f32
  %twos = arith.constant dense<2.0> : vector<4xf64>
  %half = arith.constant 2.5 : f32
  %a = math.powf %x, %two fastmath<contract> : f32
  %b = math.powf %v, %twos : vector<4xf64>
  %c = math.powf %x, %half : f32
  %d = math.powf %x, %y : f32
  return %a, %b, %c, %d : f32, vector<4xf64>, f32, f32
}
