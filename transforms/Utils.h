//===- Utils.h - helpers shared by kfuse passes -----------------*- C++ -*-===//

#ifndef KFUSE_TRANSFORMS_UTILS_H
#define KFUSE_TRANSFORMS_UTILS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace kfuse {

/// A linalg.generic with only parallel loops, tensor operands of static
/// shape, and a body of ops that act element by element (so it can run as
/// one vectorized loop nest).
bool isElementwiseGeneric(mlir::Operation *op);

/// Bytes a value of static shaped type occupies in memory (i1 takes a byte).
int64_t bytesOf(mlir::Value value);

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_UTILS_H
