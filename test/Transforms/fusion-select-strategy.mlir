// By default the grid covers the whole space once, one vector per thread.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy)' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,NOCAP
// Without a cap the chip does not matter.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{chip=sm_80})' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,NOCAP
// With blocks-per-sm the grid is capped at that many blocks per SM of the
// chip (sm_90: 132 SMs, sm_80: 108) and threads stride, unrolled.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{blocks-per-sm=8})' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{chip=sm_90 blocks-per-sm=8})' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{chip=sm_80 blocks-per-sm=8})' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{threads=128 unroll=2 blocks-per-sm=2 sm-count=10})' \
// RUN:   | FileCheck %s --check-prefix=OPT
//
// An unknown chip is an error unless the SM count is given.
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{chip=sm_75})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{chip=sm_75 sm-count=10 blocks-per-sm=8})' \
// RUN:   | FileCheck %s --check-prefix=SMCOUNT
// UNKNOWN: error: fusion-select-strategy: unknown chip 'sm_75' (known: sm_80, sm_86, sm_89, sm_90); pass sm-count= to use another
// UNKNOWN-NOT: #fusion.strategy<threads = 256
//
// Options that cannot make a valid strategy are errors.
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{threads=100})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADTHREADS
// BADTHREADS: error: fusion-select-strategy: threads must be a positive multiple of 32 and at most 1024, got 100
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-select-strategy{unroll=0})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADUNROLL
// BADUNROLL: error: fusion-select-strategy: unroll must be between 1 and 16, got 0

// The pass reads only the types at a group's boundary, so the groups here
// yield fresh tensors.

// f32: 16-byte accesses are 4 elements; 1024 elements fit in one block of
// 256 threads, so one block and no unrolling.
// CHECK-LABEL: func.func @f32_1024
// CHECK: fusion.group "g0" "elementwise" ins({{.*}}) attributes {strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1>}
// OPT-LABEL: func.func @f32_1024
// OPT: strategy = #fusion.strategy<threads = 128, vector = 4, unroll = 1, blocks = 2>
// SMCOUNT-LABEL: func.func @f32_1024
// SMCOUNT: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1>
func.func @f32_1024(%x: tensor<1024xf32>) -> (tensor<1024xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf32>) {
  ^bb0(%b0: tensor<1024xf32>):
    %e0 = tensor.empty() : tensor<1024xf32>
    fusion.yield %e0 : tensor<1024xf32>
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// f16: 16 bytes are 8 elements.
// CHECK-LABEL: func.func @f16_1024
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 8, unroll = 1, blocks = 1>
func.func @f16_1024(%x: tensor<1024xf16>) -> (tensor<1024xf16>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf16>) {
  ^bb0(%b0: tensor<1024xf16>):
    %e0 = tensor.empty() : tensor<1024xf16>
    fusion.yield %e0 : tensor<1024xf16>
  } -> tensor<1024xf16>
  return %r : tensor<1024xf16>
}

// i8 would allow 16 elements; the width is capped at 8. 4096 / (256 * 8) =
// 2 blocks.
// CHECK-LABEL: func.func @i8
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 8, unroll = 1, blocks = 2>
func.func @i8(%x: tensor<4096xi8>) -> (tensor<4096xi8>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4096xi8>) {
  ^bb0(%b0: tensor<4096xi8>):
    %e0 = tensor.empty() : tensor<4096xi8>
    fusion.yield %e0 : tensor<4096xi8>
  } -> tensor<4096xi8>
  return %r : tensor<4096xi8>
}

// f64: 16 bytes are 2 elements; 4096 / (256 * 2) = 8 blocks.
// CHECK-LABEL: func.func @f64
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 2, unroll = 1, blocks = 8>
func.func @f64(%x: tensor<4096xf64>) -> (tensor<4096xf64>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4096xf64>) {
  ^bb0(%b0: tensor<4096xf64>):
    %e0 = tensor.empty() : tensor<4096xf64>
    fusion.yield %e0 : tensor<4096xf64>
  } -> tensor<4096xf64>
  return %r : tensor<4096xf64>
}

