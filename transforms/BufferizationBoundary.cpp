//===- BufferizationBoundary.cpp - the function boundary for bufferization ===//
//
// What one-shot bufferization must know about the compiled function's
// boundary: its tensor arguments are the caller's inputs (never written in
// place), and each of its results is a buffer of its own; and, inside it,
// an empty tensor per `outs` (CSE shares one, which the analysis pays for
// use by use). Then the generics that write only fresh tensors run on
// buffers before the analysis sees them (fusion-bufferize-fresh-generics).
// After bufferization, the buffer results become arguments written into
// (fusion-results-to-out-params), and results that reach their output
// buffer through reshapes are computed in that buffer
// (fusion-results-in-place).
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#define DEBUG_TYPE "fusion-bufferization-boundary"

namespace kfuse {
#define GEN_PASS_DEF_BUFFERIZATIONBOUNDARY
#define GEN_PASS_DEF_BUFFERIZEFRESHGENERICS
#define GEN_PASS_DEF_RESULTSINPLACE
#define GEN_PASS_DEF_RESULTSTOOUTPARAMS
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
    // as `outs` gets a copy instead). Arguments only read as the inputs of
    // structured ops (never written in place: only their `outs` are) stay
    // unmarked, since bufferization takes every mark off again one argument
    // at a time, rebuilding the array of all of them each time (an
    // optimizer's step over 1200 parameters: 4800 arguments, 0.1 s).
    // (All at once: setting one argument's attributes rebuilds the array of
    // every argument's, quadratic in a function of thousands of tensors.)
    SmallVector<DictionaryAttr> argAttrs;
    func.getAllArgAttrs(argAttrs);
    bool marked = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      BlockArgument arg = func.getArgument(i);
      if (!isa<TensorType>(arg.getType()) ||
          llvm::all_of(arg.getUses(), [](OpOperand &use) {
            auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            return dps && isa<linalg::LinalgOp>(use.getOwner()) &&
                   dps.isDpsInput(&use);
          }))
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

/// The buffer type of identity layout one-shot bufferization gives a
/// ranked tensor type at kfuse's function boundary and for allocations.
static MemRefType identityBufferType(RankedTensorType tensor) {
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// Generics that write only fresh tensors, on buffers before one-shot
/// bufferization (see Passes.td for why).
struct BufferizeFreshGenericsPass
    : kfuse::impl::BufferizeFreshGenericsBase<BufferizeFreshGenericsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return markAllAnalysesPreserved();
    Block &body = func.getBody().front();
    SmallVector<linalg::GenericOp> generics(body.getOps<linalg::GenericOp>());
    bool changed = false;
    for (linalg::GenericOp g : generics)
      changed |= bufferize(g, body);
    changed |= bufferizeArguments(func);
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Tensor arguments that only such generics read (through read-only
  /// `to_buffer`s) become buffers of identity layout, as one-shot
  /// bufferization makes the function's arguments at its boundary (which
  /// otherwise weighs each result of the function against each argument).
  static bool bufferizeArguments(func::FuncOp func) {
    SmallVector<Type> inputs(func.getArgumentTypes());
    bool changed = false;
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || arg.use_empty() ||
          !llvm::all_of(arg.getUsers(), [](Operation *user) {
            auto toBuffer = dyn_cast<bufferization::ToBufferOp>(user);
            return toBuffer && toBuffer.getReadOnly();
          }))
        continue;
      MemRefType bufferType = identityBufferType(type);
      if (!llvm::all_of(arg.getUsers(), [&](Operation *user) {
            return user->getResult(0).getType() == bufferType;
          }))
        continue;
      arg.setType(bufferType);
      inputs[arg.getArgNumber()] = bufferType;
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        user->getResult(0).replaceAllUsesWith(arg);
        user->erase();
      }
      changed = true;
    }
    if (changed)
      func.setFunctionType(
          FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
    return changed;
  }

