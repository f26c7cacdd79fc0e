// A constant tensor.pad feeding an elementwise op through the CUDA
// pipelines. fusion-normalize rewrites the pad as an elementwise gather
// (fusion-pad-to-generic), so the planner puts it in one "elementwise" group
// with its consumer: one kernel that reads the source at the clamped
// position (a gather, one scalar load per lane), selects the padding value
// outside it, doubles it and stores the padded result, without writing the
// padded tensor in between. A producer of the pad's source (exp) is read
// through by the gather and joins that kernel too.
// test/Pipelines/cuda-pad-ptxas.mlir assembles this PTX.
//
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' \
// RUN:   | FileCheck %s --check-prefix=PLAN
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' \
// RUN:   | FileCheck %s --check-prefix=CODEGEN
// RUN: fuse-opt %s -split-input-file --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda,fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir | FileCheck %s --check-prefix=PTX

// One group, which reads only x (30 x 62) and yields the 32 x 64 result; no
// tensor.pad is left.
// PLAN-LABEL: func.func @pad_scale
// PLAN-SAME: (%[[X:[^:]*]]: tensor<30x62xf32>
// PLAN-NOT: tensor.pad
// PLAN: %[[G:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<30x62xf32>) {
// PLAN-NOT: fusion.group
// PLAN-NOT: tensor.pad
// PLAN: tensor.extract
// PLAN: arith.select
// PLAN: arith.mulf
// PLAN: fusion.yield %{{.*}} : tensor<32x64xf32>
// PLAN-NOT: fusion.group
// PLAN: return %[[G]] : tensor<32x64xf32>

// The host launches one kernel: 32 x 64 = 2048 outputs, 4 per thread, 512
// threads = 2 blocks of 256.
// CODEGEN-LABEL: func.func @pad_scale
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<30x62xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<32x64xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: linalg
// CODEGEN-NOT: memref.alloc
// CODEGEN-DAG: %[[H1:.*]] = arith.constant 1 : index
// CODEGEN-DAG: %[[H2:.*]] = arith.constant 2 : index
// CODEGEN-DAG: %[[H256:.*]] = arith.constant 256 : index
// CODEGEN: gpu.launch_func @kfuse_kernels::@pad_scale_g0 blocks in (%[[H2]], %[[H1]], %[[H1]]) threads in (%[[H256]], %[[H1]], %[[H1]]) args(%[[Y]] : memref<32x64xf32>, %[[X]] : memref<30x62xf32>)
// CODEGEN-NEXT: return
// The kernel: inside = 1 <= i < 31 and 1 <= j < 63 (one row, four lanes of
// columns), the source position clamped to [0, 29] x [0, 61], four scalar
// loads of x (the gather), the select with 0.0, the doubling, one vector
// store.
// CODEGEN: gpu.func @pad_scale_g0(%[[KY:[^:]*]]: memref<32x64xf32>, %[[KX:[^:]*]]: memref<30x62xf32>) kernel
// CODEGEN-DAG: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : vector<4xf32>
// CODEGEN-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CODEGEN-DAG: %[[C1:.*]] = arith.constant dense<1> : vector<4xindex>
// CODEGEN-DAG: %[[C31:.*]] = arith.constant dense<31> : vector<4xindex>
// CODEGEN-DAG: %[[C63:.*]] = arith.constant dense<63> : vector<4xindex>
// CODEGEN-DAG: %[[C29:.*]] = arith.constant dense<29> : vector<4xindex>
// CODEGEN-DAG: %[[C61:.*]] = arith.constant dense<61> : vector<4xindex>
// CODEGEN-DAG: %[[OUT:.*]] = memref.collapse_shape %[[KY]] {{\[}}[0, 1]] : memref<32x64xf32> into memref<2048xf32>
// CODEGEN: %[[IGE:.*]] = arith.cmpi sge, %[[I:.*]], %[[C1]] : vector<4xindex>
// CODEGEN-NEXT: %[[ILT:.*]] = arith.cmpi slt, %[[I]], %[[C31]] : vector<4xindex>
// CODEGEN-NEXT: %[[IIN:.*]] = arith.andi %[[IGE]], %[[ILT]] : vector<4xi1>
// CODEGEN: arith.minsi %{{.*}}, %[[C29]] : vector<4xindex>
// CODEGEN: %[[JGE:.*]] = arith.cmpi sge, %[[J:.*]], %[[C1]] : vector<4xindex>
// CODEGEN-NEXT: %[[JLT:.*]] = arith.cmpi slt, %[[J]], %[[C63]] : vector<4xindex>
// CODEGEN-NEXT: %[[JIN:.*]] = arith.andi %[[JGE]], %[[JLT]] : vector<4xi1>
// CODEGEN-NEXT: %[[IN:.*]] = arith.andi %[[IIN]], %[[JIN]] : vector<4xi1>
// CODEGEN: arith.minsi %{{.*}}, %[[C61]] : vector<4xindex>
// CODEGEN-COUNT-4: memref.load %[[KX]][%{{.*}}, %{{.*}}] : memref<30x62xf32>
// CODEGEN-NOT: memref.load
// CODEGEN: %[[SEL:.*]] = arith.select %[[IN]], %{{.*}}, %[[ZERO]] : vector<4xi1>, vector<4xf32>
// CODEGEN-NEXT: %[[V:.*]] = arith.mulf %[[SEL]], %[[TWO]]{{.*}} : vector<4xf32>
// CODEGEN-NEXT: vector.store %[[V]], %[[OUT]][%{{.*}}] {alignment = 16 : i64} : memref<2048xf32>, vector<4xf32>
// CODEGEN-NEXT: gpu.return
// CODEGEN-NOT: gpu.func
// CODEGEN-NOT: gpu.launch_func

