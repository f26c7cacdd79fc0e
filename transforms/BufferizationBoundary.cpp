//===- BufferizationBoundary.cpp - the function boundary for bufferization ===//
//
// What one-shot bufferization must know about the compiled function's
// boundary: its tensor arguments are the caller's inputs (never written in
// place), and each of its results is a buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

#define DEBUG_TYPE "fusion-bufferization-boundary"

namespace kfuse {
#define GEN_PASS_DEF_BUFFERIZATIONBOUNDARY
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
struct BufferizationBoundaryPass
    : kfuse::impl::BufferizationBoundaryBase<BufferizationBoundaryPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The arguments are the caller's tensors: bufferization must not write
    // into them (a contraction accumulating into an argument it was given
    // as `outs` gets a copy instead).
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i, "bufferization.writable",
                        BoolAttr::get(func.getContext(), false));

    // Each result is its own output buffer: a computed tensor returned more
    // than once is copied for every repeat (a device-to-device copy after
    // bufferization). Returned arguments are copied by bufferization.
    func.walk([&](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || isa<BlockArgument>(v) || seen.insert(v).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type,
                                                         ValueRange{}, v));
      }
    });
  }
};
} // namespace
