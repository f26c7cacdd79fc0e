// RUN: fuse-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-form-groups))'

// Functions with control flow between blocks are not planned.
// expected-error @+1 {{fusion-form-groups: functions with more than one block are not supported}}
func.func @two_blocks(%x: tensor<8xf32>, %c: i1) -> tensor<8xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<8xf32>
^b:
  return %x : tensor<8xf32>
}

// -----

// The option is checked before anything else.
// RUN: not fuse-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=sometimes}))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=BADOPT
// BADOPT: error: fusion-form-groups: option recompute must be 'auto', 'never' or 'always', got 'sometimes'
// BADOPT-NEXT: func.func @two_blocks
// BADOPT-NOT: more than one block
// BADOPT: error: fusion-form-groups: option recompute must be 'auto', 'never' or 'always', got 'sometimes'
// (stdout's split marker may land between the two streams' lines)
// BADOPT: func.func @empty
func.func @empty() {
  return
}