// The widest element type decides: f16 in, f32 out gives 4.
// CHECK-LABEL: func.func @mixed_f16_f32
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1>
func.func @mixed_f16_f32(%x: tensor<1024xf16>) -> (tensor<1024xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf16>) {
  ^bb0(%b0: tensor<1024xf16>):
    %e0 = tensor.empty() : tensor<1024xf32>
    fusion.yield %e0 : tensor<1024xf32>
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// Innermost extent 6: 4 does not divide it, 2 (8 bytes) does.
// CHECK-LABEL: func.func @inner6
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 2, unroll = 1, blocks = 1>
func.func @inner6(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4x6xf32>) {
  ^bb0(%b0: tensor<4x6xf32>):
    %e0 = tensor.empty() : tensor<4x6xf32>
    fusion.yield %e0 : tensor<4x6xf32>
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// Innermost extent 5: only scalar accesses.
// CHECK-LABEL: func.func @inner5
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 1, unroll = 1, blocks = 1>
func.func @inner5(%x: tensor<4x5xf32>) -> (tensor<4x5xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4x5xf32>) {
  ^bb0(%b0: tensor<4x5xf32>):
    %e0 = tensor.empty() : tensor<4x5xf32>
    fusion.yield %e0 : tensor<4x5xf32>
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// Innermost extent 12 with f16: 8 does not divide it, 4 does.
// CHECK-LABEL: func.func @inner12_f16
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1>
func.func @inner12_f16(%x: tensor<3x12xf16>) -> (tensor<3x12xf16>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<3x12xf16>) {
  ^bb0(%b0: tensor<3x12xf16>):
    %e0 = tensor.empty() : tensor<3x12xf16>
    fusion.yield %e0 : tensor<3x12xf16>
  } -> tensor<3x12xf16>
  return %r : tensor<3x12xf16>
}

// A boolean operand forces width 1, whatever the other types; 1024 scalar
// elements need 4 blocks of 256 threads.
// CHECK-LABEL: func.func @bool_operand
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 1, unroll = 1, blocks = 4>
func.func @bool_operand(%m: tensor<1024xi1>, %x: tensor<1024xf32>) -> (tensor<1024xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%m, %x : tensor<1024xi1>, tensor<1024xf32>) {
  ^bb0(%b0: tensor<1024xi1>, %b1: tensor<1024xf32>):
    %e0 = tensor.empty() : tensor<1024xf32>
    fusion.yield %e0 : tensor<1024xf32>
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// A boolean result too.
// CHECK-LABEL: func.func @bool_result
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 1, unroll = 1, blocks = 4>
func.func @bool_result(%x: tensor<1024xf32>) -> (tensor<1024xi1>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1024xf32>) {
  ^bb0(%b0: tensor<1024xf32>):
    %e0 = tensor.empty() : tensor<1024xi1>
    fusion.yield %e0 : tensor<1024xi1>
  } -> tensor<1024xi1>
  return %r : tensor<1024xi1>
}

// The iteration space is the result's shape: a broadcast bias does not
// shrink it. 64 * 128 f16 = 8192 elements, 2048 per block: 4 blocks.
// CHECK-LABEL: func.func @broadcast_bias
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 8, unroll = 1, blocks = 4>
func.func @broadcast_bias(%x: tensor<64x128xf16>, %b: tensor<128xf16>) -> (tensor<64x128xf16>) {
  %r = fusion.group "g0" "elementwise" ins(%x, %b : tensor<64x128xf16>, tensor<128xf16>) {
  ^bb0(%b0: tensor<64x128xf16>, %b1: tensor<128xf16>):
    %e0 = tensor.empty() : tensor<64x128xf16>
    fusion.yield %e0 : tensor<64x128xf16>
  } -> tensor<64x128xf16>
  return %r : tensor<64x128xf16>
}

// 1056 blocks of 256 x 4 elements cover 1056 x 1024 f32 exactly: capped at
// 132 SMs x 8 blocks = 1056 on sm_90 one wave still covers it, no unrolling;
// sm_80 (108 SMs: 864 blocks) caps the grid and unrolls.
// CHECK-LABEL: func.func @one_wave
// NOCAP: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1056>
// SM90: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1056>
// SM80: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 864>
func.func @one_wave(%x: tensor<1056x1024xf32>) -> (tensor<1056x1024xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1056x1024xf32>) {
  ^bb0(%b0: tensor<1056x1024xf32>):
    %e0 = tensor.empty() : tensor<1056x1024xf32>
    fusion.yield %e0 : tensor<1056x1024xf32>
  } -> tensor<1056x1024xf32>
  return %r : tensor<1056x1024xf32>
}

// One row more than a wave: capped grids stop at the cap and unroll.
// CHECK-LABEL: func.func @one_wave_and_a_bit
// NOCAP: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 1057>
// SM90: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 1056>
// SM80: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 864>
func.func @one_wave_and_a_bit(%x: tensor<1057x1024xf32>) -> (tensor<1057x1024xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1057x1024xf32>) {
  ^bb0(%b0: tensor<1057x1024xf32>):
    %e0 = tensor.empty() : tensor<1057x1024xf32>
    fusion.yield %e0 : tensor<1057x1024xf32>
  } -> tensor<1057x1024xf32>
  return %r : tensor<1057x1024xf32>
}

