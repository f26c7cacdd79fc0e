// RUN: fuse-opt %s --split-input-file --allow-unregistered-dialect --fusion-dedup-kernels | FileCheck %s

// Three kernels of one code (an update of three parameters of one size):
// every launch runs the first, the later two keep their names as
// kfuse.generated_as, and their copies are gone. The kernel of another size
// (its own signature) and the one that adds 2 instead of 1 stay.
// CHECK-LABEL: func.func @three
// CHECK: gpu.launch_func @kfuse_kernels::@k0 {{.*}}args(%arg0 : memref<256xf32>)
// CHECK-NOT: kfuse.generated_as
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@k0 {{.*}}args(%arg1 : memref<256xf32>) {kfuse.generated_as = "k1"}
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@k0 {{.*}}args(%arg2 : memref<256xf32>) {kfuse.generated_as = "k2", kfuse.programmatic}
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@wider {{.*}}args(%arg3 : memref<512xf32>)
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@plus2 {{.*}}args(%arg0 : memref<256xf32>)
// CHECK-NOT: kfuse.generated_as
// CHECK: gpu.module @kfuse_kernels
// CHECK-NEXT: gpu.func @k0(
// CHECK-NOT: gpu.func @k1(
// CHECK-NOT: gpu.func @k2(
// CHECK: gpu.func @wider(
// CHECK: gpu.func @plus2(
module attributes {gpu.container_module} {
  func.func @three(%a: memref<256xf32>, %b: memref<256xf32>, %c: memref<256xf32>, %d: memref<512xf32>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @kfuse_kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%b : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%c : memref<256xf32>) {kfuse.programmatic}
    gpu.launch_func @kfuse_kernels::@wider blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%d : memref<512xf32>)
    gpu.launch_func @kfuse_kernels::@plus2 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<256xf32>)
    return
  }
  gpu.module @kfuse_kernels {
    gpu.func @k0(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @k1(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @k2(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @wider(%x: memref<512xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %v = memref.load %x[%t] : memref<512xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%t] : memref<512xf32>
      gpu.return
    }
    gpu.func @plus2(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %one = arith.constant 2.0 : f32
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
  }
}

// -----

// Kernels alike but for an attribute do not merge: another block size
// (ptxas's .maxntid), another occupancy hint (nvvm.minctasm), or one an
// NVVM attribute marks (a cluster). The same code with its operands
// swapped is other code too.
// CHECK-LABEL: func.func @hints
// CHECK-NOT: kfuse.generated_as
// CHECK: gpu.func @h0(
// CHECK: gpu.func @h1(
// CHECK: gpu.func @h2(
// CHECK: gpu.func @h3(
// CHECK: gpu.func @h4(
module attributes {gpu.container_module} {
  func.func @hints(%a: memref<256xf32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kfuse_kernels::@h0 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@h1 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@h2 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@h3 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @kfuse_kernels::@h4 blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>)
    return
  }
  gpu.module @kfuse_kernels {
    gpu.func @h0(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.subf %v, %v : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @h1(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.subf %v, %v : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @h2(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 2 : i32} {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.subf %v, %v : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @h3(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xf32>
      %w = arith.subf %v, %v : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
    gpu.func @h4(%x: memref<256xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xf32>
      %u = memref.load %x[%t] : memref<256xf32>
      %w = arith.subf %u, %v : f32
      memref.store %w, %x[%t] : memref<256xf32>
      gpu.return
    }
  }
}

// -----

// A copy that something other than a launch names stays (its launch moves
// all the same), and so does one nothing launches; a launch that already
// ran another's code keeps the name it had; kernels of different modules
// are not compared.
// CHECK-LABEL: func.func @named
// CHECK-SAME: attributes {user.kernel = @kfuse_kernels::@n1}
// CHECK: gpu.launch_func @kfuse_kernels::@n0 {{.*}} {kfuse.generated_as = "n1"}
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@n0 {{.*}} {kfuse.generated_as = "first"}
// CHECK-NEXT: gpu.launch_func @other::@n0
// CHECK: gpu.module @kfuse_kernels
// CHECK: gpu.func @n0(
// CHECK: gpu.func @n1(
// CHECK-NOT: gpu.func @n2(
// CHECK: gpu.func @n3(
// CHECK: gpu.module @other
// CHECK: gpu.func @n0(
module attributes {gpu.container_module} {
  func.func @named(%a: memref<4xf32>) attributes {user.kernel = @kfuse_kernels::@n1} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kfuse_kernels::@n1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kfuse_kernels::@n2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) {kfuse.generated_as = "first"}
    gpu.launch_func @other::@n0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @kfuse_kernels {
    gpu.func @n0(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @n1(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @n2(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @n3(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @n0(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// An operation kfuse does not know may hold symbols of its own: the uses of
// a copy cannot all be seen, so every copy stays (their launches move).
// CHECK-LABEL: func.func @unknown
// CHECK: gpu.launch_func @kfuse_kernels::@u0
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@u0 {{.*}} {kfuse.generated_as = "u1"}
// CHECK: gpu.func @u0(
// CHECK: gpu.func @u1(
module attributes {gpu.container_module} {
  func.func @unknown(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kfuse_kernels::@u0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kfuse_kernels::@u1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    "user.region"() ({
      "user.end"() : () -> ()
    }) : () -> ()
    return
  }
  gpu.module @kfuse_kernels {
    gpu.func @u0(%x: memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @u1(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Programmatic launches (fusion-programmatic-launch): the first kernel
// triggers its follower, the middle one waits and triggers, the last one
// waits. Their code is the same otherwise, so one kernel runs all three,
// starting with a wait and a trigger.
// CHECK-LABEL: func.func @chain
// CHECK: gpu.launch_func @kfuse_kernels::@p0
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@p0 {{.*}} {kfuse.generated_as = "p1", kfuse.programmatic}
// CHECK-NEXT: gpu.launch_func @kfuse_kernels::@p0 {{.*}} {kfuse.generated_as = "p2", kfuse.programmatic}
// CHECK: gpu.func @p0(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.thread_id
// CHECK-NOT: griddepcontrol
// CHECK-NOT: gpu.func
module attributes {gpu.container_module} {
  func.func @chain(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kfuse_kernels::@p0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @kfuse_kernels::@p1 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%b : memref<64xf32>) {kfuse.programmatic}
    gpu.launch_func @kfuse_kernels::@p2 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%c : memref<64xf32>) {kfuse.programmatic}
    return
  }
  gpu.module @kfuse_kernels {
    gpu.func @p0(%x: memref<64xf32>) kernel {
      nvvm.griddepcontrol launch_dependents
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<64xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%t] : memref<64xf32>
      gpu.return
    }
    gpu.func @p1(%x: memref<64xf32>) kernel {
      nvvm.griddepcontrol wait
      nvvm.griddepcontrol launch_dependents
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<64xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%t] : memref<64xf32>
      gpu.return
    }
    gpu.func @p2(%x: memref<64xf32>) kernel {
      nvvm.griddepcontrol wait
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<64xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%t] : memref<64xf32>
      gpu.return
    }
  }
}