  /// Whether the buffer one-shot bufferization gives `v` (a tensor of the
  /// function's body) has the identity layout: the function's arguments
  /// (identity-layout-map at the boundary), constants (globals), empty
  /// tensors (allocations), this pass's buffers (`to_tensor` of an
  /// allocation), and generics' results written into such buffers, seen
  /// through reshapes (of contiguous buffers, contiguous again). Anything
  /// else (a slice, say) may not.
  static bool identityBuffer(Value v, Block &body) {
    while (true) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return arg.getOwner() == &body;
      Operation *def = v.getDefiningOp();
      if (isa<arith::ConstantOp, tensor::EmptyOp>(def))
        return true;
      if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def))
        return toTensor.getBuffer().getDefiningOp<memref::AllocOp>() != nullptr;
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
        v = def->getOperand(0);
        continue;
      }
      if (auto g = dyn_cast<linalg::GenericOp>(def)) {
        // (a result's buffer is its init's, or a new allocation where the
        // analysis copies)
        v = g.getDpsInitOperand(cast<OpResult>(v).getResultNumber())->get();
        continue;
      }
      return false;
    }
  }

  static bool bufferize(linalg::GenericOp g, Block &body) {
    if (!g.hasPureTensorSemantics())
      return false;
    SmallVector<tensor::EmptyOp> empties;
    for (Value init : g.getDpsInits()) {
      auto empty = init.getDefiningOp<tensor::EmptyOp>();
      // (one use: the empty tensor is this generic's alone; one per use is
      // what fusion-bufferization-boundary leaves)
      if (!empty || !empty->hasOneUse() || empty->getBlock() != &body)
        return false;
      empties.push_back(empty);
    }
    for (Value in : g.getDpsInputs())
      if (!isa<RankedTensorType>(in.getType()) || !identityBuffer(in, body))
        return false;

    MLIRContext *ctx = g.getContext();
    // The allocations where the empty tensors were, as one-shot
    // bufferization places them (its default alignment, 64 bytes).
    IntegerAttr alignment = IntegerAttr::get(IntegerType::get(ctx, 64), 64);
    SmallVector<Value> allocs;
    for (tensor::EmptyOp empty : empties) {
      OpBuilder b(empty);
      allocs.push_back(memref::AllocOp::create(
          b, empty.getLoc(), identityBufferType(empty.getType()),
          empty.getDynamicSizes(), alignment));
    }
    OpBuilder b(g);
    SmallVector<Value> operands;
    for (Value in : g.getDpsInputs())
      operands.push_back(bufferization::ToBufferOp::create(
          b, g.getLoc(),
          identityBufferType(cast<RankedTensorType>(in.getType())), in,
          /*read_only=*/true));
    llvm::append_range(operands, allocs);
    Operation *onBuffers = cloneWithoutRegions(b, g, TypeRange{}, operands);
    onBuffers->getRegion(0).takeBody(g.getRegion());
    for (auto [result, alloc] : llvm::zip_equal(g->getResults(), allocs))
      result.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, g.getLoc(), result.getType(), alloc, /*restrict=*/true,
          /*writable=*/true));
    g.erase();
    for (tensor::EmptyOp empty : empties)
      empty.erase();
    return true;
  }
};

/// Buffer results as arguments the function writes into (see Passes.td).
struct ResultsToOutParamsPass
    : kfuse::impl::ResultsToOutParamsBase<ResultsToOutParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<StringAttr> converted;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<bool> done = convert(func);
      if (failed(done))
        return signalPassFailure();
      if (*done)
        converted.insert(func.getSymNameAttr());
    }
    if (converted.empty())
      return markAllAnalysesPreserved();
    WalkResult calls = module.walk([&](func::CallOp call) {
      if (!converted.contains(call.getCalleeAttr().getAttr()))
        return WalkResult::advance();
      call.emitError() << "fusion-results-to-out-params: a call of '"
                       << call.getCallee()
                       << "', whose buffer results became arguments, is not "
                          "supported";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      signalPassFailure();
  }

  /// Whether `func` had buffer results (now arguments), or failure.
  static FailureOr<bool> convert(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    SmallVector<DictionaryAttr> argAttrs, resultAttrs, keptResultAttrs;
    func.getAllArgAttrs(argAttrs);
    func.getAllResultAttrs(resultAttrs);
    SmallVector<Type> inputs(type.getInputs()), results;
    SmallVector<BlockArgument> outs;
    Block &entry = func.front();
    for (auto [i, result] : llvm::enumerate(type.getResults())) {
      auto buffer = dyn_cast<MemRefType>(result);
      if (!buffer) {
        results.push_back(result);
        keptResultAttrs.push_back(resultAttrs[i]);
        continue;
      }
      if (!buffer.getLayout().isIdentity())
        return func.emitError()
               << "fusion-results-to-out-params: result " << i << " (" << buffer
               << ") does not have the identity layout";
      inputs.push_back(buffer);
      argAttrs.push_back(resultAttrs[i]);
      outs.push_back(entry.addArgument(buffer, func.getLoc()));
    }
    if (outs.empty())
      return false;
    func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(keptResultAttrs);

    func.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      SmallVector<Value> kept;
      auto out = outs.begin();
      // (a buffer returned twice is, from its first place on, the first
      // argument it became: copied into the second)
      for (Value v : ret.getOperands()) {
        if (!isa<MemRefType>(v.getType())) {
          kept.push_back(v);
          continue;
        }
        BlockArgument arg = *out++;
        auto alloc = v.getDefiningOp<memref::AllocOp>();
        if (alloc && alloc.getType().hasStaticShape()) {
          alloc.replaceAllUsesWith(arg);
          alloc.erase();
        } else {
          memref::CopyOp::create(b, ret.getLoc(), v, arg);
        }
      }
      func::ReturnOp::create(b, ret.getLoc(), kept);
      ret.erase();
    });
    return true;
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
