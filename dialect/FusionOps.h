//===- FusionOps.h - operations and attributes of fusion --------*- C++ -*-===//

#ifndef KFUSE_DIALECT_FUSIONOPS_H
#define KFUSE_DIALECT_FUSIONOPS_H

#include "dialect/FusionDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "dialect/FusionAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/FusionOps.h.inc"

namespace kfuse::fusion {
/// The group kinds the verifier accepts.
bool isKnownGroupKind(llvm::StringRef kind);
} // namespace kfuse::fusion

#endif // KFUSE_DIALECT_FUSIONOPS_H
