//===- BufferizationBoundary.cpp - the function boundary for bufferization ===//
//
// What one-shot bufferization must know about the compiled function's
// boundary: its tensor arguments are the caller's inputs (never written in
// place), and each of its results is a buffer of its own; and, inside it,
// an empty tensor per `outs` (CSE shares one, which the analysis pays for
// use by use). After bufferization, results that reach their output
// buffer through reshapes are computed in that buffer
// (fusion-results-in-place).
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "fusion-bufferization-boundary"

namespace kfuse {
#define GEN_PASS_DEF_BUFFERIZATIONBOUNDARY
#define GEN_PASS_DEF_RESULTSINPLACE
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
    // (All at once: setting one argument's attributes rebuilds the array of
    // every argument's, quadratic in a function of thousands of tensors.)
    SmallVector<DictionaryAttr> argAttrs;
    func.getAllArgAttrs(argAttrs);
    bool marked = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      if (!isa<TensorType>(func.getArgument(i).getType()))
        continue;
      NamedAttrList attrs(argAttrs[i]);
      attrs.set("bufferization.writable",
                BoolAttr::get(func.getContext(), false));
      argAttrs[i] = attrs.getDictionary(func.getContext());
      marked = true;
    }
    if (marked)
      func.setAllArgAttrs(argAttrs);

    // One tensor.empty per use: CSE leaves one for every `outs` of a shape,
    // and the analysis then weighs each write into it against every other
    // use (an optimizer's step over 1200 parameters: 3600 results written
    // into one empty tensor). Each becomes a buffer of its own either way.
    // (The first use in program order keeps the original.)
    llvm::DenseSet<Operation *> kept;
    func.walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        auto empty = use.get().getDefiningOp<tensor::EmptyOp>();
        if (!empty || empty->hasOneUse() || kept.insert(empty).second)
          continue;
        OpBuilder b(empty);
        use.set(b.clone(*empty)->getResult(0));
      }
    });

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

/// `memref.copy %src, %out` into an output argument, where %src is a
/// buffer allocated in the function seen through reshapes: the buffer
/// becomes the inverse reshapes of %out.
struct ResultsInPlacePass
    : kfuse::impl::ResultsInPlaceBase<ResultsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return markAllAnalysesPreserved();
    Block &body = func.getBody().front();
    SmallVector<memref::CopyOp> copies;
    for (auto copy : body.getOps<memref::CopyOp>())
      copies.push_back(copy);
    bool changed = false;
    for (memref::CopyOp copy : copies)
      changed |= inPlace(copy);
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Whether `copy` went (its source buffer now the output itself).
  static bool inPlace(memref::CopyOp copy) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    if (!out || out.getOwner() != copy->getBlock() || !out.hasOneUse() ||
        !cast<MemRefType>(out.getType()).getLayout().isIdentity())
      return false;
    // The reshapes from the buffer to the copy, each used once, all of
    // identity layout.
    SmallVector<Operation *> chain;
    Value v = copy.getSource();
    while (v.hasOneUse() &&
           isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
               v.getDefiningOp()) &&
           cast<MemRefType>(v.getType()).getLayout().isIdentity()) {
      chain.push_back(v.getDefiningOp());
      v = v.getDefiningOp()->getOperand(0);
    }
    auto alloc = v.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != copy->getBlock() ||
        !alloc.getType().getLayout().isIdentity() ||
        !alloc.getType().hasStaticShape())
      return false;
    // Everything else that touches the buffer runs before the copy.
    Operation *last = chain.empty() ? copy.getOperation() : chain.back();
    for (Operation *user : alloc->getUsers()) {
      if (user == last)
        continue;
      Operation *top = copy->getBlock()->findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(copy))
        return false;
    }
    // The output seen as the buffer: the reshapes undone, in reverse.
    OpBuilder b(alloc);
    Location loc = copy.getLoc();
    Value view = out;
    for (Operation *reshape : chain) {
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape))
        view = memref::CollapseShapeOp::create(
            b, loc, view, expand.getReassociationIndices());
      else
        view = memref::ExpandShapeOp::create(
            b, loc, cast<memref::CollapseShapeOp>(reshape).getSrcType(), view,
            cast<memref::CollapseShapeOp>(reshape).getReassociationIndices());
    }
    // (identity layouts throughout: each inverse has its reshape's source
    // type, so `view` has the buffer's type)
    copy.erase();
    for (Operation *reshape : chain)
      reshape->erase();
    alloc.replaceAllUsesWith(view);
    alloc.erase();
    return true;
  }
};
} // namespace
