// REQUIRES: ptxas
//
// Rows kept in registers and shared memory (row-smem; by default what the
// chip lets a block opt in to, less 2 KB). A softmax over rows of 65536 f32
// is too long for one block's registers (1024 threads x 8 chunks of 4
// floats hold 32768): it takes one block anyway, each thread keeping 6 of
// its 16 chunks in registers and chunks 6..15 in 160 KB of dynamic shared
// memory (gpu.dynamic_shared_memory viewed as [10 chunks][1024 threads]
// vectors, the launch's dynamic_shared_memory_size; the loads, stores and
// reloads need registers too). The first phase loads all 16 chunks from x
// and stores the last 10 in the thread's own slots; the later phases (the
// sum, the stores) reload them from there (no barrier: a thread reads only
// what it wrote). Rows of 262144 take clusters of 4 blocks this way, not 8
// (a cluster's block keeps 5 chunks in registers and 11 in 176 KB: the
// exchange needs registers too)
// (row-smem=0: 65536 takes 4 at chunks per thread, 262144 8). That is with
// the cluster barrier exchange (row-exchange=barrier); with the default
// async exchange a cluster whose blocks hold their share in registers alone
// is kept over a smaller one with shared memory (262144: 8 blocks, no
// shared memory; 65536 still one block with it). A layer norm keeps only x there: its weight and bias are
// the same for every row (the caches serve them). On sm_80 (no clusters)
// the 65536 row takes one block too; before, it streamed.
// In PTX the dynamic shared memory is `.extern .shared` (fusion-extern-
// dynamic-shared: the NVVM lowering's internal zero-sized array would be
// demoted to a one-byte static variable), and ptxas spills nothing.
//
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier})' -o %t.codegen.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file=%t.codegen.mlir
// RUN: FileCheck %s --check-prefix=KERN --input-file=%t.codegen.mlir
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-exchange=barrier row-smem=0})' | FileCheck %s --check-prefix=OFF
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda)' | FileCheck %s --check-prefix=ASYNC
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{chip=sm_80})' | FileCheck %s --check-prefix=SM80
// RUN: fuse-opt %t.codegen.mlir --pass-pipeline='builtin.module(fusion-target-cuda)' -o %t.mlir
// RUN: %python %S/extract_ptx.py %t.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan,fusion-codegen-cuda{row-occupancy=2},fusion-target-cuda)' -o %t.pair.mlir
// RUN: %python %S/extract_ptx.py %t.pair.mlir > %t.pair.ptx
// RUN: FileCheck %s --check-prefix=PAIR --input-file=%t.pair.ptx
// RUN: %ptxas -arch=sm_90 -v %t.pair.ptx -o %t.pair.cubin 2>&1 | FileCheck %s --check-prefix=PAIRREGS
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-occupancy=3})' 2>&1 | FileCheck %s --check-prefix=BADOCC
// RUN: echo 'func.func @f() { return }' | not fuse-opt - --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-occupancy=8}))' 2>&1 | FileCheck %s --check-prefix=PASSBADOCC
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{row-smem=-2})' 2>&1 | FileCheck %s --check-prefix=BADSIZE
// RUN: not fuse-opt %s --pass-pipeline='builtin.module(fusion-codegen-cuda{chip=sm_80 row-smem=200000})' 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: echo 'func.func @f() { return }' | not fuse-opt - --pass-pipeline='builtin.module(func.func(fusion-generic-to-gpu{row-smem=-1}))' 2>&1 | FileCheck %s --check-prefix=PASSBAD

// HOST-LABEL: func.func @softmax_64k
// HOST: gpu.launch_func @kfuse_kernels::@softmax_64k_g0 blocks in (%c256, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c163840_i32
// HOST-LABEL: func.func @softmax_256k
// HOST: gpu.launch_func @kfuse_kernels::@softmax_256k_g0 clusters in (%c4, %c1, %c1) blocks in (%c1024, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c180224_i32
// HOST-LABEL: func.func @layernorm_64k
// HOST: gpu.launch_func @kfuse_kernels::@layernorm_64k_g0 blocks in (%c256, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c163840_i32

