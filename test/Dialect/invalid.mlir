// RUN: fuse-opt %s -split-input-file -verify-diagnostics

// Every verifier error of fusion.group, fusion.yield and #fusion.strategy.

func.func @unknown_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op has unknown kind 'pointwise' (expected 'elementwise', 'reduction' or 'contraction')}}
  %r = fusion.group "g0" "pointwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @empty_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op needs a non-empty name}}
  %r = fusion.group "" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @dynamic_input(%x: tensor<4xf32>, %y: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op input #1 must be a tensor of static shape, got 'tensor<?xf32>'}}
  %r = fusion.group "g0" "elementwise" ins(%x, %y : tensor<4xf32>, tensor<?xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<?xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @dynamic_result(%x: tensor<4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'fusion.group' op result #1 must be a tensor of static shape, got 'tensor<?x4xf32>'}}
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a, %y : tensor<4xf32>, tensor<?x4xf32>
  } -> tensor<4xf32>, tensor<?x4xf32>
  return %r#1 : tensor<?x4xf32>
}

// -----

// Unranked tensors are rejected by the operand type constraint already.
func.func @unranked_input(%x: tensor<*xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of any type values, but got 'tensor<*xf32>'}}
  "fusion.group"(%x) <{sym_name = "g0", kind = "elementwise"}> ({
  ^bb0(%a: tensor<*xf32>):
    "fusion.yield"() : () -> ()
  }) : (tensor<*xf32>) -> ()
  return
}

// -----

func.func @too_many_block_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op has 1 inputs but its block has 2 arguments}}
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @too_few_block_args(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op has 2 inputs but its block has 1 arguments}}
  %r = fusion.group "g0" "elementwise" ins(%x, %y : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @block_arg_type(%x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op input #1 has type 'tensor<4xf16>' but block argument #1 has type 'tensor<4xf32>'}}
  %r = fusion.group "g0" "elementwise" ins(%x, %y : tensor<4xf32>, tensor<4xf16>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    fusion.yield %b : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @yield_too_many(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op yields 2 values but has 1 results}}
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @yield_too_few(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op yields 1 values but has 2 results}}
  %r:2 = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %r#0 : tensor<4xf32>
}

// -----

func.func @yield_type(%x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op yields 'tensor<4xf16>' as value #1 but result #1 has type 'tensor<4xf32>'}}
  %r:2 = fusion.group "g0" "elementwise" ins(%x, %y : tensor<4xf32>, tensor<4xf16>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf16>):
    fusion.yield %a, %b : tensor<4xf32>, tensor<4xf16>
  } -> tensor<4xf32>, tensor<4xf32>
  return %r#0 : tensor<4xf32>
}

// -----

func.func @yield_outside_group(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fusion.yield' op expects parent op 'fusion.group'}}
  fusion.yield %x : tensor<4xf32>
}

// -----

// #fusion.strategy parameters.

// expected-error @+1 {{threads must be a positive multiple of 32 and at most 1024, got 100}}
func.func @threads_not_multiple() attributes {s = #fusion.strategy<threads = 100, vector = 4, unroll = 1, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{threads must be a positive multiple of 32 and at most 1024, got 2048}}
func.func @threads_too_many() attributes {s = #fusion.strategy<threads = 2048, vector = 4, unroll = 1, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{threads must be a positive multiple of 32 and at most 1024, got 0}}
func.func @threads_zero() attributes {s = #fusion.strategy<threads = 0, vector = 4, unroll = 1, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{vector must be 1, 2, 4 or 8, got 3}}
func.func @vector_three() attributes {s = #fusion.strategy<threads = 256, vector = 3, unroll = 1, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{vector must be 1, 2, 4 or 8, got 16}}
func.func @vector_sixteen() attributes {s = #fusion.strategy<threads = 256, vector = 16, unroll = 1, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{unroll must be between 1 and 16, got 0}}
func.func @unroll_zero() attributes {s = #fusion.strategy<threads = 256, vector = 4, unroll = 0, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{unroll must be between 1 and 16, got 17}}
func.func @unroll_too_many() attributes {s = #fusion.strategy<threads = 256, vector = 4, unroll = 17, blocks = 1>} {
  return
}

// -----

// expected-error @+1 {{blocks must be positive, got 0}}
func.func @blocks_zero() attributes {s = #fusion.strategy<threads = 256, vector = 4, unroll = 1, blocks = 0>} {
  return
}

// -----

// A bad strategy on a group is rejected while parsing the group.
func.func @bad_group_strategy(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{blocks must be positive, got -3}}
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>)
      attributes {strategy = #fusion.strategy<threads = 32, vector = 1, unroll = 1, blocks = -3>} {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The strategy must be a #fusion.strategy.
func.func @strategy_wrong_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.group' op attribute 'strategy' failed to satisfy constraint}}
  %r = fusion.group "g0" "elementwise" ins(%x : tensor<4xf32>) attributes {strategy = 4 : i64} {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @guard_shapes(%v: vector<4xf32>, %ok: i1) -> vector<4xf32> {
  // expected-error @+1 {{'fusion.guard' op condition 'i1' does not have the shape of the value 'vector<4xf32>'}}
  %g = fusion.guard %v if %ok, "m" : vector<4xf32>, i1
  return %g : vector<4xf32>
}

// -----

func.func @guard_message(%x: f32, %ok: i1) -> f32 {
  // expected-error @+1 {{'fusion.guard' op needs a message}}
  %g = fusion.guard %x if %ok, "" : f32, i1
  return %g : f32
}

// -----

func.func @guard_index_shape(%v: vector<4xf32>, %ok: vector<4xi1>, %i: i64) -> vector<4xf32> {
  // expected-error @+1 {{'fusion.guard' op index 'i64' must be i64 of the condition's shape 'vector<4xi1>'}}
  %g = fusion.guard %v if %ok, "m" index %i : vector<4xf32>, vector<4xi1>, i64
  return %g : vector<4xf32>
}

// -----

func.func @guard_index_type(%x: f32, %ok: i1, %i: i32) -> f32 {
  // expected-error @+1 {{'fusion.guard' op index 'i32' must be i64 of the condition's shape 'i1'}}
  %g = fusion.guard %x if %ok, "m" index %i : f32, i1, i32
  return %g : f32
}

// -----

func.func @guard_not_bool(%x: f32, %ok: i32) -> f32 {
  // expected-error @+1 {{'fusion.guard' op operand #0 must be bool-like}}
  %g = fusion.guard %x if %ok, "m" : f32, i32
  return %g : f32
}
