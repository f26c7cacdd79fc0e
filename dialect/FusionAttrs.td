//===- FusionAttrs.td - attributes of the fusion dialect ---*- tablegen -*-===//

#ifndef KFUSE_FUSION_ATTRS_TD
#define KFUSE_FUSION_ATTRS_TD

include "FusionDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Fusion_StrategyAttr : AttrDef<Fusion_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "How the kernel of an elementwise group is mapped to the GPU.";
  let description = [{
    A strategy is data: `fusion-select-strategy` writes it on each group and
    `fusion-generic-to-gpu` reads it, so choosing and applying are tested
    separately.

    - `threads`: threads per block (a multiple of 32, at most 1024).
    - `vector`: elements each thread loads per access (1, 2, 4 or 8); the
      innermost dimension of the iteration space must be a multiple of it.
    - `unroll`: vector accesses each thread keeps in flight per loop trip.
    - `blocks`: blocks in the grid; threads stride over the whole space, so
      any positive number is correct and the choice only affects speed.

    ```mlir
    #fusion.strategy<threads = 256, vector = 4, unroll = 4, blocks = 1056>
    ```
  }];
  let parameters = (ins "int64_t":$threads, "int64_t":$vector,
                        "int64_t":$unroll, "int64_t":$blocks);
  let assemblyFormat = [{
    `<` `threads` `=` $threads `,` `vector` `=` $vector `,`
        `unroll` `=` $unroll `,` `blocks` `=` $blocks `>`
  }];
  let genVerifyDecl = 1;
}

#endif // KFUSE_FUSION_ATTRS_TD
