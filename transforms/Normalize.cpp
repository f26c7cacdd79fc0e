//===- Normalize.cpp - front-end forms rewritten for planning -------------===//
//
// fusion-pad-to-generic, fusion-hoist-reshapes and fusion-drop-body-asserts:
// rewrites of fusion-normalize for what front ends (torch-mlir) emit.
//
//===----------------------------------------------------------------------===//
//
// tensor.pad as an elementwise gather.
//
// A tensor.pad of static shape, constant low/high amounts and a padding value
// that does not depend on the position becomes one linalg.generic over the
// padded space:
//
//   out[i] = inside(i) ? src[clamp(i - low)] : pad
//
// where `inside(i)` tests every padded dimension and `src` is read with
// tensor.extract (a gather: the source is not an operand, because its shape
// differs from the iteration space). The clamped index keeps every read in
// bounds, so the kernel needs no branch. The generic is elementwise over the
// output, so fusion treats it like any other elementwise op: it fuses into
// elementwise consumers and is recomputed or materialized by the cost model;
// the bytes it reads are the source's.
//
// Other pads (dynamic shapes or amounts, position-dependent padding values)
// are left alone; planning then treats them as opaque and code generation
// reports them.
//
// A gather of the only use of an elementwise producer reads the producer's
// inputs instead and evaluates its body at the gathered point
// (GatherThroughProducer), so the producer fuses through the pad.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "fusion-pad-to-generic"

namespace kfuse {
#define GEN_PASS_DEF_PADTOGENERIC
#define GEN_PASS_DEF_DROPBODYASSERTS
#define GEN_PASS_DEF_HOISTRESHAPES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

/// True if the body reads an `outs` block argument (the generic updates a
/// tensor rather than producing a fresh one).
bool readsItsOutputs(linalg::GenericOp generic) {
  return llvm::any_of(generic.getDpsInitsMutable(), [&](OpOperand &init) {
    return !generic.getMatchingBlockArgument(&init).use_empty();
  });
}

struct PadAsGather : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    RankedTensorType srcType = pad.getSourceType();
    RankedTensorType type = pad.getResultType();
    if (!srcType.hasStaticShape() || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(pad, "dynamic shape");
    if (!pad.getLow().empty() || !pad.getHigh().empty())
      return rewriter.notifyMatchFailure(pad, "dynamic padding amounts");
    Value padValue = pad.getConstantPaddingValue();
    if (!padValue)
      return rewriter.notifyMatchFailure(pad, "padding value is not uniform");
    ArrayRef<int64_t> low = pad.getStaticLow();
    if (llvm::any_of(low, [](int64_t l) { return l < 0; }) ||
        llvm::any_of(pad.getStaticHigh(), [](int64_t h) { return h < 0; }))
      return rewriter.notifyMatchFailure(pad, "negative padding");
    // An empty source leaves nothing to read in bounds.
    if (srcType.getNumElements() == 0)
      return rewriter.notifyMatchFailure(pad, "empty source");

    Location loc = pad.getLoc();
    int64_t rank = type.getRank();
    Value src = pad.getSource();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    SmallVector<utils::IteratorType> iters(rank,
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)}, iters,
        [&](OpBuilder &b, Location l, ValueRange) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, l, v);
          };
          Value inside;
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            int64_t size = srcType.getDimSize(d);
            if (low[d] == 0 && size == type.getDimSize(d)) {
              at.push_back(i);
              continue;
            }
            // low <= i < low + size, and the clamped source index.
            Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                             i, cst(low[d]));
            Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                             i, cst(low[d] + size));
            Value in = arith::AndIOp::create(b, l, ge, lt);
            inside = inside ? arith::AndIOp::create(b, l, inside, in) : in;
            Value shifted = arith::SubIOp::create(b, l, i, cst(low[d]));
            Value clamped = arith::MinSIOp::create(
                b, l, arith::MaxSIOp::create(b, l, shifted, cst(0)),
                cst(size - 1));
            at.push_back(clamped);
          }
          Value v = tensor::ExtractOp::create(b, l, src, at);
          if (inside) {
            Value fill = padValue;
            if (fill.getParentRegion() == &pad.getRegion())
              fill = b.clone(*fill.getDefiningOp())->getResult(0);
            v = arith::SelectOp::create(b, l, inside, v, fill);
          }
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(pad, generic.getResults());
    return success();
  }
};

