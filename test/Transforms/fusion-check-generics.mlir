// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-check-generics))' \
// RUN:   | FileCheck %s

// fusion-check-generics: a "parallel" loop that an output's indexing map
// does not use is a reduction under the wrong name (the CPU's loops would
// run it in order; GPU threads would race on the output's elements); a
// "reduction" loop every output varies along reduces nothing; and an output
// map that reaches only part of its tensor leaves the rest to the init's
// values, which kfuse's kernels do not carry over. Such generics stop with
// an error naming the loop or the output; every other generic passes
// through unchanged. So do a dense_resource whose blob does not hold its
// elements and a tensor.expand_shape whose output_shape disagrees with its
// result type.

// A column sum marked correctly, a transpose, a convolution's window
// (d1 only inside d0 + d1 and the filter's index, a reduction), and a
// keepdims row sum writing index 0 of a dimension of size 1.
// CHECK-LABEL: func.func @valid
// CHECK-COUNT-4: linalg.generic
// CHECK: return
func.func @valid(%x: tensor<8x16xf32>, %s: tensor<16xf32>, %t: tensor<16x8xf32>,
                 %w: tensor<23xf32>, %v: tensor<8xf32>) -> (tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>) {
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%s : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  %tr = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%t : tensor<16x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<16x8xf32>
  %win = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%w, %s : tensor<23xf32>, tensor<16xf32>) outs(%v : tensor<8xf32>) {
  ^bb0(%in: f32, %k: f32, %acc: f32):
    %p = arith.mulf %in, %k : f32
    %a = arith.addf %p, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<8x1xf32>
  %keep = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8x1xf32>
  return %sum, %tr, %win : tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>
}

// -----

// The column sum with its row loop marked "parallel".
func.func @sum_marked_parallel(%x: tensor<8x16xf32>, %s: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{kfuse: loop d0 of this linalg.generic is "parallel", but output #0 (affine_map<(d0, d1) -> (d1)>) does not vary along it: its iterations would all write the same elements}}
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%s : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %sum : tensor<16xf32>
}

// -----

// Only the second output misses the loop; the error names it.
func.func @second_output(%x: tensor<8x16xf32>, %a: tensor<8x16xf32>, %m: tensor<8xf32>)
    -> (tensor<8x16xf32>, tensor<8xf32>) {
  // expected-error @+1 {{loop d1 of this linalg.generic is "parallel", but output #1 (affine_map<(d0, d1) -> (d0)>)}}
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%a, %m : tensor<8x16xf32>, tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32, %acc: f32):
    %e = math.exp %in : f32
    %mx = arith.maximumf %in, %acc : f32
    linalg.yield %e, %mx : f32, f32
  } -> (tensor<8x16xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8x16xf32>, tensor<8xf32>
}

// -----

// Column 0 of a [8, 4] tensor: the other columns would keep the fill's ones.
func.func @column_zero_only(%x: tensor<8xf32>, %f: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{kfuse: output #0 of this linalg.generic is written through affine_map<(d0) -> (d0, 0)>, which reaches only part of 'tensor<8x4xf32>' (dimension 1 of size 4 at index 0 only): the rest would keep the init's values, which kfuse does not carry over}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0, 0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%f : tensor<8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// The diagonal of a square: d0 indexes both dimensions.
func.func @diagonal(%x: tensor<8xf32>, %f: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{(dimension 1 of size 8 through d0, a loop that already indexes another dimension)}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0, d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%f : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// A gather's middle loop marked "reduction" though the output varies along
// every loop.
func.func @reduces_nothing(%ids: tensor<3x40xi64>, %t: tensor<100x64xf32>, %e: tensor<3x40x64xf32>) -> tensor<3x40x64xf32> {
  // expected-error @+1 {{kfuse: loop d1 of this linalg.generic is "reduction", but every output varies along it: it reduces nothing. Mark the loop "parallel"}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%ids : tensor<3x40xi64>) outs(%e : tensor<3x40x64xf32>) {
  ^bb0(%in: i64, %o: f32):
    %r = arith.index_cast %in : i64 to index
    %c = linalg.index 2 : index
    %v = tensor.extract %t[%r, %c] : tensor<100x64xf32>
    linalg.yield %v : f32
  } -> tensor<3x40x64xf32>
  return %y : tensor<3x40x64xf32>
}

// -----

// A dense_resource constant whose blob does not hold its elements: 12 bytes
// (past the 4 of alignment) for 4 floats. The parser takes it; LLVM's
// translation or the GPU's constant upload would refuse it late.
func.func @short_blob() -> tensor<4xf32> {
  // expected-error @+1 {{kfuse: dense_resource<short> holds 12 bytes, its type tensor<4xf32> needs 16}}
  %c = arith.constant dense_resource<short> : tensor<4xf32>
  return %c : tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F0000004000004040"
    }
  }
#-}

// -----

// A dense_resource whose blob is not in the module at all.
func.func @missing_blob() -> tensor<2xf32> {
  // expected-error @+1 {{kfuse: the data of dense_resource<absent> is not in the module}}
  %c = arith.constant dense_resource<absent> : tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// A blob of the right size passes.
// CHECK-LABEL: func.func @whole_blob
// CHECK: arith.constant dense_resource<whole> : tensor<3xf32>
func.func @whole_blob() -> tensor<3xf32> {
  %c = arith.constant dense_resource<whole> : tensor<3xf32>
  return %c : tensor<3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      whole: "0x040000000000803F0000004000004040"
    }
  }
#-}

// -----

// tensor.expand_shape: output_shape agreeing with the result type passes,
// a dynamic dimension given by a value included.
// CHECK-LABEL: func.func @expand_agrees
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 8192]
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, 4]
func.func @expand_agrees(%a: tensor<8192xi64>, %b: tensor<?xf32>, %n: index)
    -> (tensor<1x8192xi64>, tensor<?x4xf32>) {
  %e = tensor.expand_shape %a [[0, 1]] output_shape [1, 8192] : tensor<8192xi64> into tensor<1x8192xi64>
  %d = tensor.expand_shape %b [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %e, %d : tensor<1x8192xi64>, tensor<?x4xf32>
}

// -----

// An output_shape that gives a static dimension of the result another size
// (a program whose sizes were changed but for its output_shape's): upstream's
// verifier takes it, bufferization's memref.expand_shape would not.
func.func @expand_disagrees(%a: tensor<8192xi64>) -> tensor<1x8192xi64> {
  // expected-error @+1 {{kfuse: output_shape gives dimension 1 of this tensor.expand_shape as 16, but its result type 'tensor<1x8192xi64>' has 8192 there}}
  %e = tensor.expand_shape %a [[0, 1]] output_shape [1, 16] : tensor<8192xi64> into tensor<1x8192xi64>
  return %e : tensor<1x8192xi64>
}

// -----

// A value for a static dimension of the result.
func.func @expand_value_for_static(%a: tensor<8192xi64>, %n: index) -> tensor<2x4096xi64> {
  // expected-error @+1 {{kfuse: output_shape gives dimension 0 of this tensor.expand_shape as a value, but its result type 'tensor<2x4096xi64>' has 2 there}}
  %e = tensor.expand_shape %a [[0, 1]] output_shape [%n, 4096] : tensor<8192xi64> into tensor<2x4096xi64>
  return %e : tensor<2x4096xi64>
}