// A large group: one block per 1024 elements, or a capped, unrolled grid;
// the options change both.
// CHECK-LABEL: func.func @large
// NOCAP: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 16384>
// SM90: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 1056>
// SM80: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 864>
// OPT-LABEL: func.func @large
// OPT: strategy = #fusion.strategy<threads = 128, vector = 4, unroll = 2, blocks = 20>
// SMCOUNT-LABEL: func.func @large
// SMCOUNT: strategy = #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 80>
func.func @large(%x: tensor<4096x4096xf32>) -> (tensor<4096x4096xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4096x4096xf32>) {
  ^bb0(%b0: tensor<4096x4096xf32>):
    %e0 = tensor.empty() : tensor<4096x4096xf32>
    fusion.yield %e0 : tensor<4096x4096xf32>
  } -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}

// A strategy already there is kept, even one the pass would not choose.
// CHECK-LABEL: func.func @existing
// CHECK: strategy = #fusion.strategy<threads = 64, vector = 2, unroll = 3, blocks = 5>
// CHECK-NOT: #fusion.strategy
// CHECK: return
// OPT-LABEL: func.func @existing
// OPT: strategy = #fusion.strategy<threads = 64, vector = 2, unroll = 3, blocks = 5>
func.func @existing(%x: tensor<4096x4096xf32>) -> (tensor<4096x4096xf32>) {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4096x4096xf32>) attributes {strategy = #fusion.strategy<threads = 64, vector = 2, unroll = 3, blocks = 5>} {
  ^bb0(%b0: tensor<4096x4096xf32>):
    %e0 = tensor.empty() : tensor<4096x4096xf32>
    fusion.yield %e0 : tensor<4096x4096xf32>
  } -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}

// Several results: all share the iteration space.
// CHECK-LABEL: func.func @two_results
// CHECK: strategy = #fusion.strategy<threads = 256, vector = 8, unroll = 1, blocks = 1>
func.func @two_results(%x: tensor<8x16xf16>) -> (tensor<8x16xf16>, tensor<8x16xf16>) {
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<8x16xf16>) {
  ^bb0(%b0: tensor<8x16xf16>):
    %e0 = tensor.empty() : tensor<8x16xf16>
    %e1 = tensor.empty() : tensor<8x16xf16>
    fusion.yield %e0, %e1 : tensor<8x16xf16>, tensor<8x16xf16>
  } -> tensor<8x16xf16>, tensor<8x16xf16>
  return %r#0, %r#1 : tensor<8x16xf16>, tensor<8x16xf16>
}

// Without a cap the grid still stops at CUDA's largest x-dimension,
// 2^31 - 1 blocks: 2^40 booleans need 2^32 blocks of 256 scalar threads, so
// the grid is capped there and threads unroll.
// CHECK-LABEL: func.func @grid_limit
// NOCAP: strategy = #fusion.strategy<threads = 256, vector = 1, unroll = 4, blocks = 2147483647>
// SM90: strategy = #fusion.strategy<threads = 256, vector = 1, unroll = 4, blocks = 1056>
func.func @grid_limit(%x: tensor<1099511627776xi1>) -> tensor<1099511627776xi1> {
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<1099511627776xi1>) {
  ^bb0(%b0: tensor<1099511627776xi1>):
    fusion.yield %b0 : tensor<1099511627776xi1>
  } -> tensor<1099511627776xi1>
  return %r : tensor<1099511627776xi1>
}