/// A gather (tensor.extract in a generic body) of the only use of an
/// elementwise generic's result reads the producer's inputs at that point and
/// computes the producer's body there instead: `pad(exp(x))` reads x, and the
/// producer's kernel and its intermediate tensor disappear.
struct GatherThroughProducer : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto producer = extract.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!producer || !isa<linalg::GenericOp>(extract->getParentOp()) ||
        !extract.getTensor().hasOneUse() || producer.getNumResults() != 1 ||
        !producer.hasPureTensorSemantics() ||
        producer.getNumLoops() != producer.getNumParallelLoops() ||
        producer->hasAttr(kMaterializeAttr) ||
        !producer.getIndexingMapMatchingResult(producer->getResult(0))
             .isIdentity())
      return failure();
    Block *body = producer.getBody();
    if (!body->getOps<linalg::IndexOp>().empty() ||
        readsItsOutputs(producer))
      return failure();
    for (Operation &op : body->without_terminator())
      if (op.getNumRegions() != 0 || !isPure(&op))
        return failure();
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      AffineMap map = producer.getMatchingIndexingMap(input);
      if (!map.isProjectedPermutation())
        return failure();
      Value value = input->get();
      if (isa<RankedTensorType>(value.getType())) {
        SmallVector<Value> at;
        for (AffineExpr e : map.getResults())
          at.push_back(
              extract.getIndices()[cast<AffineDimExpr>(e).getPosition()]);
        value = tensor::ExtractOp::create(rewriter, extract.getLoc(), value, at);
      }
      mapping.map(body->getArgument(input->getOperandNumber()), value);
    }
    for (Operation &op : body->without_terminator())
      rewriter.clone(op, mapping);
    Value result = mapping.lookupOrDefault(
        cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
    rewriter.replaceOp(extract, result);
    rewriter.eraseOp(producer);
    return success();
  }
};

struct PadToGenericPass : kfuse::impl::PadToGenericBase<PadToGenericPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsGather, GatherThroughProducer>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// Reshapes hoisted above elementwise producers.
//
// A reshape (tensor.expand_shape / collapse_shape) of the result of an
// elementwise generic whose operands are all indexed by the identity map
// (and whose body does not use linalg.index) is the same generic run over the
// reshaped space on reshaped inputs: row-major data does not move. Moving the
// reshape above its producer, repeatedly, takes it to the program's inputs
// or constants, where it is a free view, and the elementwise ops on both
// sides meet and fuse (`y = tanh(sigmoid(x).view(...))` is one kernel).
//===----------------------------------------------------------------------===//

template <typename ReshapeOp>
struct HoistReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto producer = reshape.getSrc().template getDefiningOp<linalg::GenericOp>();
    if (!producer || !reshape.getSrc().hasOneUse() ||
        producer.getNumResults() != 1 || !producer.hasPureTensorSemantics() ||
        producer.getNumLoops() != producer.getNumParallelLoops() ||
        !reshape.getResultType().hasStaticShape())
      return failure();
    if (!llvm::all_of(producer.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    if (!producer.getBody()->template getOps<linalg::IndexOp>().empty() ||
        readsItsOutputs(producer))
      return failure();
    for (Value in : producer.getDpsInputs())
      if (auto t = dyn_cast<RankedTensorType>(in.getType());
          !t || !t.hasStaticShape())
        return failure();
    // Reshapes that only add or drop unit dimensions are
    // linalg-fold-unit-extent-dims' business: moving them would bring unit
    // dimensions back.
    auto nonUnit = [](RankedTensorType t) {
      SmallVector<int64_t> dims;
      for (int64_t d : t.getShape())
        if (d != 1)
          dims.push_back(d);
      return dims;
    };
    if (nonUnit(reshape.getSrcType()) == nonUnit(reshape.getResultType()))
      return failure();
    Location loc = reshape.getLoc();
    RankedTensorType type = reshape.getResultType();
    SmallVector<ReassociationIndices> reassoc =
        reshape.getReassociationIndices();
    SmallVector<Value> inputs;
    for (Value in : producer.getDpsInputs()) {
      auto inType = cast<RankedTensorType>(in.getType());
      inputs.push_back(ReshapeOp::create(
          rewriter, loc, type.clone(inType.getElementType()), in, reassoc));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(rewriter, loc, TypeRange{type},
                                             inputs, ValueRange{init}, maps,
                                             iters);
    rewriter.inlineRegionBefore(producer.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    generic->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    rewriter.replaceOp(reshape, generic.getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct HoistReshapesPass
    : kfuse::impl::HoistReshapesBase<HoistReshapesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistReshape<tensor::ExpandShapeOp>,
                 HoistReshape<tensor::CollapseShapeOp>>(&getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

struct DropBodyAssertsPass
    : kfuse::impl::DropBodyAssertsBase<DropBodyAssertsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> asserts;
    getOperation().walk([&](linalg::GenericOp generic) {
      for (Operation &op : generic.getBody()->getOperations())
        if (op.getName().getStringRef() == "cf.assert")
          asserts.push_back(&op);
    });
    for (Operation *op : asserts)
      op->erase();
  }
};

} // namespace