// The PTX has one entry, four scalar global loads (the gather), the padding
// selected with selp against 0.0 (0f00000000), one 16-byte store.
// PTX: .visible .entry pad_scale_g0(
// PTX-NOT: .entry
// PTX-COUNT-4: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+[0-9]+)?}}];
// PTX-NOT: ld.global
// PTX: selp.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f00000000, %p{{[0-9]+}};
// PTX-NOT: ld.global
// PTX: st.global.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// PTX-NOT: st.global
// PTX-NOT: .entry pad_scale

func.func @pad_scale(%x: tensor<30x62xf32> {kfuse.name = "x"}) -> (tensor<32x64xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<30x62xf32> to tensor<32x64xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// 2 * pad(exp(x)): the gather reads x through exp, so the whole program is
// still one group and one kernel that loads x only and evaluates exp on the
// gathered values.
// PLAN-LABEL: func.func @pad_of_exp
// PLAN-SAME: (%[[X:[^:]*]]: tensor<30x62xf32>
// PLAN-NEXT: %[[G:.*]] = fusion.group "g0" "elementwise" ins(%[[X]] : tensor<30x62xf32>) {
// PLAN-NOT: fusion.group
// PLAN: math.exp
// PLAN: arith.select
// PLAN: arith.mulf
// PLAN: fusion.yield %{{.*}} : tensor<32x64xf32>
// PLAN-NOT: fusion.group
// PLAN: return %[[G]] : tensor<32x64xf32>

// CODEGEN-LABEL: func.func @pad_of_exp
// CODEGEN-SAME: (%[[X:[^:]*]]: memref<30x62xf32> {kfuse.name = "x"}, %[[Y:[^:]*]]: memref<32x64xf32> {kfuse.name = "out0"})
// CODEGEN-NOT: memref.alloc
// CODEGEN: gpu.launch_func @kfuse_kernels::@pad_of_exp_g0 blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[Y]] : memref<32x64xf32>, %[[X]] : memref<30x62xf32>)
// CODEGEN-NEXT: return
// CODEGEN: gpu.func @pad_of_exp_g0(%[[KY:[^:]*]]: memref<32x64xf32>, %[[KX:[^:]*]]: memref<30x62xf32>) kernel
// CODEGEN-COUNT-4: memref.load %[[KX]][%{{.*}}, %{{.*}}] : memref<30x62xf32>
// CODEGEN-NOT: memref.load
// CODEGEN: %[[E:.*]] = math.exp %{{.*}} : vector<4xf32>
// CODEGEN-NEXT: %[[SEL:.*]] = arith.select %{{.*}}, %[[E]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CODEGEN-NEXT: arith.mulf %[[SEL]]
// CODEGEN-NEXT: vector.store
// CODEGEN-NEXT: gpu.return
// CODEGEN-NOT: gpu.func
// CODEGEN-NOT: gpu.launch_func

// PTX: .visible .entry pad_of_exp_g0(
// PTX-NOT: .entry
// PTX-COUNT-4: ld.global.b32
// PTX-NOT: ld.global
// PTX: ex2.approx
// PTX: selp.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f00000000, %p{{[0-9]+}};
// PTX: st.global.v4.b32
// PTX-NOT: st.global
// PTX-NOT: .entry

func.func @pad_of_exp(%x: tensor<30x62xf32> {kfuse.name = "x"}) -> (tensor<32x64xf32> {kfuse.name = "out0"}) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<30x62xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<30x62xf32>) outs(%e0 : tensor<30x62xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<30x62xf32>
  %p = tensor.pad %t low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<30x62xf32> to tensor<32x64xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}
