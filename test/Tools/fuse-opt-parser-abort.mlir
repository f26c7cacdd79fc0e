// MLIR's parser aborts on some invalid input: here a value used in one
// linalg.generic region is defined in a later one that repeats its block
// label; discarding the half-parsed op trips an assertion. fuse-opt runs its
// driver in a child process, so the user gets the input's located error and
// an error line with exit status 1, not LLVM's crash report.
//
// RUN: not fuse-opt %s 2>&1 | FileCheck %s
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize)' 2>&1 | FileCheck %s
// Valid input passes through the child unchanged (output and status).
// RUN: echo 'func.func @g() { return }' | fuse-opt | FileCheck %s --check-prefix=VALID

// CHECK: fuse-opt-parser-abort.mlir:{{[0-9]+}}:3: error: redefinition of block '^bb0'
// CHECK-NOT: PLEASE submit a bug report
// CHECK-NOT: Stack dump
// CHECK: fuse-opt: error: MLIR aborted (signal {{[0-9]+}}: {{.*}}) after the errors above: the input is not valid MLIR
// VALID: func.func @g()
// VALID-NEXT: return

#map = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %u = arith.mulf %v, %in : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%r : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
  ^bb0(%in2: f32, %out2: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
