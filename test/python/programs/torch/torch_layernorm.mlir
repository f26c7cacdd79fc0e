#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @torch_layernorm(%arg0: tensor<16x256xf32>) -> tensor<16x256xf32> {
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant dense_resource<torch_tensor_256_torch.float32_1> : tensor<256xf32>
    %cst_2 = arith.constant dense_resource<torch_tensor_256_torch.float32> : tensor<256xf32>
    %cst_3 = arith.constant 1.000000e-05 : f64
    %cst_4 = arith.constant 2.560000e+02 : f64
    %cst_5 = arith.constant 2.560000e+02 : f32
    %0 = tensor.empty() : tensor<16x256xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<16x256xf32>) outs(%0 : tensor<16x256xf64>) {
    ^bb0(%in: f32, %out: f64):
      %22 = arith.extf %in : f32 to f64
      linalg.yield %22 : f64
    } -> tensor<16x256xf64>
    %2 = tensor.empty() : tensor<16x1xf64>
    %3 = linalg.fill ins(%cst : f64) outs(%2 : tensor<16x1xf64>) -> tensor<16x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<16x256xf64>) outs(%3 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<16x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<16x1xf64>) outs(%2 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_4 : f64
      linalg.yield %22 : f64
    } -> tensor<16x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %5 : tensor<16x256xf64>, tensor<16x1xf64>) outs(%0 : tensor<16x256xf64>) {
    ^bb0(%in: f64, %in_6: f64, %out: f64):
      %22 = arith.subf %in, %in_6 : f64
      linalg.yield %22 : f64
    } -> tensor<16x256xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %6 : tensor<16x256xf64>, tensor<16x256xf64>) outs(%0 : tensor<16x256xf64>) {
    ^bb0(%in: f64, %in_6: f64, %out: f64):
      %22 = arith.mulf %in, %in_6 : f64
      linalg.yield %22 : f64
    } -> tensor<16x256xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<16x256xf64>) outs(%3 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<16x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16x1xf64>) outs(%2 : tensor<16x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_4 : f64
      linalg.yield %22 : f64
    } -> tensor<16x1xf64>
    %10 = tensor.empty() : tensor<16x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<16x1xf64>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %22 = arith.truncf %in : f64 to f32
      linalg.yield %22 : f32
    } -> tensor<16x1xf32>
    %12 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<16x1xf32>) -> tensor<16x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x256xf32>) outs(%12 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.addf %in, %out : f32
      linalg.yield %22 : f32
    } -> tensor<16x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.divf %in, %cst_5 : f32
      linalg.yield %22 : f32
    } -> tensor<16x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.truncf %cst_3 : f64 to f32
      %23 = arith.addf %in, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<16x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.rsqrt %in : f32
      linalg.yield %22 : f32
    } -> tensor<16x1xf32>
    %17 = tensor.empty() : tensor<16x256xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %14 : tensor<16x256xf32>, tensor<16x1xf32>) outs(%17 : tensor<16x256xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %22 = arith.subf %in, %in_6 : f32
      linalg.yield %22 : f32
    } -> tensor<16x256xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%18, %16 : tensor<16x256xf32>, tensor<16x1xf32>) outs(%17 : tensor<16x256xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %22 = arith.mulf %in, %in_6 : f32
      linalg.yield %22 : f32
    } -> tensor<16x256xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %cst_2 : tensor<16x256xf32>, tensor<256xf32>) outs(%17 : tensor<16x256xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %22 = arith.mulf %in, %in_6 : f32
      linalg.yield %22 : f32
    } -> tensor<16x256xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%20, %cst_1 : tensor<16x256xf32>, tensor<256xf32>) outs(%17 : tensor<16x256xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %22 = arith.addf %in, %in_6 : f32
      linalg.yield %22 : f32
    } -> tensor<16x256xf32>
    return %21 : tensor<16x256xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_256_torch.float32_1: "0x04000000E6BBFDBE1C1D673E20E575BED0D6AABE627B93BE5230933E2492873E507CC43ED8B6393EC4FC2ABED4130FBE9842173EDE70D23E74350B3E1C4072BEFCAD70BE420AF2BEB03BDD3DA8A98FBE503EE4BEFA7AE03ED03FA6BED0FB68BD48AF123EE07D823CFA41ACBE2CEECEBE980DCC3E30BFA63D4662D43EA8A42BBEF8CF163E182AEABD6027B6BC52EA9BBEAC282D3E80E0213E40FD28BCC04CE6BD58CE9DBE1409B13E9492BEBEACBF513E6C292CBE0C0677BEE0F4B73D22FB84BE40EFEB3D1018C93DCA13BEBE987EAA3D64135A3E5CAA4A3E58E680BD9ADDD1BE90DA9DBD50D2313E2CD13ABE7458423E867CAA3EBAAB85BE8093A13B24B6533E9084203D90122B3D70B97F3DFA40C9BEE0F2203DB445B13E64AFE63ED876963E1838893D7C1C6F3EDC1379BEEC24D4BECA23DCBE5A63FF3E8E81A23EB2F4B0BEF450483EAA52C13EC2E6FF3E58D8DF3E4456C63EF0C2EABDA0AE33BE4230D23E0A758F3E300E9ABEFE25E63E9060773E008E8B3E6A74A0BE88E4123EEC7C33BEFC06C83E5842B8BDF853473E80E2B53DF8D6593EE0FD2DBEF4A2793EFECEB2BE8846E73D2035ADBEBA8DFCBE1095CDBEB61ACA3E50818A3EE82EF03E4816CD3EA09EE4BECEB3AEBEE875A5BD3241A6BEF8C3B13EBA89C1BE38CE79BEC451F7BEC65791BEE28DD23E429AD13E2441B73E22AAC53EBAA1E33EB01A03BEF447613E0414E43E1461293ECAEAFF3E18C7843E58249F3E2C3233BEF4AB753E20546B3D888CF4BD4A4F90BE56A58FBEB2FCC4BE4EDCAB3E96FFB53EA01669BDC42494BE22DDC53E8CB5A33E703C183DB8BB71BEB846EB3EAC60513E5A57C2BE6203F53E5266C23E8C9E3ABE5CE98F3ED67491BEB879A0BDB25ED93E403EA93C400CB5BE94202BBEDCFA0ABE208FC5BDB0FE433DA2C1EC3E204DDB3C8C109EBE00F0D13C587F753EFCF87D3EE0F7E9BEB03CB7BDB83EBEBE88765ABE6078383E18CBB5BEFC523E3E8649D93E3053063DF09EAABE207137BED89ADF3D4627C3BEEC5D7E3E246AE8BE5217F6BEC0BEF8BE68BBCFBD9024AC3E724CF2BEAEC8D43ECCCF4CBEE8F4153E20CABA3C10D7E6BEE84ED43E6ED7893E8076FE3E9655813E48FAA8BE48A7D53E2023DC3C80CC723EAC44CDBEC84313BE545CFBBE906B47BEA0E8DC3D5C00C9BE1035233E2C6C893E18A78E3D0C49ABBE5A7BC6BEE4F51DBE20BF603E7A84FC3E1A35933EB09F66BD0084333EF026FBBE62A6DABE3CE76E3E960091BE2C52763EF8B7B4BE64997DBE48DDD2BE5A97853E60AE50BD9404C53E686E9E3EDCA78D3E20B6833C944C1EBE68A6DEBD1817883DA4CD7D3EDC59B3BEEADAD63EE0AD5EBD9A83D6BEC4828ABE6A83E23E741EEA3EAA20EDBE6E8EB43EF84B803EF887973E24B6D83EA6F889BE5CAD213E0487513EE84A17BEA8572B3E2C4F13BE60469E3E",
      torch_tensor_256_torch.float32: "0x04000000AC0A7F3F1855A23F75A6163FC0CC213F43B34E3F7E29913FC3767D3FB4BEB23F09A4743F6AEF903F1551593FF2D6663F24B7053F573A2B3F463C4B3FEC5E823F2C4D993FC666A63F3A39293FC142483FF33E973F1425B53F57A8653F57E4AF3F585E6B3FA8C5863F52F3B93F1942093F4D6B2F3F48985F3F091B4E3FCA4BB73F73082D3FD013453FF392263FC51E083FFE47353FA803B73FD88E9C3FE0049F3FA95D833F63603E3FECD38A3FB17C083FF382233F1D033E3F4A61A83F4A86A53F8E3B473FA7617B3F90EEA83FE09FBF3F8466993F5CA5883F40E9AA3F20A2343F10ED8B3FCAC21C3FF448273F97E03D3F52F59C3FFFBC993FCB2D343FB955933F5C22A33F1CD86F3F9171823F40D48E3F40B4A73FD273BD3F355C1D3F8517513F1327993FF406B53F7AB1B73F8878B83FA8BC8C3F84B1103F34E3853F2AEC2F3FBAB5083F10DDB83FBCA9B03F0151003FA0FA8B3FE76F6A3FA9EF6A3F3968453F929C983F662F343F3C76973F865DA03FD7D0AD3F29EE973F5B50013F80F72C3FC7F49F3F32658D3F35261C3F8C4B363F3C35BC3FD51FAB3F5430483FCBC85F3F4411063F06B37D3FC49B1F3F2F441D3F7FF2783FFA9B893F83944B3FE6F9A53F641B323F5A12BA3FF4DBAB3F4E0F143F8F24603F4AE3823F7256893FDD2D8F3F8C1D993F68D5833F8D8B413FBA489E3F5537053F3022343F31F55F3F45A6413FA938533FA316173FC0C5643F30AE8D3FC59C2C3F5E6E793F80D0AD3F71D7723F59C7813F24F5743FD1F38C3F98B1A83FAE9FBC3FC2A4A83F31C3BC3F2ABE763FCD030D3F7051433FF493AB3F952B7F3FC960403F7FE91D3F0036083F8AF7133F7209663F1619A33FDD99A23F7F8D043F0CECA73FBBD61B3F82F0643F79194C3F6258673F3EDE663FA3230D3FDE7A113F7BF86B3FE2D3803F52DA453FD71B983FE3CA0C3F945C773F6848B83F32CA4B3FCECAB93F872D973F297C0C3F1D7EA83FC13A713F24DC463F852DB33F5690183F16DE863F6833653F06B4AD3F81DD913F9AC09E3F289A963F2038613FB614653F8084163F93ADA23F8AD0B23F57CAAB3F2AB6253FBADA823FB8C4253FBC89393FE869353F26DF953F1EB9333F18357D3F3EB1823F8141A93F033E1F3F5E20283FE2AC353FB6CBAC3F0DFD513FB8FBB53F9424973FA41A883F130C7F3F5FB2663FA407883F9AC5623FC2197F3F7C2A883FB4E01B3F43E93C3FF6ADB33F3D1F183F0ECF763FB04FBF3F821E973FE2CF813FED12113F46B49F3FFCD3243F56AA5B3FCD0D553F790B6D3F36B3803FA6C9B43F5CFD873F0853B93F4C26A73F9D132F3F4AB49C3F6E84253F19C0493FE8D2923FDE21953FBC03B03F76CB563F3A1A803FDEF2A03F5336043F5045AE3F6827163FD0E1803FE43C6A3FFB953C3F7E75883F3CECB43F46955A3FD501343F1FA9503F"
    }
  }
#-}
