// Softmax exported from PyTorch by torch-mlir's FX importer (unchanged: see
// test/python/programs/torch/). Its reductions write tensor<32x1xf32> through
// (d0, 0) maps; fusion-normalize folds the unit dimension so the whole
// softmax is one reduction group with no reshapes left.
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize)' | FileCheck %s --check-prefix=NORM
// RUN: fuse-opt %s --pass-pipeline='builtin.module(fusion-normalize,fusion-plan)' | FileCheck %s

// NORM-LABEL: func.func @torch_softmax
// NORM-NOT: tensor<32x1xf32>
// NORM-NOT: (d0, 0)
// NORM: iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<32xf32>)

// CHECK-LABEL: func.func @torch_softmax
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x128xf32>)
// CHECK-NEXT: %[[G:.*]] = fusion.group "g0" "reduction" ins(%[[X]] : tensor<32x128xf32>) {
// CHECK-NOT: fusion.group
// CHECK-NOT: expand_shape
// CHECK-NOT: collapse_shape
// CHECK: return %[[G]] : tensor<32x128xf32>

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @torch_softmax(%arg0: tensor<32x128xf32>) -> tensor<32x128xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<32xi64>
    %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<32xi64>) -> tensor<32xi64>
    %2 = tensor.empty() : tensor<32xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<32xf32>) -> tensor<32xf32>
    %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<32x128xf32>) outs(%3, %1 : tensor<32xf32>, tensor<32xi64>) {
    ^bb0(%in: f32, %out: f32, %out_1: i64):
      %12 = linalg.index 1 : index
      %13 = arith.index_cast %12 : index to i64
      %14 = arith.maximumf %in, %out : f32
      %15 = arith.cmpf ogt, %in, %out : f32
      %16 = arith.select %15, %13, %out_1 : i64
      linalg.yield %14, %16 : f32, i64
    } -> (tensor<32xf32>, tensor<32xi64>)
    %expanded = tensor.expand_shape %4#0 [[0, 1]] output_shape [32, 1] : tensor<32xf32> into tensor<32x1xf32>
    %5 = tensor.empty() : tensor<32x128xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %expanded : tensor<32x128xf32>, tensor<32x1xf32>) outs(%5 : tensor<32x128xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.subf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<32x128xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<32x128xf32>) outs(%5 : tensor<32x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = math.exp %in : f32
      linalg.yield %12 : f32
    } -> tensor<32x128xf32>
    %8 = tensor.empty() : tensor<32x1xf32>
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<32x1xf32>) -> tensor<32x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<32x128xf32>) outs(%9 : tensor<32x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %in, %out : f32
      linalg.yield %12 : f32
    } -> tensor<32x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %10 : tensor<32x128xf32>, tensor<32x1xf32>) outs(%5 : tensor<32x128xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.divf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<32x128xf32>
    return %11 : tensor<32x128xf32>
  }
}
