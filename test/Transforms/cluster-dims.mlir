// RUN: fuse-opt %s --split-input-file --verify-diagnostics --fusion-cluster-dims | FileCheck %s
//
// fusion-cluster-dims: a kernel launched in clusters gets its cluster size
// (nvvm.cluster_dim) and, with blocks under 1024 threads, the blocks an SM
// holds at once (nvvm.minctasm = 1024 / threads). A host function's
// kfuse.min_blocks_per_sm (fusion-generic-to-gpu, row-occupancy) names
// kernels that ask for more blocks an SM: they get that as nvvm.minctasm
// (the larger of the two where both apply), and the dictionary goes.

// CHECK-LABEL: func.func @host
// CHECK-NOT: kfuse.min_blocks_per_sm
// CHECK-LABEL: gpu.func @clustered
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK-LABEL: gpu.func @paired
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK-LABEL: gpu.func @quad
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: nvvm.minctasm = 4 : i32
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.return
module attributes {gpu.container_module} {
  func.func @host() attributes {kfuse.min_blocks_per_sm = {paired = 2 : i32, quad = 4 : i32}} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    gpu.launch_func @k::@clustered clusters in (%c4, %c1, %c1) blocks in (%c8, %c1, %c1) threads in (%c512, %c1, %c1)
    gpu.launch_func @k::@paired blocks in (%c8, %c1, %c1) threads in (%c512, %c1, %c1)
    gpu.launch_func @k::@quad clusters in (%c2, %c1, %c1) blocks in (%c8, %c1, %c1) threads in (%c512, %c1, %c1)
    gpu.launch_func @k::@plain blocks in (%c8, %c1, %c1) threads in (%c1024, %c1, %c1)
    return
  }
  gpu.module @k {
    gpu.func @clustered() kernel { gpu.return }
    gpu.func @paired() kernel { gpu.return }
    gpu.func @quad() kernel { gpu.return }
    gpu.func @plain() kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c512 = arith.constant 512 : index
    gpu.launch_func @k::@twice clusters in (%c2, %c1, %c1) blocks in (%c4, %c1, %c1) threads in (%c512, %c1, %c1)
    // expected-error @+1 {{fusion-cluster-dims: kernel launched with two cluster sizes}}
    gpu.launch_func @k::@twice clusters in (%c4, %c1, %c1) blocks in (%c4, %c1, %c1) threads in (%c512, %c1, %c1)
    return
  }
  gpu.module @k {
    gpu.func @twice() kernel { gpu.return }
  }
}
