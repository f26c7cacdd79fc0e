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

/// A linalg.generic over tensors of static shape whose reduction loops (at
/// least one) all come after its parallel loops, whose indexing maps are
/// projected permutations, whose reduced inputs are indexed by every row
/// loop (not a contraction), and whose body acts element by element: a
/// reduction over trailing dimensions ("rows") that fusion can group.
bool isRowReductionGeneric(mlir::Operation *op);

/// An elementwise generic or a row reduction: what fusion groups contain.
bool isFusibleGeneric(mlir::Operation *op);

/// An elementwise generic with no tensor inputs (a generalized linalg.fill):
/// free to recompute wherever its value is needed.
bool isFillLike(mlir::Operation *op);

/// Bytes a value of static shaped type occupies in memory (i1 takes a byte).
int64_t bytesOf(mlir::Value value);

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_UTILS_H
