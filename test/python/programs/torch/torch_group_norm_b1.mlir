#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#map3 = affine_map<(d0, d1) -> (0, d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @torch_group_norm_b1(%arg0: tensor<1x10x14x14xf32>) -> tensor<1x10x14x14xf32> {
    %c1_i64 = arith.constant 1 : i64
    %c5_i64 = arith.constant 5 : i64
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_1 = arith.constant 1.000000e+00 : f32
    %cst_2 = arith.constant dense_resource<torch_tensor_10_torch.float32_1> : tensor<10xf32>
    %cst_3 = arith.constant dense_resource<torch_tensor_10_torch.float32> : tensor<10xf32>
    %cst_4 = arith.constant 1.000000e-05 : f64
    %cst_5 = arith.constant 3.920000e+02 : f64
    %cst_6 = arith.constant 3.920000e+02 : f32
    %cst_7 = arith.constant dense_resource<torch_tensor_1_10_torch.int64> : tensor<1x10xi64>
    %cst_8 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_1> : tensor<1x10xi64>
    %cst_9 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_2> : tensor<1x10xi64>
    %cst_10 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_3> : tensor<1x10xi64>
    %cst_11 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_4> : tensor<1x10xi64>
    %cst_12 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_5> : tensor<1x10xi64>
    %cst_13 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_6> : tensor<1x10xi64>
    %cst_14 = arith.constant dense_resource<torch_tensor_1_10_torch.int64_7> : tensor<1x10xi64>
    %collapsed = tensor.collapse_shape %arg0 [[0], [1], [2, 3]] : tensor<1x10x14x14xf32> into tensor<1x10x196xf32>
    %expanded = tensor.expand_shape %collapsed [[0], [1, 2], [3]] output_shape [1, 5, 2, 196] : tensor<1x10x196xf32> into tensor<1x5x2x196xf32>
    %0 = tensor.empty() : tensor<1x5x2x196xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x5x2x196xf32>) outs(%0 : tensor<1x5x2x196xf64>) {
    ^bb0(%in: f32, %out: f64):
      %30 = arith.extf %in : f32 to f64
      linalg.yield %30 : f64
    } -> tensor<1x5x2x196xf64>
    %2 = tensor.empty() : tensor<1x5x1x1xf64>
    %3 = linalg.fill ins(%cst : f64) outs(%2 : tensor<1x5x1x1xf64>) -> tensor<1x5x1x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%1 : tensor<1x5x2x196xf64>) outs(%3 : tensor<1x5x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %30 = arith.addf %in, %out : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x1x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<1x5x1x1xf64>) outs(%2 : tensor<1x5x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %30 = arith.divf %in, %cst_5 : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x1x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %5 : tensor<1x5x2x196xf64>, tensor<1x5x1x1xf64>) outs(%0 : tensor<1x5x2x196xf64>) {
    ^bb0(%in: f64, %in_19: f64, %out: f64):
      %30 = arith.subf %in, %in_19 : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x2x196xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<1x5x2x196xf64>, tensor<1x5x2x196xf64>) outs(%0 : tensor<1x5x2x196xf64>) {
    ^bb0(%in: f64, %in_19: f64, %out: f64):
      %30 = arith.mulf %in, %in_19 : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x2x196xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%7 : tensor<1x5x2x196xf64>) outs(%3 : tensor<1x5x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %30 = arith.addf %in, %out : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x1x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x5x1x1xf64>) outs(%2 : tensor<1x5x1x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %30 = arith.divf %in, %cst_5 : f64
      linalg.yield %30 : f64
    } -> tensor<1x5x1x1xf64>
    %10 = tensor.empty() : tensor<1x5x1x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : tensor<1x5x1x1xf64>) outs(%10 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %30 = arith.truncf %in : f64 to f32
      linalg.yield %30 : f32
    } -> tensor<1x5x1x1xf32>
    %12 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<1x5x1x1xf32>) -> tensor<1x5x1x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%expanded : tensor<1x5x2x196xf32>) outs(%12 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = arith.addf %in, %out : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x1x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x5x1x1xf32>) outs(%10 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = arith.divf %in, %cst_6 : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x1x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<1x5x1x1xf32>) outs(%10 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = arith.truncf %cst_4 : f64 to f32
      %31 = arith.addf %in, %30 : f32
      linalg.yield %31 : f32
    } -> tensor<1x5x1x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x5x1x1xf32>) outs(%10 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = math.rsqrt %in : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x1x1xf32>
    %expanded_15 = tensor.expand_shape %cst_3 [[0, 1, 2, 3]] output_shape [1, 5, 2, 1] : tensor<10xf32> into tensor<1x5x2x1xf32>
    %17 = tensor.empty() : tensor<1x5x2x1xf32>
    %18 = linalg.generic {indexing_maps = [#map2, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %expanded_15 : tensor<1x5x1x1xf32>, tensor<1x5x2x1xf32>) outs(%17 : tensor<1x5x2x1xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.mulf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x2x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<1x5x1x1xf32>) outs(%10 : tensor<1x5x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = arith.negf %in : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x1x1xf32>
    %20 = linalg.generic {indexing_maps = [#map2, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %18 : tensor<1x5x1x1xf32>, tensor<1x5x2x1xf32>) outs(%17 : tensor<1x5x2x1xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.mulf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x2x1xf32>
    %expanded_16 = tensor.expand_shape %cst_2 [[0, 1, 2, 3]] output_shape [1, 5, 2, 1] : tensor<10xf32> into tensor<1x5x2x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded_16 : tensor<1x5x2x1xf32>, tensor<1x5x2x1xf32>) outs(%17 : tensor<1x5x2x1xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.addf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x5x2x1xf32>
    %22 = tensor.empty() : tensor<1x10xf32>
    %23 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%cst_7, %cst_8, %cst_9, %cst_10 : tensor<1x10xi64>, tensor<1x10xi64>, tensor<1x10xi64>, tensor<1x10xi64>) outs(%22 : tensor<1x10xf32>) {
    ^bb0(%in: i64, %in_19: i64, %in_20: i64, %in_21: i64, %out: f32):
      %30 = arith.cmpi slt, %in, %c0_i64 : i64
      %31 = arith.addi %in, %c1_i64 : i64
      %32 = arith.select %30, %31, %in : i64
      %33 = arith.index_cast %32 : i64 to index
      %34 = arith.cmpi slt, %in_19, %c0_i64 : i64
      %35 = arith.addi %in_19, %c5_i64 : i64
      %36 = arith.select %34, %35, %in_19 : i64
      %37 = arith.index_cast %36 : i64 to index
      %38 = arith.cmpi slt, %in_20, %c0_i64 : i64
      %39 = arith.addi %in_20, %c2_i64 : i64
      %40 = arith.select %38, %39, %in_20 : i64
      %41 = arith.index_cast %40 : i64 to index
      %42 = arith.cmpi slt, %in_21, %c0_i64 : i64
      %43 = arith.addi %in_21, %c1_i64 : i64
      %44 = arith.select %42, %43, %in_21 : i64
      %45 = arith.index_cast %44 : i64 to index
      %extracted = tensor.extract %18[%33, %37, %41, %45] : tensor<1x5x2x1xf32>
      linalg.yield %extracted : f32
    } -> tensor<1x10xf32>
    %24 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%cst_11, %cst_12, %cst_13, %cst_14 : tensor<1x10xi64>, tensor<1x10xi64>, tensor<1x10xi64>, tensor<1x10xi64>) outs(%22 : tensor<1x10xf32>) {
    ^bb0(%in: i64, %in_19: i64, %in_20: i64, %in_21: i64, %out: f32):
      %30 = arith.cmpi slt, %in, %c0_i64 : i64
      %31 = arith.addi %in, %c1_i64 : i64
      %32 = arith.select %30, %31, %in : i64
      %33 = arith.index_cast %32 : i64 to index
      %34 = arith.cmpi slt, %in_19, %c0_i64 : i64
      %35 = arith.addi %in_19, %c5_i64 : i64
      %36 = arith.select %34, %35, %in_19 : i64
      %37 = arith.index_cast %36 : i64 to index
      %38 = arith.cmpi slt, %in_20, %c0_i64 : i64
      %39 = arith.addi %in_20, %c2_i64 : i64
      %40 = arith.select %38, %39, %in_20 : i64
      %41 = arith.index_cast %40 : i64 to index
      %42 = arith.cmpi slt, %in_21, %c0_i64 : i64
      %43 = arith.addi %in_21, %c1_i64 : i64
      %44 = arith.select %42, %43, %in_21 : i64
      %45 = arith.index_cast %44 : i64 to index
      %extracted = tensor.extract %21[%33, %37, %41, %45] : tensor<1x5x2x1xf32>
      linalg.yield %extracted : f32
    } -> tensor<1x10xf32>
    %expanded_17 = tensor.expand_shape %23 [[0], [1, 2, 3]] output_shape [1, 10, 1, 1] : tensor<1x10xf32> into tensor<1x10x1x1xf32>
    %expanded_18 = tensor.expand_shape %24 [[0], [1, 2, 3]] output_shape [1, 10, 1, 1] : tensor<1x10xf32> into tensor<1x10x1x1xf32>
    %25 = tensor.empty() : tensor<1x10x14x14xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_17 : tensor<1x10x14x14xf32>, tensor<1x10x1x1xf32>) outs(%25 : tensor<1x10x14x14xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.mulf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x10x14x14xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %expanded_18 : tensor<1x10x14x14xf32>, tensor<1x10x1x1xf32>) outs(%25 : tensor<1x10x14x14xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.addf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x10x14x14xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x10x14x14xf32>) outs(%25 : tensor<1x10x14x14xf32>) {
    ^bb0(%in: f32, %out: f32):
      %30 = arith.negf %in : f32
      %31 = math.exp %30 : f32
      %32 = arith.addf %31, %cst_1 : f32
      %33 = arith.divf %cst_1, %32 : f32
      linalg.yield %33 : f32
    } -> tensor<1x10x14x14xf32>
    %29 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %28 : tensor<1x10x14x14xf32>, tensor<1x10x14x14xf32>) outs(%25 : tensor<1x10x14x14xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %30 = arith.mulf %in, %in_19 : f32
      linalg.yield %30 : f32
    } -> tensor<1x10x14x14xf32>
    return %29 : tensor<1x10x14x14xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_10_torch.float32_1: "0x040000009CAB2ABEF05F10BD2C71083E9ADA893E8E1292BE3420903EDE93BA3E0865D73D50440ABE48567CBE",
      torch_tensor_10_torch.float32: "0x04000000C53D893F64E5863F7250BE3FEAD38D3F6A123C3F6DFD723FA850963FB5BE9F3FA8B1873F3ED92A3F",
      torch_tensor_1_10_torch.int64: "0x080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      torch_tensor_1_10_torch.int64_1: "0x080000000000000000000000000000000000000001000000000000000100000000000000020000000000000002000000000000000300000000000000030000000000000004000000000000000400000000000000",
      torch_tensor_1_10_torch.int64_2: "0x080000000000000000000000010000000000000000000000000000000100000000000000000000000000000001000000000000000000000000000000010000000000000000000000000000000100000000000000",
      torch_tensor_1_10_torch.int64_3: "0x080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      torch_tensor_1_10_torch.int64_4: "0x080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      torch_tensor_1_10_torch.int64_5: "0x080000000000000000000000000000000000000001000000000000000100000000000000020000000000000002000000000000000300000000000000030000000000000004000000000000000400000000000000",
      torch_tensor_1_10_torch.int64_6: "0x080000000000000000000000010000000000000000000000000000000100000000000000000000000000000001000000000000000000000000000000010000000000000000000000000000000100000000000000",
      torch_tensor_1_10_torch.int64_7: "0x080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}
