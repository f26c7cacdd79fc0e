// fusion-readonly-inputs: a kernel argument that only loads one of the
// program's inputs (a host function argument or a constant global that no
// launch writes and no host op writes) at every launch of its kernel is
// marked llvm.noalias and llvm.readonly (NVPTX: ld.global.nc). Outputs,
// temporaries an earlier kernel wrote, arguments the kernel stores to or
// whose pointer it takes, and inputs some launch writes are not.
//
// RUN: fuse-opt %s --fusion-readonly-inputs | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// x and w only loaded (through a view, vector loads): marked; y stored to.
// CHECK: gpu.func @norm(%{{.*}}: memref<4x8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<4x8xf32>)
// CHECK: gpu.func @first(%{{.*}}: memref<8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8xf32>)
// The temporary the first kernel wrote, loaded by the second: left alone
// (the second may start before the first ends); the constant table marked.
// CHECK: gpu.func @second(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8xf32>)
// The same input twice, both only loaded: both marked.
// CHECK: gpu.func @twice(%{{.*}}: memref<8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8xf32>)
// An input another launch writes (in place), one whose pointer is taken,
// a kernel launched once over an input and once over a temporary, and a
// global that is not constant.
// CHECK: gpu.func @reads(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK: gpu.func @inplace(%{{.*}}: memref<8xf32>)
// CHECK: gpu.func @pointer(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK: gpu.func @mixed(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK: gpu.func @variable(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-NOT: llvm.readonly

module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<8xf32> = dense<1.0>
  memref.global "private" @scratch : memref<8xf32> = dense<0.0>

  func.func @prog(%x: memref<4x8xf32>, %w: memref<8xf32>, %a: memref<8xf32>,
                  %b: memref<8xf32>, %y: memref<4x8xf32>, %z: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %t = memref.alloc() : memref<8xf32>
    %tab = memref.get_global @table : memref<8xf32>
    %cast = memref.cast %x : memref<4x8xf32> to memref<4x8xf32>
    gpu.launch_func @kernels::@norm blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%cast : memref<4x8xf32>, %w : memref<8xf32>, %y : memref<4x8xf32>)
    gpu.launch_func @kernels::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<8xf32>, %t : memref<8xf32>)
    gpu.launch_func @kernels::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%t : memref<8xf32>, %tab : memref<8xf32>, %z : memref<8xf32>)
    gpu.launch_func @kernels::@twice blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<8xf32>, %w : memref<8xf32>, %z : memref<8xf32>)
    gpu.launch_func @kernels::@reads blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%a : memref<8xf32>, %z : memref<8xf32>)
    gpu.launch_func @kernels::@inplace blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%a : memref<8xf32>)
    gpu.launch_func @kernels::@pointer blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%b : memref<8xf32>, %z : memref<8xf32>)
    gpu.launch_func @kernels::@mixed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<8xf32>, %z : memref<8xf32>)
    gpu.launch_func @kernels::@mixed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%t : memref<8xf32>, %z : memref<8xf32>)
    %var = memref.get_global @scratch : memref<8xf32>
    gpu.launch_func @kernels::@variable blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%var : memref<8xf32>, %z : memref<8xf32>)
    memref.dealloc %t : memref<8xf32>
    return
  }

  gpu.module @kernels {
    gpu.func @norm(%x: memref<4x8xf32>, %w: memref<8xf32>, %y: memref<4x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %row = memref.subview %x[0, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1]>>
      %v = vector.load %row[%c0] : memref<8xf32, strided<[1]>>, vector<4xf32>
      %u = vector.load %w[%c0] : memref<8xf32>, vector<4xf32>
      %p = arith.mulf %v, %u : vector<4xf32>
      vector.store %p, %y[%c0, %c0] : memref<4x8xf32>, vector<4xf32>
      gpu.return
    }
    gpu.func @first(%w: memref<8xf32>, %t: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %w[%c0] : memref<8xf32>
      memref.store %v, %t[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @second(%t: memref<8xf32>, %tab: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %t[%c0] : memref<8xf32>
      %u = memref.load %tab[%c0] : memref<8xf32>
      %s = arith.addf %v, %u : f32
      memref.store %s, %z[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @twice(%a: memref<8xf32>, %b: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      %u = memref.load %b[%c0] : memref<8xf32>
      %s = arith.addf %v, %u : f32
      memref.store %s, %z[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @reads(%a: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      memref.store %v, %z[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @inplace(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %a[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @pointer(%b: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %p = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
      %v = memref.load %b[%c0] : memref<8xf32>
      memref.store %v, %z[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @mixed(%a: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      memref.store %v, %z[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @variable(%a: memref<8xf32>, %z: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      memref.store %v, %z[%c0] : memref<8xf32>
      gpu.return
    }
  }
}
