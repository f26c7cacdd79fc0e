// RUN: fuse-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fusion-pack-launches{sm-count=4}))' | FileCheck %s
// RUN: not fuse-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fusion-pack-launches{max-launches=1}))' 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: fusion-pack-launches: max-launches must be >= 2 and max-bytes >= 0, got 1 and 1048576

// Three small kernels over different buffers (an optimizer's norm of each
// parameter, a block each): one launch of the widest block (96 threads),
// block b running the kernel whose range holds it with its own block id,
// grid and block size; threads past a narrower kernel's block exit first.
// Workgroup buffers of one type are shared (a block runs one kernel).
// CHECK-LABEL: func.func @three
// CHECK-SAME: kfuse.packed = {three_g0 = {{\[}}["three_g0", 1, 64], ["three_g1", 2, 96], ["three_g2", 1, 32]]}
// CHECK: gpu.launch blocks(%[[B:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %c4{{[_0-9]*}}, {{[^)]*}}) threads(%[[T:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) in (%{{[^ ]*}} = %c96{{[_0-9]*}}, {{[^)]*}}) module(@kfuse_kernels) function(@three_g0) workgroup(%[[W:[^ ]*]] : memref<4xf32, #gpu.address_space<workgroup>>) {
// CHECK-NOT: workgroup
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[B]], %[[ONE]] : index
// CHECK-NEXT: scf.if %[[IN0]] {
// CHECK-NEXT: %[[PAST:.*]] = arith.cmpi uge, %[[T]], %[[C64]] : index
// CHECK-NEXT: scf.if %[[PAST]] {
// CHECK-NEXT: nvvm.exit
// CHECK-NEXT: }
// CHECK-NEXT: memref.load %arg0[%[[T]]]
// CHECK-NEXT: arith.remui %[[T]], %[[C64]] : index
// CHECK: memref.store %{{.*}}, %[[W]][%{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK: memref.store %{{.*}}, %arg3[%[[B]]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[BEFORE3:.*]] = arith.cmpi ult, %[[B]], %[[THREE]] : index
// CHECK-NEXT: %[[AT1:.*]] = arith.cmpi uge, %[[B]], %[[ONE]] : index
// CHECK-NEXT: %[[IN1:.*]] = arith.andi %[[AT1]], %[[BEFORE3]] : i1
// CHECK-NEXT: scf.if %[[IN1]] {
// CHECK-NEXT: %[[OWN:.*]] = arith.subi %[[B]], %[[ONE]] : index
// CHECK-NEXT: memref.load %arg1[%[[T]]]
// CHECK: memref.store %{{.*}}, %[[W]][%{{.*}}]
// CHECK: memref.store %{{.*}}, %arg4[%[[OWN]]]
// CHECK-NEXT: }
// CHECK-NEXT: arith.cmpi ult, %[[B]], %[[FOUR]] : index
// CHECK: scf.if
// CHECK-NEXT: %[[PAST2:.*]] = arith.cmpi uge, %[[T]], %[[C32]] : index
// CHECK-NEXT: scf.if %[[PAST2]] {
// CHECK-NEXT: nvvm.exit
// CHECK: memref.load %arg2[%[[T]]]
// (its grid, one block, a constant now)
// CHECK-NEXT: arith.index_cast %[[ONE]] : index to i32
// CHECK: memref.store %{{.*}}, %arg5[%{{.*}}]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @three(%x0: memref<64xf32>, %x1: memref<96xf32>, %x2: memref<32xf32>,
                 %y0: memref<1xf32>, %y1: memref<2xf32>, %y2: memref<1xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@three_g0)
             workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x0[%tx] : memref<64xf32>
    %lane = arith.remui %tx, %sx : index
    %slot = arith.divui %lane, %c32 : index
    memref.store %v, %w[%slot] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %t = memref.load %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %t, %y0[%bx] : memref<1xf32>
    gpu.terminator
  }
  %tmp = memref.alloc() : memref<2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c96, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@three_g1)
             workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x1[%tx] : memref<96xf32>
    %slot = arith.divui %tx, %c32 : index
    memref.store %v, %w[%slot] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %t = memref.load %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %t, %y1[%bx] : memref<2xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@three_g2) {
    %v = memref.load %x2[%tx] : memref<32xf32>
    %n = arith.index_cast %gx : index to i32
    %f = arith.sitofp %n : i32 to f32
    %s = arith.mulf %v, %f : f32
    memref.store %s, %y2[%bx] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// The second kernel reads what the first writes: they stay two launches.
// CHECK-LABEL: func.func @dependent
// CHECK-NOT: kfuse.packed
// CHECK: gpu.launch {{.*}} function(@dependent_g0)
// CHECK: gpu.launch {{.*}} function(@dependent_g1)
func.func @dependent(%x: memref<32xf32>, %t: memref<32xf32>, %y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@dependent_g0) {
    %v = memref.load %x[%tx] : memref<32xf32>
    memref.store %v, %t[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@dependent_g1) {
    %v = memref.load %t[%tx] : memref<32xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Views are followed to their buffer: writing a slice of what another
// kernel reads is a dependence too.
// CHECK-LABEL: func.func @through_views
// CHECK-NOT: kfuse.packed
// CHECK: function(@through_views_g0)
// CHECK: function(@through_views_g1)
func.func @through_views(%x: memref<64xf32>, %y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@through_views_g0) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  %upper = memref.subview %x[32] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: 32>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@through_views_g1) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %upper[%tx] : memref<32xf32, strided<[1], offset: 32>>
    gpu.terminator
  }
  return
}

