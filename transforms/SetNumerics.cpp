//===- SetNumerics.cpp - strict or fast floating-point semantics ----------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#define DEBUG_TYPE "fusion-set-numerics"

namespace kfuse {
#define GEN_PASS_DEF_SETNUMERICS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
struct SetNumericsPass : kfuse::impl::SetNumericsBase<SetNumericsPass> {
  using SetNumericsBase::SetNumericsBase;

  void runOnOperation() override {
    if (mode == "strict")
      return; // the input's flags are the contract
    if (mode != "fast") {
      getOperation().emitError()
          << "fusion-set-numerics: mode must be 'strict' or 'fast', got '"
          << mode << "'";
      return signalPassFailure();
    }
    getOperation().walk([](arith::ArithFastMathInterface op) {
      // (ops such as arith.extf carry no flags attribute until one is set)
      arith::FastMathFlagsAttr old = op.getFastMathFlagsAttr();
      arith::FastMathFlags flags =
          old ? old.getValue() : arith::FastMathFlags::none;
      op->setAttr(op.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(
                      op->getContext(), flags | arith::FastMathFlags::contract));
    });
  }
};
} // namespace
