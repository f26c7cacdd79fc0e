// RUN: fuse-opt %s --fusion-programmatic-launch --split-input-file --verify-diagnostics | FileCheck %s

// A launch that directly follows another (host ops between them that queue
// nothing on the stream: an alloc, a view, a constant) is marked
// kfuse.programmatic; its kernel waits first thing, and the kernel before
// it lets its dependents launch as it starts (after its own wait, when it
// has one). A launch after a copy, and the first launch, stay plain; a
// kernel launched twice gets each control once.

// CHECK-LABEL: func.func @three
// CHECK: gpu.launch_func @k::@first
// CHECK-NOT: kfuse.programmatic
// CHECK-SAME: {{$}}
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: gpu.launch_func @k::@second {{.*}} {kfuse.programmatic}
// CHECK-NEXT: memref.copy
// CHECK-NEXT: gpu.launch_func @k::@third
// CHECK-NOT: kfuse.programmatic
// CHECK-SAME: {{$}}
// CHECK-NEXT: gpu.launch_func @k::@third {{.*}} {kfuse.programmatic}
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
// CHECK: gpu.func @first
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.return
// CHECK: gpu.func @second
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: gpu.return
// CHECK: gpu.func @third
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.return
module attributes {gpu.container_module} {
  func.func @three(%a: memref<64xf32>, %b: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    %t = memref.alloc() : memref<64xf32>
    %v = memref.expand_shape %t [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
    gpu.launch_func @k::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<64xf32>)
    memref.copy %t, %b : memref<64xf32> to memref<64xf32>
    gpu.launch_func @k::@third blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<64xf32>)
    gpu.launch_func @k::@third blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<64xf32>)
    memref.dealloc %t : memref<64xf32>
    return
  }
  gpu.module @k {
    gpu.func @first(%x: memref<64xf32>) kernel {
      gpu.return
    }
    gpu.func @second(%x: memref<64xf32>) kernel {
      gpu.return
    }
    gpu.func @third(%x: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// One launch: nothing to overlap, nothing changes.

// CHECK-LABEL: func.func @one
// CHECK-NOT: kfuse.programmatic
// CHECK-NOT: griddepcontrol
module attributes {gpu.container_module} {
  func.func @one(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@only blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @k {
    gpu.func @only(%x: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Any other host op between two launches (a call, which may queue work of
// its own) keeps the second plain.

// CHECK-LABEL: func.func @called
// CHECK: gpu.launch_func @k::@a
// CHECK-NEXT: call @other
// CHECK-NEXT: gpu.launch_func @k::@b
// CHECK-NOT: kfuse.programmatic
// CHECK-NOT: griddepcontrol
module attributes {gpu.container_module} {
  func.func private @other()
  func.func @called(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    func.call @other() : () -> ()
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @k {
    gpu.func @a(%x: memref<64xf32>) kernel {
      gpu.return
    }
    gpu.func @b(%x: memref<64xf32>) kernel {
      gpu.return
    }
  }
}
