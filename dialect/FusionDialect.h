//===- FusionDialect.h - the fusion dialect ---------------------*- C++ -*-===//

#ifndef KFUSE_DIALECT_FUSIONDIALECT_H
#define KFUSE_DIALECT_FUSIONDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "dialect/FusionDialect.h.inc"

#endif // KFUSE_DIALECT_FUSIONDIALECT_H