// KERN-LABEL: gpu.func @softmax_64k_g0
// KERN: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// KERN-NEXT: %[[VIEW:.*]] = memref.view %[[DYN]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<10x1024xvector<4xf32>, #gpu.address_space<workgroup>>
// KERN-COUNT-6: vector.load %arg0
// KERN: %[[X6:.*]] = vector.load %arg0
// KERN-NEXT: memref.store %[[X6]], %[[VIEW]][%c0, %thread_id_x]
// KERN-COUNT-9: memref.store %{{.*}}, %[[VIEW]][%c{{[1-9]}}, %thread_id_x]
// KERN-NOT: vector.load %arg0
// KERN: gpu.barrier
// KERN-COUNT-10: memref.load %[[VIEW]][%c{{[0-9]}}, %thread_id_x]
// KERN: gpu.barrier
// KERN-NOT: vector.load %arg0
// KERN-COUNT-10: memref.load %[[VIEW]][%c{{[0-9]}}, %thread_id_x]
// KERN-NOT: vector.load %arg0
// KERN-NOT: memref.store %{{.*}}, %[[VIEW]]
// KERN: gpu.return
// KERN-LABEL: gpu.func @softmax_256k_g0
// KERN: memref<11x1024xvector<4xf32>, #gpu.address_space<workgroup>>
// KERN: nvvm.cluster.wait
// KERN-LABEL: gpu.func @layernorm_64k_g0
// KERN-COUNT-1: memref.view
// KERN-NOT: memref.view
// KERN: gpu.return

// OFF-LABEL: func.func @softmax_64k
// OFF: gpu.launch_func @kfuse_kernels::@softmax_64k_g0 clusters in (%c4, %c1, %c1)
// OFF-NOT: dynamic_shared_memory_size
// OFF-LABEL: func.func @softmax_256k
// OFF: gpu.launch_func @kfuse_kernels::@softmax_256k_g0 clusters in (%c8, %c1, %c1)
// OFF-NOT: gpu.dynamic_shared_memory

// ASYNC-LABEL: func.func @softmax_64k
// ASYNC: gpu.launch_func @kfuse_kernels::@softmax_64k_g0 blocks in (%c256, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c163840_i32
// ASYNC-LABEL: func.func @softmax_256k
// ASYNC: gpu.launch_func @kfuse_kernels::@softmax_256k_g0 clusters in (%c8, %c1, %c1) blocks in (%c2048, %c1, %c1) threads in (%c1024, %c1, %c1)
// ASYNC-NOT: dynamic_shared_memory_size
// ASYNC-LABEL: func.func @layernorm_64k
// ASYNC: dynamic_shared_memory_size %c163840_i32

// SM80-LABEL: func.func @softmax_64k
// SM80: gpu.launch_func @kfuse_kernels::@softmax_64k_g0 blocks in (%c256, %c1, %c1) threads in (%c1024, %c1, %c1) dynamic_shared_memory_size %c163840_i32

// PTX: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// PTX-LABEL: .entry softmax_64k_g0
// PTX-COUNT-10: st.shared.v4.b32
// PTX-COUNT-20: ld.shared.v4.b32
// PTX: ret;

// SPILLS-DAG: Function properties for softmax_64k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-DAG: Function properties for softmax_256k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-DAG: Function properties for layernorm_64k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// With row-occupancy=2, rows of 262144 take clusters of 8 blocks of 512
// threads, two an SM: each thread keeps 5 of its 16 chunks in registers
// and 11 in 88 KB of shared memory (half the budget a block), and
// .minnctapersm 2 holds ptxas to 64 registers a thread. Rows of 65536
// take clusters of 8 such blocks in registers alone (4 chunks a thread;
// one block of 512 threads would keep 20 of its 32, two blocks 19 of 16
// each with shared memory).
// PAIR-LABEL: .entry softmax_64k_g0
// PAIR: .maxntid 512, 1, 1
// PAIR-NEXT: .minnctapersm 2
// PAIR-NEXT: .explicitcluster
// PAIR-NEXT: .reqnctapercluster 8, 1, 1
// PAIR-NOT: st.shared.v4
// PAIR-LABEL: .entry softmax_256k_g0
// PAIR: .maxntid 512, 1, 1
// PAIR-NEXT: .minnctapersm 2
// PAIR-NEXT: .explicitcluster
// PAIR-NEXT: .reqnctapercluster 8, 1, 1
// PAIR-COUNT-11: st.shared.v4.b32
// PAIR: st.async
// PAIR-LABEL: .entry layernorm_64k_g0
// PAIR: .minnctapersm 2
// PAIRREGS: Function properties for softmax_256k_g0{{[[:space:]]+}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PAIRREGS-NEXT: Used {{[0-9]|[1-5][0-9]|6[0-4]}} registers

// BADOCC: fusion-codegen-cuda: row-occupancy must be 1, 2 or 4, got 3
// PASSBADOCC: fusion-generic-to-gpu: row-occupancy must be 1, 2 or 4, got 8
// BADSIZE: row-smem must be -1 (the chip's) or 0 to 231424 bytes on sm_90, got -2
// TOOBIG: row-smem must be -1 (the chip's) or 0 to 165888 bytes on sm_80, got 200000
// PASSBAD: fusion-generic-to-gpu: row-smem must be >= 0, got -1

