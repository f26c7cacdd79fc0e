//===- WidenBoolTensors.cpp - booleans cross the function boundary as i8 --===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "fusion-widen-bool-tensors"

namespace kfuse {
#define GEN_PASS_DEF_WIDENBOOLTENSORS
#define GEN_PASS_DEF_WIDENBOOLRESULTS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

bool isBoolTensor(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getElementType().isInteger(1);
}

RankedTensorType withElement(Type t, Type element) {
  return cast<RankedTensorType>(t).clone(element);
}

/// An identity elementwise generic applying `CastOp` to every element.
template <typename CastOp>
Value convert(OpBuilder &b, Location loc, Value input, Type element) {
  auto type = withElement(input.getType(), element);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{input}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = CastOp::create(nb, nl, element, args[0]);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

/// Whether `v` is read only by gathers (tensor.extract, in the bodies of
/// the generics a slice of a boolean argument became), directly or through
/// reshapes.
bool onlyGathered(Value v) {
  return llvm::all_of(v.getUsers(), [](Operation *user) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      return onlyGathered(user->getResult(0));
    return isa<tensor::ExtractOp>(user);
  });
}

/// `v`, a boolean tensor now holding bytes (its type changed to i8), read
/// only by gathers and reshapes: the reshapes produce bytes too, and each
/// gather reads a byte and narrows it where it reads.
void gatherBytes(OpBuilder &b, Value v) {
  Type i1 = b.getI1Type();
  for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
      b.setInsertionPointAfter(extract);
      auto narrowed = arith::TruncIOp::create(b, extract.getLoc(), i1,
                                              extract.getResult());
      extract.getResult().replaceAllUsesExcept(narrowed, narrowed);
      extract.getResult().setType(b.getI8Type());
      continue;
    }
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      continue; // (the narrowing of a boolean argument's other readers)
    Value reshaped = user->getResult(0);
    reshaped.setType(withElement(reshaped.getType(), b.getI8Type()));
    gatherBytes(b, reshaped);
  }
}

struct WidenBoolTensorsPass
    : kfuse::impl::WidenBoolTensorsBase<WidenBoolTensorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() ||
        (llvm::none_of(func.getArgumentTypes(), isBoolTensor) &&
         llvm::none_of(func.getResultTypes(), isBoolTensor)))
      return markAllAnalysesPreserved();
    OpBuilder b(func.getContext());
    Type i8 = b.getI8Type(), i1 = b.getI1Type();
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      if (!isBoolTensor(arg.getType()))
        continue;
      arg.setType(withElement(arg.getType(), i8));
      // Gathers (and reshapes only gathers read) read the bytes themselves:
      // a boolean slice is then read in place by the kernel evaluating it,
      // not narrowed into a tensor of its own first, which a gather could
      // only read from memory.
      SmallVector<OpOperand *> others;
      for (OpOperand &use : arg.getUses()) {
        Operation *user = use.getOwner();
        bool gathers =
            isa<tensor::ExtractOp>(user) ||
            (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) &&
             onlyGathered(user->getResult(0)));
        if (!gathers)
          others.push_back(&use);
      }
      b.setInsertionPointToStart(&entry);
      Value narrowed;
      if (!others.empty())
        narrowed = convert<arith::TruncIOp>(b, func.getLoc(), arg, i1);
      for (OpOperand *use : others)
        use->set(narrowed);
      gatherBytes(b, arg);
    }
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      for (OpOperand &operand : ret->getOpOperands())
        if (isBoolTensor(operand.get().getType()))
          operand.set(
              convert<arith::ExtUIOp>(b, ret.getLoc(), operand.get(), i8));
    });
    SmallVector<Type> results;
    for (Type t : func.getResultTypes())
      results.push_back(isBoolTensor(t) ? withElement(t, i8) : t);
    func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                   results));
  }
};

struct WidenBoolResultsPass
    : kfuse::impl::WidenBoolResultsBase<WidenBoolResultsPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    Type i8 = b.getI8Type(), i1 = b.getI1Type();
    SmallVector<fusion::GroupOp> groups;
    getOperation().walk([&](fusion::GroupOp g) { groups.push_back(g); });
    bool changed = false;
    for (fusion::GroupOp group : groups) {
      fusion::YieldOp yield = group.getYield();
      for (OpResult result : group->getResults()) {
        if (!isBoolTensor(result.getType()) || result.use_empty())
          continue;
        // The readers: groups, directly or through reshapes (a unit
        // dimension restored before the value reaches another group).
        SmallVector<Operation *> reshapes;
        SmallVector<OpOperand *> uses;
        SmallVector<Value> worklist{result};
        while (!worklist.empty()) {
          Value v = worklist.pop_back_val();
          for (OpOperand &use : v.getUses()) {
            Operation *user = use.getOwner();
            if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
              reshapes.push_back(user);
              worklist.push_back(user->getResult(0));
            } else if (isa<fusion::GroupOp>(user)) {
              uses.push_back(&use);
            } else {
              user->emitError()
                  << "fusion-widen-bool-results: a boolean tensor of group '"
                  << group.getSymName() << "' is used outside any group";
              return signalPassFailure();
            }
          }
        }
        // The producing group writes bytes (reshapes move bytes)...
        changed = true;
        b.setInsertionPoint(yield);
        unsigned i = result.getResultNumber();
        yield->setOperand(i, convert<arith::ExtUIOp>(b, yield.getLoc(),
                                                     yield->getOperand(i), i8));
        result.setType(withElement(result.getType(), i8));
        for (Operation *reshape : reshapes)
          reshape->getResult(0).setType(
              withElement(reshape->getResult(0).getType(), i8));
        // ... and every reading group narrows them back.
        for (OpOperand *use : uses) {
          auto reader = cast<fusion::GroupOp>(use->getOwner());
          BlockArgument arg =
              reader.getBodyBlock().getArgument(use->getOperandNumber());
          arg.setType(use->get().getType());
          b.setInsertionPointToStart(&reader.getBodyBlock());
          Value narrowed =
              convert<arith::TruncIOp>(b, reader.getLoc(), arg, i1);
          arg.replaceAllUsesExcept(narrowed, narrowed.getDefiningOp());
        }
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
