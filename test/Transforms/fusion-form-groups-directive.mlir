// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups))' | FileCheck %s
// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fusion-form-groups{recompute=always}))' | FileCheck %s

// `fusion.materialize` on an op forces its result to memory: the consumer
// chain is not fused into it and the planner never recomputes it, even when
// recomputing is cheaper or requested.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @forced
// CHECK: %[[P:.*]] = fusion.group "g0" "elementwise" ins(%{{.*}} : tensor<64xf32>)
// CHECK-SAME: decisions = ["materializes result #0 of op 0 of group 'g0' for group 'g1': forced by the fusion.materialize directive"]
// CHECK: math.exp
// CHECK: fusion.group "g1" "elementwise" ins(%[[P]] : tensor<64xf32>)
// CHECK-SAME: "operand #0 stays unfused: its producer carries the fusion.materialize directive"
// CHECK-NOT: math.exp
// CHECK: math.log
func.func @forced(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"], fusion.materialize}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// no-fusion (the unfused baseline): every op alone, nothing recomputed.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-plan{no-fusion=1})' | FileCheck %s --check-prefix=NOFUSE
// NOFUSE-LABEL: func.func @chain2
// NOFUSE: fusion.group "g0"
// NOFUSE: fusion.group "g1"
// NOFUSE-SAME: "operand #0 stays unfused: no-fusion was asked for"
// NOFUSE: fusion.group "g2"
// NOFUSE-NOT: recomputes
func.func @chain2(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.log %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sqrt %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %b, %c : tensor<64xf32>, tensor<64xf32>
}
