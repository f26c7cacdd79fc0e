// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-saturate-conversions))' | FileCheck %s

// fusion-saturate-conversions: a float-to-integer conversion reads its value
// where it is in range (0 elsewhere), and selects give the type's largest
// value at or above the range (2^31 for i32: x >= 2147483648.0), its
// smallest below it (x < -2^31; unsigned: x <= -1 gives 0), and 0 for NaN.

// CHECK-LABEL: func.func @signed
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[HI:.*]] = arith.constant 2.14748365E+9 : f32
// CHECK: %[[ABOVE:.*]] = arith.cmpf oge, %[[X]], %[[HI]] : f32
// CHECK: %[[LO:.*]] = arith.constant -2.14748365E+9 : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[X]], %[[LO]] : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[O1:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK: %[[OUT:.*]] = arith.ori %[[O1]], %[[NAN]] : i1
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SAFE:.*]] = arith.select %[[OUT]], %[[Z]], %[[X]] : f32
// CHECK: %[[R:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: %[[R1:.*]] = arith.select %[[BELOW]], %[[MIN]], %[[R]] : i32
// CHECK: %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[R2:.*]] = arith.select %[[ABOVE]], %[[MAX]], %[[R1]] : i32
// CHECK: return %[[R2]]
func.func @signed(%x: f32) -> i32 {
  %r = arith.fptosi %x : f32 to i32
  return %r : i32
}

// Unsigned, on vectors (a kernel's lanes): at or above 2^8, or x <= -1.
// CHECK-LABEL: func.func @unsigned_vector
// CHECK: arith.constant dense<2.560000e+02> : vector<4xf32>
// CHECK: %[[M1:.*]] = arith.constant dense<-1.000000e+00> : vector<4xf32>
// CHECK: %[[BELOW:.*]] = arith.cmpf ole, %{{.*}}, %[[M1]] : vector<4xf32>
// CHECK: arith.fptoui %{{.*}} : vector<4xf32> to vector<4xi8>
// CHECK: arith.constant dense<0> : vector<4xi8>
// CHECK: arith.constant dense<-1> : vector<4xi8>
// CHECK-NOT: arith.fptoui
func.func @unsigned_vector(%x: vector<4xf32>) -> vector<4xi8> {
  %r = arith.fptoui %x : vector<4xf32> to vector<4xi8>
  return %r : vector<4xi8>
}

// f16 cannot hold 2^31: the bounds are +-inf (every finite f16 fits i32),
// and -inf is below (x <= -inf).
// CHECK-LABEL: func.func @half
// CHECK: %[[PINF:.*]] = arith.constant 0x7C00 : f16
// CHECK: arith.cmpf oge, %{{.*}}, %[[PINF]] : f16
// CHECK: %[[NINF:.*]] = arith.constant 0xFC00 : f16
// CHECK: arith.cmpf ole, %{{.*}}, %[[NINF]] : f16
// CHECK: arith.fptosi %{{.*}} : f16 to i32
func.func @half(%x: f16) -> i32 {
  %r = arith.fptosi %x : f16 to i32
  return %r : i32
}
