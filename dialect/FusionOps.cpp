//===- FusionOps.cpp - verifiers and canonicalization of fusion ops -------===//

#include "dialect/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace kfuse::fusion;

bool kfuse::fusion::isKnownGroupKind(llvm::StringRef kind) {
  return kind == "elementwise" || kind == "reduction" || kind == "contraction";
}

YieldOp GroupOp::getYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

static LogicalResult checkStatic(Operation *op, Type type, StringRef what,
                                 unsigned index) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitOpError()
           << what << " #" << index << " must be a tensor of static shape, got "
           << type;
  return success();
}

LogicalResult GroupOp::verify() {
  if (!isKnownGroupKind(getKind()))
    return emitOpError()
           << "has unknown kind '" << getKind()
           << "' (expected 'elementwise', 'reduction' or 'contraction')";
  if (getSymName().empty())
    return emitOpError() << "needs a non-empty name";
  for (auto [i, t] : llvm::enumerate(getInputs().getTypes()))
    if (failed(checkStatic(*this, t, "input", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(getResultTypes()))
    if (failed(checkStatic(*this, t, "result", i)))
      return failure();
  return success();
}

LogicalResult GroupOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " inputs but its block has "
                         << block.getNumArguments() << " arguments";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(getInputs().getTypes(), block.getArgumentTypes()))) {
    auto [inType, argType] = pair;
    if (inType != argType)
      return emitOpError() << "input #" << i << " has type " << inType
                           << " but block argument #" << i << " has type "
                           << argType;
  }
  YieldOp yield = getYield();
  if (yield.getValues().size() != getNumResults())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values but has " << getNumResults() << " results";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getValues().getTypes(), getResultTypes()))) {
    auto [yType, rType] = pair;
    if (yType != rType)
      return emitOpError() << "yields " << yType << " as value #" << i
                           << " but result #" << i << " has type " << rType;
  }
  return success();
}

namespace {

/// Drops inputs whose block argument is unused and merges inputs that are the
/// same value: each distinct tensor is read once per kernel.
struct SimplifyGroupInputs : OpRewritePattern<GroupOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GroupOp group,
                                PatternRewriter &rewriter) const override {
    Block &block = group.getBodyBlock();
    // Redirect every duplicate to the first block argument of its value,
    // then drop the arguments nothing uses any more.
    llvm::SmallDenseMap<Value, unsigned> first;
    for (auto [i, input] : llvm::enumerate(group.getInputs())) {
      auto [it, inserted] = first.try_emplace(input, i);
      BlockArgument arg = block.getArgument(i);
      if (!inserted && !arg.use_empty()) {
        rewriter.replaceAllUsesWith(arg, block.getArgument(it->second));
      }
    }
    llvm::SmallBitVector erase(block.getNumArguments());
    for (BlockArgument arg : block.getArguments())
      if (arg.use_empty())
        erase.set(arg.getArgNumber());
    if (erase.none())
      return failure(); // (a redirected duplicate is always left unused)
    rewriter.startOpModification(group);
    for (int i = erase.size() - 1; i >= 0; --i) {
      if (!erase.test(i))
        continue;
      group.getInputsMutable().erase(i);
      block.eraseArgument(i);
    }
    rewriter.finalizeOpModification(group);
    return success();
  }
};

/// Removes results nobody uses, and forwards results that merely yield an
/// input of the group (the value is already in memory).
struct SimplifyGroupResults : OpRewritePattern<GroupOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GroupOp group,
                                PatternRewriter &rewriter) const override {
    YieldOp yield = group.getYield();
    SmallVector<Value> keptValues;
    SmallVector<Type> keptTypes;
    SmallVector<std::pair<OpResult, Value>> forwards;
    SmallVector<OpResult> keptResults;
    for (auto [result, yielded] :
         llvm::zip(group.getResults(), yield.getValues())) {
      if (result.use_empty())
        continue;
      if (auto arg = dyn_cast<BlockArgument>(yielded);
          arg && arg.getOwner() == &group.getBodyBlock()) {
        forwards.push_back(
            {cast<OpResult>(result), group.getInputs()[arg.getArgNumber()]});
        continue;
      }
      keptValues.push_back(yielded);
      keptTypes.push_back(result.getType());
      keptResults.push_back(cast<OpResult>(result));
    }
    if (keptResults.size() == group.getNumResults())
      return failure();

    for (auto [result, input] : forwards)
      rewriter.replaceAllUsesWith(result, input);
    auto newGroup =
        GroupOp::create(rewriter, group.getLoc(), keptTypes, group.getInputs(),
                        group.getSymNameAttr(), group.getKindAttr(),
                        group.getDecisionsAttr(), group.getStrategyAttr());
    rewriter.inlineRegionBefore(group.getBody(), newGroup.getBody(),
                                newGroup.getBody().end());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<YieldOp>(yield, keptValues);
    for (auto [oldResult, newResult] :
         llvm::zip(keptResults, newGroup.getResults()))
      rewriter.replaceAllUsesWith(oldResult, newResult);
    rewriter.eraseOp(group);
    return success();
  }
};

} // namespace

void GroupOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<SimplifyGroupInputs, SimplifyGroupResults>(context);
}

LogicalResult GuardOp::verify() {
  auto shapeOf = [](Type t) -> std::optional<ArrayRef<int64_t>> {
    if (auto shaped = dyn_cast<ShapedType>(t))
      return shaped.getShape();
    return std::nullopt;
  };
  if (shapeOf(getOk().getType()) != shapeOf(getValue().getType()))
    return emitOpError() << "condition " << getOk().getType()
                         << " does not have the shape of the value "
                         << getValue().getType();
  if (getMessage().empty())
    return emitOpError() << "needs a message";
  if (Value index = getIndex()) {
    if (shapeOf(index.getType()) != shapeOf(getOk().getType()) ||
        !mlir::getElementTypeOrSelf(index.getType()).isInteger(64))
      return emitOpError() << "index " << index.getType()
                           << " must be i64 of the condition's shape "
                           << getOk().getType();
  }
  return success();
}

OpFoldResult GuardOp::fold(FoldAdaptor adaptor) {
  // (true everywhere: nothing to report)
  if (auto ok = dyn_cast_or_null<IntegerAttr>(adaptor.getOk());
      ok && ok.getValue().isOne())
    return getValue();
  if (auto ok = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getOk());
      ok && ok.isSplat() && ok.getSplatValue<APInt>().isOne())
    return getValue();
  return {};
}

#define GET_OP_CLASSES
#include "dialect/FusionOps.cpp.inc"
