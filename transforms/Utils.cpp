//===- Utils.cpp - helpers shared by kfuse passes -------------------------===//

#include "transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

bool kfuse::isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics())
    return false;
  if (generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  for (Type t : op->getResultTypes())
    if (!cast<ShapedType>(t).hasStaticShape())
      return false;
  for (Operation &inner : generic.getBody()->getOperations()) {
    if (isa<linalg::YieldOp, linalg::IndexOp, arith::ConstantOp>(inner))
      continue;
    if (!inner.hasTrait<OpTrait::Elementwise>() || inner.getNumRegions() != 0)
      return false;
  }
  return true;
}

int64_t kfuse::bytesOf(Value value) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  int64_t bits = shaped.getElementTypeBitWidth();
  return shaped.getNumElements() * ((bits + 7) / 8);
}
