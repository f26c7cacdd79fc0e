//===- FusionDialect.cpp - registration of the fusion dialect -------------===//

#include "dialect/FusionDialect.h"
#include "dialect/FusionOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kfuse::fusion;

#include "dialect/FusionDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/FusionAttrs.cpp.inc"

void FusionDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/FusionAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/FusionOps.cpp.inc"
      >();
}

LogicalResult StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t threads, int64_t vector,
                                   int64_t unroll, int64_t blocks) {
  if (threads <= 0 || threads > 1024 || threads % 32 != 0)
    return emitError() << "threads must be a positive multiple of 32 and at "
                          "most 1024, got "
                       << threads;
  if (vector != 1 && vector != 2 && vector != 4 && vector != 8)
    return emitError() << "vector must be 1, 2, 4 or 8, got " << vector;
  if (unroll < 1 || unroll > 16)
    return emitError() << "unroll must be between 1 and 16, got " << unroll;
  if (blocks < 1)
    return emitError() << "blocks must be positive, got " << blocks;
  return success();
}