func.func @softmax_64k(%arg0: tensor<256x65536xf32> {kfuse.name = "x"}) -> (tensor<256x65536xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<256xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x65536xf32>) outs(%i2 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<256x65536xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<256x65536xf32>, tensor<256xf32>) outs(%e3 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %e4 = tensor.empty() : tensor<256x65536xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<256x65536xf32>) outs(%e4 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<256xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<256xf32>) -> tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<256x65536xf32>) outs(%i5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x65536xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<256x65536xf32>, tensor<256xf32>) outs(%e6 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  return %t6 : tensor<256x65536xf32>
}

func.func @softmax_256k(%arg0: tensor<256x262144xf32> {kfuse.name = "x"}) -> (tensor<256x262144xf32> {kfuse.name = "y"}) {
  %c2 = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<256xf32>
  %i2 = linalg.fill ins(%c2 : f32) outs(%e2 : tensor<256xf32>) -> tensor<256xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x262144xf32>) outs(%i2 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.maximumf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<256x262144xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t2 : tensor<256x262144xf32>, tensor<256xf32>) outs(%e3 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  %e4 = tensor.empty() : tensor<256x262144xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<256x262144xf32>) outs(%e4 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.exp %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  %c5 = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<256xf32>
  %i5 = linalg.fill ins(%c5 : f32) outs(%e5 : tensor<256xf32>) -> tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t4 : tensor<256x262144xf32>) outs(%i5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x262144xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t4, %t5 : tensor<256x262144xf32>, tensor<256xf32>) outs(%e6 : tensor<256x262144xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.divf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x262144xf32>
  return %t6 : tensor<256x262144xf32>
}

func.func @layernorm_64k(%arg0: tensor<256x65536xf32> {kfuse.name = "x"}, %arg1: tensor<65536xf32> {kfuse.name = "w"}, %arg2: tensor<65536xf32> {kfuse.name = "b"}) -> (tensor<256x65536xf32> {kfuse.name = "y"}) {
  %c4 = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<256xf32>
  %i4 = linalg.fill ins(%c4 : f32) outs(%e4 : tensor<256xf32>) -> tensor<256xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x65536xf32>) outs(%i4 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e5 = tensor.empty() : tensor<256xf32>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t4 : tensor<256xf32>) outs(%e5 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.constant 65536.0 : f32
    %v1 = arith.divf %in0, %v0 : f32
    linalg.yield %v1 : f32
  } -> tensor<256xf32>
  %e6 = tensor.empty() : tensor<256x65536xf32>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %t5 : tensor<256x65536xf32>, tensor<256xf32>) outs(%e6 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.subf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %e7 = tensor.empty() : tensor<256x65536xf32>
  %t7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6 : tensor<256x65536xf32>) outs(%e7 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.mulf %in0, %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %c8 = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<256xf32>
  %i8 = linalg.fill ins(%c8 : f32) outs(%e8 : tensor<256xf32>) -> tensor<256xf32>
  %t8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t7 : tensor<256x65536xf32>) outs(%i8 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.addf %in0, %out : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e9 = tensor.empty() : tensor<256xf32>
  %t9 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t8 : tensor<256xf32>) outs(%e9 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.constant 65536.0 : f32
    %v1 = arith.divf %in0, %v0 : f32
    linalg.yield %v1 : f32
  } -> tensor<256xf32>
  %e10 = tensor.empty() : tensor<256xf32>
  %t10 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t9 : tensor<256xf32>) outs(%e10 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = arith.constant 9.999999747378752e-06 : f32
    %v1 = arith.addf %in0, %v0 : f32
    linalg.yield %v1 : f32
  } -> tensor<256xf32>
  %e11 = tensor.empty() : tensor<256xf32>
  %t11 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t10 : tensor<256xf32>) outs(%e11 : tensor<256xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %v0 = math.rsqrt %in0 : f32
    linalg.yield %v0 : f32
  } -> tensor<256xf32>
  %e12 = tensor.empty() : tensor<256x65536xf32>
  %t12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t6, %t11 : tensor<256x65536xf32>, tensor<256xf32>) outs(%e12 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.mulf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %e13 = tensor.empty() : tensor<256x65536xf32>
  %t13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t12, %arg1 : tensor<256x65536xf32>, tensor<65536xf32>) outs(%e13 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.mulf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  %e14 = tensor.empty() : tensor<256x65536xf32>
  %t14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t13, %arg2 : tensor<256x65536xf32>, tensor<65536xf32>) outs(%e14 : tensor<256x65536xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %v0 = arith.addf %in0, %in1 : f32
    linalg.yield %v0 : f32
  } -> tensor<256x65536xf32>
  return %t14 : tensor<256x65536xf32>
}
