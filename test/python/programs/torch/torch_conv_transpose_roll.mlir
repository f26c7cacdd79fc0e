#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
module {
  func.func @torch_conv_transpose_roll(%arg0: tensor<2x4x6x6xf32>) -> tensor<2x3x12x12xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense_resource<torch_tensor_4_3_2_2_torch.float32> : tensor<4x3x2x2xf32>
    %cst_1 = arith.constant dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>
    %c1 = arith.constant 1 : index
    %0 = tensor.empty() : tensor<3x4x2x2xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
    %2 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%1 : tensor<3x4x2x2xf32>) {
    ^bb0(%out: f32):
      %7 = linalg.index 0 : index
      %8 = linalg.index 1 : index
      %9 = linalg.index 2 : index
      %10 = linalg.index 3 : index
      %11 = arith.subi %c1, %9 : index
      %12 = arith.subi %c1, %10 : index
      %extracted = tensor.extract %cst_0[%8, %7, %11, %12] : tensor<4x3x2x2xf32>
      linalg.yield %extracted : f32
    } -> tensor<3x4x2x2xf32>
    %3 = tensor.empty() : tensor<2x4x13x13xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x4x13x13xf32>) -> tensor<2x4x13x13xf32>
    %inserted_slice = tensor.insert_slice %arg0 into %4[0, 0, 1, 1] [2, 4, 6, 6] [1, 1, 2, 2] : tensor<2x4x6x6xf32> into tensor<2x4x13x13xf32>
    %5 = tensor.empty() : tensor<2x3x12x12xf32>
    %broadcasted = linalg.broadcast ins(%cst_1 : tensor<3xf32>) outs(%5 : tensor<2x3x12x12xf32>) dimensions = [0, 2, 3] 
    %6 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %2 : tensor<2x4x13x13xf32>, tensor<3x4x2x2xf32>) outs(%broadcasted : tensor<2x3x12x12xf32>) -> tensor<2x3x12x12xf32>
    %extracted_slice = tensor.extract_slice %6[0, 0, 0, 9] [2, 3, 12, 3] [1, 1, 1, 1] : tensor<2x3x12x12xf32> to tensor<2x3x12x3xf32>
    %cast = tensor.cast %extracted_slice : tensor<2x3x12x3xf32> to tensor<2x3x12x?xf32>
    %extracted_slice_2 = tensor.extract_slice %6[0, 0, 0, 0] [2, 3, 12, 9] [1, 1, 1, 1] : tensor<2x3x12x12xf32> to tensor<2x3x12x9xf32>
    %cast_3 = tensor.cast %extracted_slice_2 : tensor<2x3x12x9xf32> to tensor<2x3x12x?xf32>
    %concat = tensor.concat dim(3) %cast, %cast_3 : (tensor<2x3x12x?xf32>, tensor<2x3x12x?xf32>) -> tensor<2x3x12x12xf32>
    return %concat : tensor<2x3x12x12xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_4_3_2_2_torch.float32: "0x04000000423F433EB40B5DBE18E6703E9B243D3E325E783E54A462BEFA6946BED7A80C3EF1F789BE2915923E63AF7B3D29B3183DF2CA7CBE8D67BC3DC639FE3D92983B3DE2298E3EB18CB13D7D0F83BE735F783E70BBC83DC8040DBE20C487BEDB83283E93758C3EF33072BE463D813CCF1BD43D67980BBE455C81BD176245BE77C00BBEF6BE86BE7D3ADBBB56452F3E04C60F3E9CD88A3EA6CE81BE8A7C11BD76E78F3E9A9E413D06B8A6BD931C85BEAD8E093EF669603E5F096D3E8977773E537D673D",
      torch_tensor_3_torch.float32: "0x0400000010B0523EBFD094BDA910703E"
    }
  }
#-}
