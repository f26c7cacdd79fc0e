//===- FusionDialect.td - the fusion dialect definition ----*- tablegen -*-===//

#ifndef KFUSE_FUSION_DIALECT_TD
#define KFUSE_FUSION_DIALECT_TD

include "mlir/IR/OpBase.td"

def Fusion_Dialect : Dialect {
  let name = "fusion";
  let cppNamespace = "::kfuse::fusion";
  let summary = "Kernel-fusion groups and their code-generation strategies.";
  let description = [{
    The fusion dialect sits above linalg. A `fusion.group` holds the tensor
    operations that kfuse decided to run as one kernel; the group's inputs are
    read from memory once and its results written once. Attributes on the
    group record the kind of group, the decisions that formed it and the
    strategy that code generation must follow.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, traits>;

#endif // KFUSE_FUSION_DIALECT_TD