// -----

// A kernel of more threads than 1024 an SM (sm-count=4: 8 blocks of 1024)
// fills the GPU on its own and is left alone; the two small kernels around it, independent of
// it, pack where the first of them was (the second moves up past it). The
// last kernel writes what the first reads: a launch of its own, after the
// copy it reads.
// CHECK-LABEL: func.func @around
// CHECK-SAME: kfuse.packed = {around_g0 = {{\[}}["around_g0", 1, 32], ["around_g2", 1, 32]]}
// CHECK: gpu.launch {{.*}} function(@around_g0)
// CHECK: gpu.launch {{.*}} function(@around_g1)
// CHECK-NOT: function(@around_g2)
// CHECK: memref.copy
// CHECK: gpu.launch {{.*}} function(@around_g3)
// CHECK-NOT: gpu.launch
func.func @around(%a: memref<32xf32>, %b: memref<32xf32>, %big: memref<8192xf32>,
                  %c: memref<32xf32>, %d: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@around_g0) {
    %v = memref.load %a[%tx] : memref<32xf32>
    memref.store %v, %b[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1024, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@around_g1) {
    %i = arith.muli %bx, %c1024 : index
    %j = arith.addi %i, %tx : index
    %f = arith.constant 2.0 : f32
    memref.store %f, %big[%j] : memref<8192xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@around_g2) {
    %v = memref.load %c[%tx] : memref<32xf32>
    memref.store %v, %d[%tx] : memref<32xf32>
    gpu.terminator
  }
  memref.copy %a, %c : memref<32xf32> to memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@around_g3) {
    %v = memref.load %c[%tx] : memref<32xf32>
    memref.store %v, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A narrower kernel that is not whole warps (40 threads beside 64) would
// leave a warp half exited at its barriers and shuffles; one with an NVVM
// operation (a cluster's, a grid dependence's) or an attribute the launch
// plan reads is not moved; neither is one with dynamic shared memory.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kfuse.packed
// CHECK-COUNT-5: gpu.launch
func.func @left_alone(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>,
                      %d: memref<64xf32>, %e: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c40, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@left_alone_g0) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@left_alone_g1) {
    %f = arith.constant 2.0 : f32
    memref.store %f, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@left_alone_g2) {
    nvvm.griddepcontrol wait
    %f = arith.constant 3.0 : f32
    memref.store %f, %c[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@left_alone_g3) {
    %f = arith.constant 4.0 : f32
    memref.store %f, %d[%tx] : memref<64xf32>
    gpu.terminator
  } {kfuse.persistent = 4 : i64}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %c128
             module(@kfuse_kernels) function(@left_alone_g4) {
    %f = arith.constant 5.0 : f32
    memref.store %f, %e[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel of one block whose buffers hold more than max-bytes (1 MiB by
// default; here 2 MiB walked by a loop) is not small: it keeps its launch.
// CHECK-LABEL: func.func @too_many_bytes
// CHECK-NOT: kfuse.packed
// CHECK-COUNT-2: gpu.launch
func.func @too_many_bytes(%big: memref<524288xf32>, %a: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %cn = arith.constant 524288 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@too_many_bytes_g0) {
    %f = arith.constant 1.0 : f32
    scf.for %i = %tx to %cn step %c32 {
      memref.store %f, %big[%i] : memref<524288xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@too_many_bytes_g1) {
    %f = arith.constant 2.0 : f32
    memref.store %f, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Kernels whose code is the same but for the buffers they are passed (an
// optimizer's step over parameters of one size) run one copy of it: block
// b of their range picks its kernel's buffers (b - start) / blocks, in one
// switch whose cases yield each kernel's buffers, and runs block
// (b - start) mod blocks. A kernel that differs in a constant keeps code of
// its own.
// CHECK-LABEL: func.func @same_code
// CHECK-SAME: kfuse.packed = {same_code_g0 = {{\[}}["same_code_g0", 2, 32], ["same_code_g1", 2, 32], ["same_code_g2", 2, 32]]}
// CHECK: gpu.launch blocks(%[[B:[^,]*]], {{.*}} function(@same_code_g0)
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[B]], %[[FOUR]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[WHICH:.*]] = arith.divui %[[B]], %[[TWO]] : index
// CHECK-NEXT: %[[OWN:.*]] = arith.remui %[[B]], %[[TWO]] : index
// CHECK-NEXT: %[[PICK:.*]]:2 = scf.index_switch %[[WHICH]] -> memref<64xf32>, memref<64xf32>
// CHECK-NEXT: case 0 {
// CHECK-NEXT: scf.yield %arg0, %arg3 : memref<64xf32>, memref<64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT: scf.yield %arg1, %arg4 : memref<64xf32>, memref<64xf32>
// CHECK-NEXT: }
// CHECK: memref.load %[[PICK]]#0[%{{.*}}]
// CHECK: memref.store %{{.*}}, %[[PICK]]#1[%{{.*}}]
// CHECK-NOT: %arg0
// CHECK: }
// CHECK: memref.load %arg2
// CHECK-NEXT: arith.constant 3.000000e+00
// CHECK-NOT: gpu.launch
func.func @same_code(%x0: memref<64xf32>, %x1: memref<64xf32>, %x2: memref<64xf32>,
                     %y0: memref<64xf32>, %y1: memref<64xf32>, %y2: memref<64xf32>) {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_g0) {
    %i0 = arith.muli %bx, %sx : index
    %i = arith.addi %i0, %tx : index
    %v = memref.load %x0[%i] : memref<64xf32>
    %f = arith.constant 2.0 : f32
    %w = arith.mulf %v, %f : f32
    memref.store %w, %y0[%i] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_g1) {
    %i0 = arith.muli %bx, %sx : index
    %i = arith.addi %i0, %tx : index
    %v = memref.load %x1[%i] : memref<64xf32>
    %f = arith.constant 2.0 : f32
    %w = arith.mulf %v, %f : f32
    memref.store %w, %y1[%i] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_g2) {
    %i0 = arith.muli %bx, %sx : index
    %i = arith.addi %i0, %tx : index
    %v = memref.load %x2[%i] : memref<64xf32>
    %f = arith.constant 3.0 : f32
    %w = arith.mulf %v, %f : f32
    memref.store %w, %y2[%i] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Three kernels of one code, a block each, that share a buffer (a scale
// every step reads): the switch has a case for each kernel but the last,
// whose buffers come from the default, and yields only the buffers that
// differ; the shared one is read as it is.
// CHECK-LABEL: func.func @same_code_three
// CHECK-SAME: kfuse.packed = {same_code_three_g0 = {{\[}}["same_code_three_g0", 1, 32], ["same_code_three_g1", 1, 32], ["same_code_three_g2", 1, 32]]}
// CHECK: gpu.launch blocks(%[[B:[^,]*]], {{.*}} function(@same_code_three_g0)
// CHECK: %[[PICK:.*]]:2 = scf.index_switch %[[B]] -> memref<32xf32>, memref<32xf32>
// CHECK-NEXT: case 0 {
// CHECK-NEXT: scf.yield %arg0, %arg3 : memref<32xf32>, memref<32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: case 1 {
// CHECK-NEXT: scf.yield %arg1, %arg4 : memref<32xf32>, memref<32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT: scf.yield %arg2, %arg5 : memref<32xf32>, memref<32xf32>
// CHECK-NEXT: }
// CHECK: memref.load %[[PICK]]#0[
// CHECK: memref.load %arg6[
// CHECK: memref.store %{{.*}}, %[[PICK]]#1[
// CHECK-NOT: gpu.launch
func.func @same_code_three(%x0: memref<32xf32>, %x1: memref<32xf32>, %x2: memref<32xf32>,
                           %y0: memref<32xf32>, %y1: memref<32xf32>, %y2: memref<32xf32>,
                           %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_three_g0) {
    %v = memref.load %x0[%tx] : memref<32xf32>
    %a = memref.load %s[%c0] : memref<1xf32>
    %w = arith.mulf %v, %a : f32
    memref.store %w, %y0[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_three_g1) {
    %v = memref.load %x1[%tx] : memref<32xf32>
    %a = memref.load %s[%c0] : memref<1xf32>
    %w = arith.mulf %v, %a : f32
    memref.store %w, %y1[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@same_code_three_g2) {
    %v = memref.load %x2[%tx] : memref<32xf32>
    %a = memref.load %s[%c0] : memref<1xf32>
    %w = arith.mulf %v, %a : f32
    memref.store %w, %y2[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Two parameters, each a partials kernel and a store kernel that reads the
// partials (a split norm and the update): each kernel joins the earliest
// pack it may, so the partials kernels run in one launch and the store
// kernels in another (not pairs of a store and the next partials). The
// second partials buffer's allocation moves up with its kernel.
// CHECK-LABEL: func.func @two_phases
// CHECK-SAME: kfuse.packed = {two_phases_p0 = {{\[}}["two_phases_p0", 1, 32], ["two_phases_p1", 1, 32]], two_phases_s0 = {{\[}}["two_phases_s0", 1, 32], ["two_phases_s1", 1, 32]]}
// CHECK: %[[T0:.*]] = memref.alloc() : memref<32xf32>
// CHECK: %[[T1:.*]] = memref.alloc() : memref<32xf32>
// CHECK: gpu.launch {{.*}} function(@two_phases_p0)
// CHECK: memref.store %{{.*}}, %[[T0]]
// CHECK: memref.store %{{.*}}, %[[T1]]
// CHECK: gpu.launch {{.*}} function(@two_phases_s0)
// CHECK: memref.load %[[T0]]
// CHECK: memref.load %[[T1]]
// CHECK-NOT: gpu.launch
func.func @two_phases(%x0: memref<32xf32>, %x1: memref<32xf32>,
                      %y0: memref<32xf32>, %y1: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %t0 = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@two_phases_p0) {
    %v = memref.load %x0[%tx] : memref<32xf32>
    memref.store %v, %t0[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@two_phases_s0) {
    %v = memref.load %t0[%tx] : memref<32xf32>
    memref.store %v, %y0[%tx] : memref<32xf32>
    gpu.terminator
  }
  %t1 = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@two_phases_p1) {
    %v = memref.load %x1[%tx] : memref<32xf32>
    %f = arith.constant 2.0 : f32
    %w = arith.mulf %v, %f : f32
    memref.store %w, %t1[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@two_phases_s1) {
    %v = memref.load %t1[%tx] : memref<32xf32>
    %f = arith.constant 3.0 : f32
    %w = arith.mulf %v, %f : f32
    memref.store %w, %y1[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Workgroup buffers of vectors (a column sum's partials) count their
// vectors' bytes, and are shared like any other.
// CHECK-LABEL: func.func @vector_buffers
// CHECK-SAME: kfuse.packed
// CHECK: workgroup(%{{.*}} : memref<2x4xvector<2xi64>, #gpu.address_space<workgroup>>) {
// CHECK-NOT: workgroup(
func.func @vector_buffers(%a: memref<32xi64>, %b: memref<32xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@vector_buffers_g0)
             workgroup(%w : memref<2x4xvector<2xi64>, #gpu.address_space<workgroup>>) {
    %v = memref.load %w[%c0, %c0] : memref<2x4xvector<2xi64>, #gpu.address_space<workgroup>>
    %e = vector.extract %v[0] : i64 from vector<2xi64>
    memref.store %e, %a[%tx] : memref<32xi64>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             module(@kfuse_kernels) function(@vector_buffers_g1)
             workgroup(%w : memref<2x4xvector<2xi64>, #gpu.address_space<workgroup>>) {
    %v = memref.load %w[%c0, %c0] : memref<2x4xvector<2xi64>, #gpu.address_space<workgroup>>
    %e = vector.extract %v[1] : i64 from vector<2xi64>
    memref.store %e, %b[%tx] : memref<32xi64>
    gpu.terminator
  }
  return
}
