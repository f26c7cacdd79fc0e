//===- Normalize.cpp - front-end forms rewritten for planning -------------===//
//
// fusion-pad-to-generic, fusion-fold-copies, fusion-hoist-reshapes,
// fusion-normalize-views, fusion-drop-body-asserts, fusion-drop-dead-results,
// fusion-merge-nested-reductions and fusion-reductions-last: rewrites of
// fusion-normalize for what front ends (torch-mlir, the builder) emit; and
// fusion-check-generics, which refuses the generics kfuse would run other
// than as written before any of them.
// fusion-fold-copies' analysis of where gathers read is in GatherIndices.cpp.
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
#include "transforms/Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

#define DEBUG_TYPE "fusion-pad-to-generic"

namespace kfuse {
#define GEN_PASS_DEF_PADTOGENERIC
#define GEN_PASS_DEF_DROPBODYASSERTS
#define GEN_PASS_DEF_CHECKGENERICS
#define GEN_PASS_DEF_DROPDEADRESULTS
#define GEN_PASS_DEF_HOISTRESHAPES
#define GEN_PASS_DEF_FOLDCOPIES
#define GEN_PASS_DEF_NORMALIZEVIEWS
#define GEN_PASS_DEF_MERGENESTEDREDUCTIONS
#define GEN_PASS_DEF_REDUCTIONSLAST
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

/// A pass (`Base`: its generated base) that applies patterns to its
/// function until none applies, within a budget (applyPatternsWithBudget);
/// past it the pass stops with an error that names it. A run that changed
/// nothing marks every analysis preserved, and MLIR then skips verifying
/// the IR again.
template <typename Base> struct FixpointPass : Base {
  using Base::Base;

  /// Whether the last run changed the IR (NormalizeViews reads it of the
  /// passes it runs in rounds).
  bool changed = false;

  void rewriteToFixpoint(RewritePatternSet &&patterns) {
    Operation *op = this->getOperation();
    changed = false;
    if (failed(applyPatternsWithBudget(
            op, FrozenRewritePatternSet(std::move(patterns)), false,
            &changed))) {
      op->emitError() << "kfuse: " << this->getArgument()
                      << " did not converge (please report this program)";
      return this->signalPassFailure();
    }
    if (!changed)
      this->markAllAnalysesPreserved();
  }
};

/// True if the body reads an `outs` block argument (the generic updates a
/// tensor rather than producing a fresh one).
bool readsItsOutputs(linalg::GenericOp generic) {
  return llvm::any_of(generic.getDpsInitsMutable(), [&](OpOperand &init) {
    return !generic.getMatchingBlockArgument(&init).use_empty();
  });
}


/// A generic with no inputs over `type` whose body yields `value(b, loc, at)`
/// at the loop indices `at`: the form pads, concats and slices take.
Value positionalGather(
    PatternRewriter &rewriter, Location loc, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> value) {
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                       type.getElementType());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)}, iters,
             [&](OpBuilder &b, Location l, ValueRange) {
               SmallVector<Value> at;
               for (int64_t d = 0; d < rank; ++d)
                 at.push_back(linalg::IndexOp::create(b, l, d));
               linalg::YieldOp::create(b, l, value(b, l, at));
             })
      .getResult(0);
}

/// At position `idx` of a tensor of `type` that holds `src` at static
/// `offs`, `sizes` and `strides` (`dropped`: the dimensions src does not
/// have): src's element there, read at the clamped source position so that
/// every read is in bounds, and whether `idx` lies in the slice -- past the
/// offset, below offset + size * stride, on a multiple of the stride -- or
/// null where every position does.
std::pair<Value, Value> readSlice(OpBuilder &b, Location l, ArrayRef<Value> idx,
                                  RankedTensorType type, Value src,
                                  ArrayRef<int64_t> offs,
                                  ArrayRef<int64_t> sizes,
                                  ArrayRef<int64_t> strides,
                                  const llvm::SmallBitVector &dropped) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, l, v);
  };
  Value inside;
  auto both = [&](Value c) {
    inside = inside ? arith::AndIOp::create(b, l, inside, c) : c;
  };
  SmallVector<Value> at;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value i = idx[d];
    if (offs[d] == 0 && strides[d] == 1 && sizes[d] == type.getDimSize(d)) {
      if (!dropped.test(d))
        at.push_back(i);
      continue;
    }
    Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i,
                                     cst(offs[d]));
    Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                     cst(offs[d] + sizes[d] * strides[d]));
    Value in = arith::AndIOp::create(b, l, ge, lt);
    if (strides[d] == 1)
      both(in);
    Value rel = arith::SubIOp::create(b, l, i, cst(offs[d]));
    if (strides[d] > 1) {
      Value rem = arith::RemSIOp::create(b, l, rel, cst(strides[d]));
      both(arith::AndIOp::create(
          b, l, in,
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, rem, cst(0))));
      rel = arith::DivSIOp::create(b, l, rel, cst(strides[d]));
    }
    if (!dropped.test(d))
      at.push_back(arith::MinSIOp::create(
          b, l, arith::MaxSIOp::create(b, l, rel, cst(0)), cst(sizes[d] - 1)));
  }
  return {tensor::ExtractOp::create(b, l, src, at), inside};
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

    SmallVector<int64_t> ones(type.getRank(), 1);
    Value gather = positionalGather(
        rewriter, pad.getLoc(), type,
        [&](OpBuilder &b, Location l, ArrayRef<Value> idx) {
          auto [v, inside] =
              readSlice(b, l, idx, type, pad.getSource(), low,
                        srcType.getShape(), ones,
                        llvm::SmallBitVector(type.getRank()));
          if (inside) {
            Value fill = padValue;
            if (fill.getParentRegion() == &pad.getRegion())
              fill = b.clone(*fill.getDefiningOp())->getResult(0);
            v = arith::SelectOp::create(b, l, inside, v, fill);
          }
          return v;
        });
    rewriter.replaceOp(pad, gather);
    return success();
  }
};

/// tensor.insert_slice with static shapes, offsets, sizes and strides as a
/// gather over the destination: in every dimension position i lies in the
/// slice when off <= i, i - off < size * stride and (i - off) is a multiple
/// of the stride; there it reads the source at (i - off) / stride (clamped,
/// so every read is in bounds), elsewhere the destination's value: the
/// fill's scalar where the destination is a fill (a transposed
/// convolution's zero-stuffed input), else the destination at i (torch's
/// slice_scatter).
struct InsertSliceAsGather : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = insert.getResultType();
    RankedTensorType srcType = insert.getSourceType();
    if (!type.hasStaticShape() || !srcType.hasStaticShape() ||
        !insert.getOffsets().empty() || !insert.getSizes().empty() ||
        !insert.getStrides().empty())
      return rewriter.notifyMatchFailure(insert, "dynamic shape or slice");
    if (srcType.getNumElements() == 0 || type.getNumElements() == 0)
      return rewriter.notifyMatchFailure(insert, "empty slice");
    ArrayRef<int64_t> offs = insert.getStaticOffsets();
    ArrayRef<int64_t> sizes = insert.getStaticSizes();
    ArrayRef<int64_t> strides = insert.getStaticStrides();
    if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
        llvm::any_of(offs, [](int64_t o) { return o < 0; }))
      return rewriter.notifyMatchFailure(insert, "negative stride or offset");
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    Value src = insert.getSource(), dest = insert.getDest();
    Value background = filledWith(dest);
    Value gather = positionalGather(
        rewriter, insert.getLoc(), type,
        [&](OpBuilder &b, Location l, ArrayRef<Value> idx) -> Value {
          auto [v, inside] = readSlice(b, l, idx, type, src, offs, sizes,
                                       strides, dropped);
          if (!inside)
            return v;
          Value outside = background
                              ? background
                              : tensor::ExtractOp::create(b, l, dest, idx)
                                    .getResult();
          return arith::SelectOp::create(b, l, inside, v, outside);
        });
    rewriter.replaceOp(insert, gather);
    return success();
  }
};

/// tensor.concat of static shapes as a gather over the result: along the
/// concatenated dimension, position i reads input k at i - offset_k where
/// offset_k <= i < offset_k + size_k. Every input is read at a clamped
/// (in-bounds) position and a select chain picks the right one, so the
/// kernel needs no branch (torch.cat of a rotary embedding's halves).
struct ConcatAsGather : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = concat.getResultType();
    // Inputs cast to a dynamic size (torch.roll's two slices) are read as
    // the static tensors they were cast from.
    SmallVector<Value> operands;
    for (Value v : concat.getInputs()) {
      auto cast = v.getDefiningOp<tensor::CastOp>();
      operands.push_back(
          cast && cast.getSource().getType().hasStaticShape() ? cast.getSource()
                                                               : v);
    }
    if (!type.hasStaticShape() || llvm::any_of(operands, [](Value v) {
          return !cast<RankedTensorType>(v.getType()).hasStaticShape();
        }))
      return rewriter.notifyMatchFailure(concat, "dynamic shape");
    uint64_t dim = concat.getDim();
    SmallVector<Value> inputs;
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (Value v : operands) {
      int64_t size = cast<RankedTensorType>(v.getType()).getDimSize(dim);
      if (size > 0) { // (empty inputs add nothing)
        inputs.push_back(v);
        offsets.push_back(offset);
      }
      offset += size;
    }
    if (offset != type.getDimSize(dim))
      return rewriter.notifyMatchFailure(concat, "inputs do not fill the result");
    if (inputs.empty() || type.getNumElements() == 0)
      return rewriter.notifyMatchFailure(concat, "empty result");
    Value gather = positionalGather(
        rewriter, concat.getLoc(), type,
        [&](OpBuilder &b, Location l, ArrayRef<Value> at) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, l, v);
          };
          Value i = at[dim], v;
          for (int64_t k = inputs.size() - 1; k >= 0; --k) {
            int64_t size =
                cast<RankedTensorType>(inputs[k].getType()).getDimSize(dim);
            SmallVector<Value> here(at);
            Value shifted =
                offsets[k] ? arith::SubIOp::create(b, l, i, cst(offsets[k]))
                           : i;
            here[dim] = arith::MinSIOp::create(
                b, l, arith::MaxSIOp::create(b, l, shifted, cst(0)),
                cst(size - 1));
            Value read = tensor::ExtractOp::create(b, l, inputs[k], here);
            if (!v) {
              v = read;
              continue;
            }
            Value before = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::slt, i, cst(offsets[k + 1]));
            v = arith::SelectOp::create(b, l, before, read, v);
          }
          return v;
        });
    rewriter.replaceOp(concat, gather);
    return success();
  }
};

/// A generic whose body computes nothing on the data: positions (index
/// arithmetic and tests), the gathered load, and a select of the value or a
/// constant.
bool onlyMovesData(linalg::GenericOp g) {
  return llvm::all_of(g.getBody()->without_terminator(), [](Operation &op) {
    if (isa<linalg::IndexOp, tensor::ExtractOp, arith::ConstantOp,
            arith::SelectOp>(op))
      return true;
    return llvm::all_of(op.getResultTypes(),
                        [](Type t) { return t.isIndex() || t.isInteger(1); });
  });
}

/// A gather (tensor.extract in a generic body) of an elementwise generic's
/// result reads the producer's inputs at that point and computes the
/// producer's body there instead: `pad(exp(x))` reads x, and the producer's
/// kernel and its intermediate tensor disappear. The producer may itself
/// gather (a slice of a slice, a pad of a slice): its loop indices are the
/// gathered indices. Where the producer has other uses it stays for them,
/// and the gather recomputes only if it runs at most (elements / inputs)
/// times: it then reads no more than the producer's result would cost to
/// write (torch's cross-entropy picks one log-probability per row out of a
/// whole log-softmax: it reads a logit, the row's max and its log-sum).
struct GatherThroughProducer : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Whether gathering from `producer` at `extract` may recompute it where
  /// the producer has other uses.
  static bool fewGathers(tensor::ExtractOp extract,
                         linalg::GenericOp producer) {
    auto reader = cast<linalg::GenericOp>(extract->getParentOp());
    auto type = cast<RankedTensorType>(extract.getTensor().getType());
    if (!type.hasStaticShape() || !reader.hasPureTensorSemantics())
      return false;
    int64_t runs = 1;
    for (int64_t n : reader.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(n))
        return false;
      runs *= n;
    }
    int64_t inputs = llvm::count_if(producer.getDpsInputs(), [](Value v) {
      return isa<RankedTensorType>(v.getType());
    });
    return runs * std::max<int64_t>(inputs, 1) <= type.getNumElements();
  }

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto producer = extract.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!producer || !isa<linalg::GenericOp>(extract->getParentOp()) ||
        producer.getNumResults() != 1 ||
        !producer.hasPureTensorSemantics() ||
        producer.getNumLoops() != producer.getNumParallelLoops() ||
        producer->hasAttr(kMaterializeAttr) ||
        !producer.getIndexingMapMatchingResult(producer->getResult(0))
             .isIdentity())
      return failure();
    Block *body = producer.getBody();
    if (readsItsOutputs(producer) ||
        (!extract.getTensor().hasOneUse() && !fewGathers(extract, producer)))
      return failure();
    // A reader with reduction loops may gather an element many times: it
    // takes no arithmetic from the producer (which stays one kernel).
    if (cast<linalg::GenericOp>(extract->getParentOp()).getNumReductionLoops() >
            0 &&
        !onlyMovesData(producer))
      return failure();
    for (Operation &op : body->without_terminator())
      if (op.getNumRegions() != 0 || !isPure(&op))
        return failure();
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      AffineMap map = producer.getMatchingIndexingMap(input);
      Value value = input->get();
      if (isa<RankedTensorType>(value.getType())) {
        // (any affine map: a view's constant block index, a merged loop's
        // floordiv and mod)
        SmallVector<Value> at;
        for (AffineExpr e : map.getResults())
          at.push_back(affine::expandAffineExpr(rewriter, extract.getLoc(), e,
                                                extract.getIndices(), {}));
        value =
            tensor::ExtractOp::create(rewriter, extract.getLoc(), value, at);
      }
      mapping.map(body->getArgument(input->getOperandNumber()), value);
    }
    // (identity output map: the producer's loop d is the gathered index d)
    for (Operation &op : body->without_terminator()) {
      if (auto idx = dyn_cast<linalg::IndexOp>(op))
        mapping.map(idx.getResult(), extract.getIndices()[idx.getDim()]);
      else
        rewriter.clone(op, mapping);
    }
    Value result = mapping.lookupOrDefault(
        cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
    rewriter.replaceOp(extract, result);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    return success();
  }
};

struct PadToGenericPass
    : FixpointPass<kfuse::impl::PadToGenericBase<PadToGenericPass>> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsGather, ConcatAsGather, InsertSliceAsGather,
                 GatherThroughProducer>(&getContext());
    rewriteToFixpoint(std::move(patterns));
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

/// True if two shapes differ only in dimensions of size 1.
bool onlyUnitDims(RankedTensorType a, RankedTensorType b) {
  auto nonUnit = [](RankedTensorType t) {
    SmallVector<int64_t> dims;
    for (int64_t d : t.getShape())
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  return nonUnit(a) == nonUnit(b);
}

/// True if `g` runs over all-parallel loops with every operand on the
/// identity map: the elementwise generics reshapes move through.
bool isIdentityElementwise(linalg::GenericOp g) {
  return g.getNumLoops() == g.getNumParallelLoops() &&
         llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// True if a linalg.generic other than `except` reads `v` directly, as an
/// input.
bool readByAnotherGeneric(Value v, Operation *except) {
  return llvm::any_of(v.getUses(), [&](OpOperand &use) {
    auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
    return g && g != except && g.isDpsInput(&use);
  });
}

static bool isArgumentView(tensor::ExtractSliceOp slice);

/// True if a collapse_shape of p's result moves above p and on, through
/// elementwise generics used only there, to values nothing else reads in
/// the finer space (the program's inputs, constants): the collapse becomes
/// a free view there. fusion-hoist-reshapes moves such collapses up.
bool collapseHoistsAbove(linalg::GenericOp p, unsigned depth = 0) {
  if (depth > 16 || !isIdentityElementwise(p) || readsItsOutputs(p) ||
      !p.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  return llvm::all_of(p.getDpsInputs(), [&](Value in) {
    auto type = dyn_cast<RankedTensorType>(in.getType());
    if (!type || !type.hasStaticShape())
      return false;
    if (auto producer = in.getDefiningOp<linalg::GenericOp>())
      return in.hasOneUse() && collapseHoistsAbove(producer, depth + 1);
    // (a collapse of a view of an argument is no free view: the generic
    // reads the view over its own loops, collapseSinksInto)
    if (auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
        slice && isArgumentView(slice))
      return false;
    return !readByAnotherGeneric(in, p);
  });
}

/// True if a generic reading `collapse` may run over the finer space
/// instead (fusion-hoist-reshapes then moves the collapse below it): the
/// collapse cannot move up to a free view (a broadcast, a reduction or a
/// shared value is above it), or the reader broadcasts other operands
/// over the finer space's dimensions. Group norm's statistics over
/// [N, G, C/G] are read by ops over [N, C, H, W], which then run over
/// [N, G, C/G, H, W], as do the statistics' reductions of x's view.
bool collapseSinksInto(linalg::GenericOp g, tensor::CollapseShapeOp collapse) {
  // (a collapse of a view of an argument, x[:, :-1].reshape(-1, V), is in
  // general no view: the generic runs over the view's own loops, reading it
  // as a view, whatever its body; linalg.index ops become the linearized
  // loop indices)
  auto slice = collapse.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
  bool ofArgumentView = slice && isArgumentView(slice);
  if (!g || !g.hasPureTensorSemantics() || kfuse::isContractionGeneric(g) ||
      !collapse.getSrcType().hasStaticShape() ||
      !llvm::all_of(g->getOperandTypes(), [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return !shaped || shaped.hasStaticShape();
      }))
    return false;
  if (ofArgumentView)
    return true;
  if (g.getNumLoops() == g.getNumParallelLoops() && !isIdentityElementwise(g))
    return true; // an elementwise op broadcasting some operand
  Value src = collapse.getSrc();
  if (auto producer = src.getDefiningOp<linalg::GenericOp>())
    return !collapseHoistsAbove(producer);
  // (a view that only drops unit dimensions is the finer space too: the
  // unit loops the reader gets are dropped again, and it reads that view)
  return readByAnotherGeneric(src, nullptr) ||
         llvm::any_of(src.getUsers(), [&](Operation *user) {
           auto unitView = dyn_cast<tensor::CollapseShapeOp>(user);
           return unitView && unitView != collapse &&
                  onlyUnitDims(unitView.getSrcType(),
                               unitView.getResultType()) &&
                  readByAnotherGeneric(unitView.getResult(), nullptr);
         });
}

/// True if `a` and `b` reshape (their sources) the same way.
template <typename ReshapeOp>
bool sameReshape(ReshapeOp a, ReshapeOp b) {
  return a.getResultType() == b.getResultType() &&
         a.getReassociationIndices() == b.getReassociationIndices();
}

/// Two identical reshapes of one value are one (CSE within the rewrite:
/// whether a view is read directly elsewhere decides where a collapse goes,
/// and views made by different rewrites must count as the same).
template <typename ReshapeOp>
struct MergeIdenticalReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    for (Operation *user : reshape.getSrc().getUsers()) {
      auto other = dyn_cast<ReshapeOp>(user);
      if (!other || other == reshape ||
          other->getBlock() != reshape->getBlock() ||
          !other->isBeforeInBlock(reshape) || !sameReshape(other, reshape))
        continue;
      rewriter.replaceOp(reshape, other.getResult());
      return success();
    }
    return failure();
  }
};

/// expand_shape(collapse_shape(x)) where the collapse only drops unit
/// dimensions is collapse_shape(expand_shape(x)): x expanded first, the unit
/// dimensions dropped after. Upstream's bubble-up leaves the pair when one
/// group is both collapsed and expanded ([1, C] -> [C] -> [G, C/G]: group
/// norm at batch 1, where linalg-fold-unit-extent-dims dropped the batch
/// before the loop over C was split). In the new form the expansion is the
/// same view of x the statistics read ([1, G, C/G, ...]) and the two views
/// meet.
struct ExpandOfUnitDimCollapse : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse.getSrcType().hasStaticShape() ||
        !expand.getResultType().hasStaticShape() ||
        !onlyUnitDims(collapse.getSrcType(), collapse.getResultType()))
      return failure();
    ArrayRef<int64_t> srcShape = collapse.getSrcType().getShape();
    ArrayRef<int64_t> outShape = expand.getResultType().getShape();
    SmallVector<ReassociationIndices> collapseGroups =
        collapse.getReassociationIndices();
    SmallVector<ReassociationIndices> expandGroups =
        expand.getReassociationIndices();
    // Per dimension of the collapsed value: its source dimensions (all but
    // at most one of size 1) and the dimensions it expands into. The
    // middle shape keeps the unit source dimensions and puts the expanded
    // ones in place of the non-unit one; the final collapse attaches each
    // unit dimension to the expanded dimension beside it.
    SmallVector<int64_t> midShape;
    SmallVector<ReassociationIndices> expandMid, collapseOut;
    bool bothInOneGroup = false;
    for (auto [srcDims, outDims] : llvm::zip_equal(collapseGroups,
                                                   expandGroups)) {
      if (srcDims.empty() || outDims.empty())
        return failure();
      std::optional<int64_t> wide;
      for (int64_t d : srcDims)
        if (srcShape[d] != 1) {
          if (wide)
            return failure();
          wide = d;
        }
      int64_t carrier = wide ? *wide : srcDims.back();
      bothInOneGroup |= srcDims.size() > 1 && outDims.size() > 1;
      size_t firstOut = collapseOut.size();
      collapseOut.resize(firstOut + outDims.size());
      size_t outPos = firstOut;
      for (int64_t d : srcDims) {
        ReassociationIndices mid;
        if (d == carrier) {
          for (int64_t o : outDims) {
            mid.push_back(midShape.size());
            collapseOut[outPos++].push_back(midShape.size());
            midShape.push_back(outShape[o]);
          }
        } else {
          mid.push_back(midShape.size());
          // before the carrier: joins the first expanded dimension; after
          // it: the last
          collapseOut[d < carrier ? firstOut : outPos - 1].push_back(
              midShape.size());
          midShape.push_back(1);
        }
        expandMid.push_back(mid);
      }
    }
    if (!bothInOneGroup)
      return failure();
    for (ReassociationIndices &group : collapseOut)
      llvm::sort(group);
    Location loc = expand.getLoc();
    auto midType = RankedTensorType::get(
        midShape, expand.getResultType().getElementType());
    Value mid = tensor::ExpandShapeOp::create(rewriter, loc, midType,
                                              collapse.getSrc(), expandMid);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        expand, expand.getResultType(), mid, collapseOut);
    return success();
  }
};

/// tensor.expand_shape / collapse_shape of a constant held as a resource
/// blob (torch-mlir's weights) is the constant at the new shape: row-major
/// data is the same blob. (Upstream folds reshapes of dense constants
/// only.)
template <typename ReshapeOp>
struct ReshapeOfResourceConstant : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    DenseResourceElementsAttr blob;
    if (!matchPattern(reshape.getSrc(), m_Constant(&blob)) ||
        !reshape.getResultType().hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        reshape, DenseResourceElementsAttr::get(reshape.getResultType(),
                                                blob.getRawHandle()));
    return success();
  }
};

/// affine.apply in a generic's body (upstream's expansion of a generic over
/// a reshape's loops writes each old linalg.index so) as arith, which the
/// kernels and fusion-fold-copies' index analyses read.
struct AffineApplyInBody : OpRewritePattern<affine::AffineApplyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(affine::AffineApplyOp apply,
                                PatternRewriter &rewriter) const override {
    if (!isa_and_nonnull<linalg::GenericOp>(apply->getParentOp()))
      return failure();
    std::optional<SmallVector<Value, 8>> values = affine::expandAffineMap(
        rewriter, apply.getLoc(), apply.getAffineMap(),
        llvm::to_vector(apply.getOperands()));
    if (!values || values->size() != 1)
      return failure();
    rewriter.replaceOp(apply, (*values)[0]);
    return success();
  }
};

template <typename ReshapeOp>
struct HoistReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto producer =
        reshape.getSrc().template getDefiningOp<linalg::GenericOp>();
    // Every use the same reshape (expansion of a value with several readers
    // leaves one copy of the reshape per reader): all become the hoisted
    // generic.
    auto likeThis = [&](Operation *user) {
      auto other = dyn_cast<ReshapeOp>(user);
      return other && sameReshape(other, reshape);
    };
    if (!producer || !llvm::all_of(reshape.getSrc().getUsers(), likeThis) ||
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
    // (a collapse moves up only to a free view, and not where every reader
    // runs over the finer space: there it moves down, collapseSinksInto)
    if (isa<tensor::CollapseShapeOp>(reshape.getOperation())) {
      if (!collapseHoistsAbove(producer))
        return failure();
      if (llvm::all_of(producer->getUsers(), [](Operation *user) {
            auto same = cast<tensor::CollapseShapeOp>(user);
            return llvm::all_of(same->getUses(), [&](OpOperand &use) {
              auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
              return reader && reader.isDpsInput(&use) &&
                     collapseSinksInto(reader, same);
            });
          }))
        return failure();
    }
    for (Value in : producer.getDpsInputs())
      if (auto t = dyn_cast<RankedTensorType>(in.getType());
          !t || !t.hasStaticShape())
        return failure();
    // Reshapes that only add or drop unit dimensions are
    // linalg-fold-unit-extent-dims' business: moving them would bring unit
    // dimensions back.
    if (onlyUnitDims(reshape.getSrcType(), reshape.getResultType()))
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
    SmallVector<AffineMap> maps(
        inputs.size() + 1, rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iters);
    rewriter.inlineRegionBefore(producer.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    generic->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    for (Operation *user : llvm::to_vector(producer->getUsers()))
      rewriter.replaceOp(user, generic.getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// A reshape of a fill (an elementwise generic without tensor inputs or
/// linalg.index) is the same fill at the new shape, whatever its other uses:
/// fills are recomputed wherever they are needed. Not a reshape that only
/// adds or drops unit dimensions: the unit-dim folding of this pass made it
/// from a fill at that shape (the two would undo each other forever).
template <typename ReshapeOp>
struct ReshapeOfFill : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto fill = reshape.getSrc().template getDefiningOp<linalg::GenericOp>();
    if (!fill || !kfuse::isFillLike(fill) || fill.getNumResults() != 1 ||
        readsItsOutputs(fill) ||
        !fill.getBody()->template getOps<linalg::IndexOp>().empty() ||
        !reshape.getResultType().hasStaticShape() ||
        onlyUnitDims(reshape.getSrcType(), reshape.getResultType()))
      return failure();
    RankedTensorType type = reshape.getResultType();
    Location loc = reshape.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    SmallVector<AffineMap> maps(
        fill.getNumDpsInputs(),
        AffineMap::get(type.getRank(), 0, {}, rewriter.getContext()));
    maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto fresh = linalg::GenericOp::create(rewriter, loc, TypeRange{type},
                                           fill.getDpsInputs(),
                                           ValueRange{init}, maps, iters);
    IRMapping mapping;
    fill.getRegion().cloneInto(&fresh.getRegion(), mapping);
    rewriter.replaceOp(reshape, fresh.getResults());
    return success();
  }
};

struct HoistReshapesPass
    : FixpointPass<kfuse::impl::HoistReshapesBase<HoistReshapesPass>> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistReshape<tensor::ExpandShapeOp>,
                 HoistReshape<tensor::CollapseShapeOp>,
                 ReshapeOfFill<tensor::ExpandShapeOp>,
                 ReshapeOfFill<tensor::CollapseShapeOp>, ExpandOfUnitDimCollapse,
                 ReshapeOfResourceConstant<tensor::ExpandShapeOp>,
                 ReshapeOfResourceConstant<tensor::CollapseShapeOp>,
                 MergeIdenticalReshapes<tensor::ExpandShapeOp>,
                 MergeIdenticalReshapes<tensor::CollapseShapeOp>,
                 AffineApplyInBody>(&getContext());
    // A reshape of a tensor.empty (an init the expansion below reshaped) is
    // an empty tensor of the new shape: not an operand anything reads.
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // An expand_shape of a collapse_shape is a collapse of an expand where
    // the two refine one space (group norm's [N, C, H*W] -> [N, G, C/G, H*W]
    // is [N, G, C/G, H, W] collapsed): the collapse can then move down.
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    // An expand_shape of the only use of any other generic with projected
    // permutation maps (a contraction and its epilogue, a broadcast):
    // upstream expansion runs the generic over the expanded loops, reading
    // its inputs through expanded views.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fused) {
          // A collapse_shape moves below the generics that run over the
          // finer space (collapseSinksInto).
          if (auto collapse =
                  fused->get().getDefiningOp<tensor::CollapseShapeOp>())
            return !onlyUnitDims(collapse.getSrcType(),
                                 collapse.getResultType()) &&
                   collapseSinksInto(
                       dyn_cast<linalg::GenericOp>(fused->getOwner()),
                       collapse);
          auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner());
          auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
          if (!expand || !producer || !fused->get().hasOneUse() ||
              !expand.getResultType().hasStaticShape() ||
              onlyUnitDims(expand.getSrcType(), expand.getResultType()))
            return false;
          return llvm::all_of(producer->getOperandTypes(), [](Type t) {
            auto shaped = dyn_cast<ShapedType>(t);
            return !shaped || shaped.hasStaticShape();
          });
        });
    // Unit loops the expansion gave a generic (a collapse that also dropped
    // a unit dimension sank into it) are dropped again, as
    // linalg-fold-unit-extent-dims did before this pass.
    linalg::ControlDropUnitDims dropUnitDims;
    linalg::populateFoldUnitExtentDimsPatterns(patterns, dropUnitDims);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    rewriteToFixpoint(std::move(patterns));
  }
};

//===----------------------------------------------------------------------===//
// Copies folded into indexing maps.
//
// A copy generic (one tensor input, a body that yields it, identity output
// map: a generalized transpose or broadcast) is data movement only. A generic
// reading its result reads the copy's input instead, through the composed
// map: the transpose of a weight feeding a matmul is never written to memory.
// Row reductions keep a copy whose composed map is not a projected
// permutation: planning recognizes a row reduction by projected-permutation
// maps (the copy then joins its group as an elementwise producer).
//
// A static tensor.extract_slice of whole aligned blocks becomes a view (an
// expand_shape of its source read by a copy with constant indices), which
// folds like any copy. Another slice of a function argument stays a slice
// for the linalg ops that read it, a view of the argument's buffer once
// bufferized. Any other static slice becomes a gather, like a pad: it
// fuses with elementwise neighbours and is evaluated where it is read.
//===----------------------------------------------------------------------===//

/// Static offsets, sizes, strides and shapes, not empty, and a rank
/// reduction (if any) that drops only unit dimensions.
LogicalResult matchStaticSlice(tensor::ExtractSliceOp slice,
                               PatternRewriter &rewriter) {
  RankedTensorType type = slice.getResultType();
  if (!type.hasStaticShape() || !slice.getSourceType().hasStaticShape() ||
      ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
      ShapedType::isDynamicShape(slice.getStaticSizes()) ||
      ShapedType::isDynamicShape(slice.getStaticStrides()))
    return rewriter.notifyMatchFailure(slice, "dynamic slice");
  if (type.getNumElements() == 0)
    return rewriter.notifyMatchFailure(slice, "empty slice");
  if (slice.getSourceType().getRank() - slice.getDroppedDims().count() !=
      size_t(type.getRank()))
    return rewriter.notifyMatchFailure(slice, "unexpected rank reduction");
  return success();
}

/// Whether `slice` (static) may stay a slice for the linalg ops that read
/// it as inputs: it takes part of a function argument, contiguous along its
/// last dimension. Bufferized, it is a view of the argument's buffer
/// (memref.subview), which every kernel addresses through its strides and
/// offset: a softmax over x[:, 1:1026] is one row kernel over the view,
/// where a gather would be evaluated in each kernel that reads it and the
/// reductions reading it would not fuse with their elementwise neighbours
/// (3 kernels). Its other uses (returned, reshaped) read a gather (a copy).
static bool isArgumentView(tensor::ExtractSliceOp slice) {
  // (not booleans: fusion-widen-bool-tensors later makes an i1 argument
  // bytes, converted by a generic, whose result no view can slice)
  auto arg = dyn_cast<BlockArgument>(slice.getSource());
  if (!arg || slice.getSourceType().getElementType().isInteger(1) ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
      !arg.getOwner()->isEntryBlock() ||
      llvm::any_of(slice.getStaticStrides(),
                   [](int64_t s) { return s <= 0; }))
    return false;
  // (contiguous along its last dimension, as row kernels address views: the
  // source's last dimension kept, at stride 1)
  int64_t last = slice.getSourceType().getRank() - 1;
  if (slice.getDroppedDims().test(last) ||
      slice.getStaticStrides()[last] != 1)
    return false;
  return true;
}

/// Whether `use` is a linalg op's input (what may read a view).
static bool isLinalgInput(OpOperand &use) {
  auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return reader && reader.isDpsInput(&use);
}

/// tensor.extract_slice with static offsets, sizes and strides as a gather
/// over the slice: out[i] = src[offset + i * stride]. (Not a copy generic
/// with an offset input map: linalg infers loop ranges from operand shapes,
/// so a slice starting at 0 cannot be an input map of a larger tensor.)
struct SliceAsGather : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = slice.getResultType();
    if (failed(matchStaticSlice(slice, rewriter)))
      return failure();
    bool view = isArgumentView(slice) &&
                llvm::any_of(slice->getUses(), isLinalgInput);
    if (view && llvm::all_of(slice->getUses(), isLinalgInput))
      return rewriter.notifyMatchFailure(slice, "a view of an argument");
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    Value gather = positionalGather(
        rewriter, slice.getLoc(), type,
        [&](OpBuilder &b, Location l, ArrayRef<Value> idx) -> Value {
          SmallVector<Value> at;
          unsigned d = 0;
          for (auto [k, offset, stride] : llvm::enumerate(
                   slice.getStaticOffsets(), slice.getStaticStrides())) {
            if (dropped.test(k)) {
              at.push_back(arith::ConstantIndexOp::create(b, l, offset));
              continue;
            }
            Value i = idx[d++];
            if (stride != 1)
              i = arith::MulIOp::create(
                  b, l, i, arith::ConstantIndexOp::create(b, l, stride));
            if (offset != 0)
              i = arith::AddIOp::create(
                  b, l, i, arith::ConstantIndexOp::create(b, l, offset));
            at.push_back(i);
          }
          return tensor::ExtractOp::create(b, l, slice.getSource(), at);
        });
    // (a view keeps its linalg readers; the others read the gather)
    if (view)
      rewriter.replaceUsesWithIf(slice.getResult(), gather, [](OpOperand &u) {
        return !isLinalgInput(u);
      });
    else
      rewriter.replaceOp(slice, gather);
    return success();
  }
};

/// A copy generic over `type` reading `input` through `map`.
Value copyOver(PatternRewriter &rewriter, Location loc, RankedTensorType type,
               Value input, AffineMap map) {
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                       type.getElementType());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{type}, ValueRange{input},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 map, rewriter.getMultiDimIdentityMap(type.getRank())},
             iters,
             [](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, args[0]);
             })
      .getResult(0);
}

/// A static slice that takes whole aligned blocks of its source as a view:
/// the source is expanded so that the slice is one index of a new outer
/// dimension (x[..., k*s:(k+1)*s] of a dimension of n*s) or of a new inner
/// one (x[..., o::t] of a dimension of s*t), and a copy generic reads it with
/// constant indices in its map. Unlike a gather, the copy keeps an operand
/// that indexes every loop, so it folds into any reader, a contraction that
/// reads two slices of one projection (q @ k^T out of a fused qkv) included.
struct AlignedSliceAsView : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = slice.getResultType();
    RankedTensorType srcType = slice.getSourceType();
    if (failed(matchStaticSlice(slice, rewriter)))
      return failure();
    // The only use of a generic's result stays a gather, which pulls the
    // producer into the slice's readers (GatherThroughProducer); behind a
    // view the producer would be a kernel of its own.
    if (slice.getSource().getDefiningOp<linalg::GenericOp>() &&
        slice.getSource().hasOneUse())
      return rewriter.notifyMatchFailure(slice, "slice of a generic");
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    MLIRContext *ctx = getContext();
    SmallVector<ReassociationIndices> reassociation;
    SmallVector<int64_t> expanded;
    SmallVector<AffineExpr> reads;
    unsigned d = 0;
    for (auto [k, n, offset, size, stride] :
         llvm::enumerate(srcType.getShape(), slice.getStaticOffsets(),
                         slice.getStaticSizes(), slice.getStaticStrides())) {
      auto group = [&](ArrayRef<int64_t> dims) {
        ReassociationIndices r;
        for (int64_t extent : dims) {
          r.push_back(expanded.size());
          expanded.push_back(extent);
        }
        reassociation.push_back(r);
      };
      if (size == 1) { // one index, kept as a unit dimension or dropped
        group({n});
        reads.push_back(getAffineConstantExpr(offset, ctx));
        d += dropped.test(k) ? 0 : 1;
        continue;
      }
      AffineExpr loop = getAffineDimExpr(d++, ctx);
      if (offset == 0 && size == n && stride == 1) {
        group({n});
        reads.push_back(loop);
      } else if (stride == 1 && n % size == 0 && offset % size == 0) {
        group({n / size, size});
        reads.push_back(getAffineConstantExpr(offset / size, ctx));
        reads.push_back(loop);
      } else if (stride > 1 && size * stride == n && offset < stride) {
        group({size, stride});
        reads.push_back(loop);
        reads.push_back(getAffineConstantExpr(offset, ctx));
      } else {
        return rewriter.notifyMatchFailure(slice, "not whole aligned blocks");
      }
    }
    Location loc = slice.getLoc();
    Value source = slice.getSource();
    if (expanded.size() != size_t(srcType.getRank()))
      source = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(expanded, srcType.getElementType()), source,
          reassociation);
    rewriter.replaceOp(slice,
                       copyOver(rewriter, loc, type, source,
                                AffineMap::get(type.getRank(), 0, reads, ctx)));
    return success();
  }
};


/// A generic that only moves data: its single (tensor) input, unchanged.
bool isCopy(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != g.getNumParallelLoops() ||
      !g.hasPureTensorSemantics() ||
      !isa<RankedTensorType>(g.getDpsInputs()[0].getType()) ||
      !g.getIndexingMapsArray().back().isIdentity() ||
      g->hasAttr(kMaterializeAttr))
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return yield.getValues()[0] == g.getBody()->getArgument(0);
}

/// A reshape of a copy is a copy over the reshaped space, reading the copy's
/// input through the copy's map with the reshape's index arithmetic put in:
///  - collapse: a loop c over dims (d_0, ..., d_k) of sizes (s_0, ..., s_k)
///    gives d_i = (c floordiv (s_{i+1} * ... * s_k)) mod s_i;
///  - expand: a dim d split into loops (e_0, ..., e_k) of sizes (s_0, ...,
///    s_k) is read at (e_0, ..., e_k) of the input, itself expanded, where
///    the copy reads the input at d directly (so linalg can still infer the
///    loops' ranges from it), and at e_0 * (s_1 * ... * s_k) + ... + e_k
///    elsewhere.
/// Heads split out of a projection, transposed and merged into a batch
/// (torch's multi-head attention) so become one copy that folds into the
/// batch_matmul reading it, instead of a transpose written to memory.
struct CollapseOfCopy : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rewriter) const override {
    auto copy = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    if (!copy || !isCopy(copy) || !collapse.getResultType().hasStaticShape() ||
        !collapse.getSrcType().hasStaticShape())
      return failure();
    MLIRContext *ctx = getContext();
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    SmallVector<AffineExpr> dims(shape.size());
    for (auto [c, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      AffineExpr loop = getAffineDimExpr(c, ctx);
      int64_t inner = 1;
      for (int64_t d : llvm::reverse(group)) {
        AffineExpr e = inner == 1 ? loop : loop.floorDiv(inner);
        dims[d] = d == group.front() ? e : e % shape[d];
        inner *= shape[d];
      }
    }
    AffineMap map =
        simplifyAffineMap(copy.getIndexingMapsArray()[0].replaceDimsAndSymbols(
            dims, {}, collapse.getResultType().getRank(), 0));
    rewriter.replaceOp(collapse, copyOver(rewriter, collapse.getLoc(),
                                          collapse.getResultType(),
                                          copy.getDpsInputs()[0], map));
    return success();
  }
};

struct ExpandOfCopy : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto copy = expand.getSrc().getDefiningOp<linalg::GenericOp>();
    RankedTensorType type = expand.getResultType();
    if (!copy || !isCopy(copy) || !type.hasStaticShape() ||
        !expand.getSrcType().hasStaticShape())
      return failure();
    MLIRContext *ctx = getContext();
    Value input = copy.getDpsInputs()[0];
    auto inputType = cast<RankedTensorType>(input.getType());
    if (!inputType.hasStaticShape())
      return failure();
    AffineMap old = copy.getIndexingMapsArray()[0];
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    // Each old dim as a linear combination of its new loops.
    SmallVector<AffineExpr> linear;
    for (const ReassociationIndices &group : groups) {
      AffineExpr e = getAffineConstantExpr(0, ctx);
      for (int64_t d : group)
        e = e * type.getDimSize(d) + getAffineDimExpr(d, ctx);
      linear.push_back(e);
    }
    // Old dims read directly (at exactly one input position).
    SmallVector<unsigned> uses(groups.size(), 0);
    for (AffineExpr e : old.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        ++uses[dim.getPosition()];
    SmallVector<ReassociationIndices> inputGroups;
    SmallVector<int64_t> inputShape;
    SmallVector<AffineExpr> reads;
    for (auto [p, e] : llvm::enumerate(old.getResults())) {
      ReassociationIndices g;
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (dim && uses[dim.getPosition()] == 1) {
        for (int64_t d : groups[dim.getPosition()]) {
          g.push_back(inputShape.size());
          inputShape.push_back(type.getDimSize(d));
          reads.push_back(getAffineDimExpr(d, ctx));
        }
      } else {
        g.push_back(inputShape.size());
        inputShape.push_back(inputType.getDimSize(p));
        reads.push_back(simplifyAffineExpr(e.replaceDimsAndSymbols(linear, {}),
                                           type.getRank(), 0));
      }
      inputGroups.push_back(g);
    }
    Location loc = expand.getLoc();
    if (inputShape.size() != size_t(inputType.getRank()))
      input = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(inputShape, inputType.getElementType()), input,
          inputGroups);
    rewriter.replaceOp(expand,
                       copyOver(rewriter, loc, type, input,
                                AffineMap::get(type.getRank(), 0, reads, ctx)));
    return success();
  }
};

struct FoldCopyIntoReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp reader,
                                PatternRewriter &rewriter) const override {
    if (!reader.hasPureTensorSemantics())
      return failure();
    bool rowReduction = kfuse::isRowReductionGeneric(reader);
    for (OpOperand *input : reader.getDpsInputOperands()) {
      auto copy = input->get().getDefiningOp<linalg::GenericOp>();
      if (!copy || !isCopy(copy))
        continue;
      AffineMap composed = copy.getIndexingMapsArray()[0].compose(
          reader.getMatchingIndexingMap(input));
      if (rowReduction && !composed.isProjectedPermutation())
        continue;
      SmallVector<Value> operands(reader->getOperands());
      SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
      operands[input->getOperandNumber()] = copy.getDpsInputs()[0];
      maps[input->getOperandNumber()] = composed;
      if (!keepsLoopRanges(reader, operands, maps))
        continue;
      rewriter.modifyOpInPlace(reader, [&] {
        input->set(copy.getDpsInputs()[0]);
        reader.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};




/// A generic without inputs whose body gathers (tensor.extract) and computes
/// its value from the position alone: a rewritten pad or slice.
bool isPositionalGather(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 0 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != g.getNumParallelLoops() ||
      !g.hasPureTensorSemantics() || !hasGatherReads(g) ||
      !g.getIndexingMapsArray()[0].isIdentity() || readsItsOutputs(g) ||
      g->hasAttr(kMaterializeAttr))
    return false;
  return llvm::all_of(g.getBody()->without_terminator(), [](Operation &op) {
    return op.getNumRegions() == 0 && isPure(&op);
  });
}

/// A reshape of a positional gather (a pad, concat or slice rewritten) is
/// the gather over the reshaped space: each of its loop indices is the
/// linear combination of the new indices it was split into (expand) or the
/// digit of the new index it was merged into (collapse). The reshape goes,
/// and the gather folds into its readers (torch.stack along an inner
/// dimension, then a sum over it: a concat viewed with a new axis).

template <typename ReshapeOp>
struct ReshapeOfGather : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto gather = reshape.getSrc().template getDefiningOp<linalg::GenericOp>();
    RankedTensorType type = reshape.getResultType();
    RankedTensorType srcType = reshape.getSrcType();
    // (a gather that reads at loop indices becomes an input instead: a
    // split loop's gather collapsed back would be split again)
    if (!gather || !isPositionalGather(gather) || !type.hasStaticShape() ||
        !srcType.hasStaticShape() || readsAtLoopIndices(gather))
      return failure();
    constexpr bool expand = std::is_same_v<ReshapeOp, tensor::ExpandShapeOp>;
    SmallVector<ReassociationIndices> groups =
        reshape.getReassociationIndices();
    Value fresh = positionalGather(
        rewriter, reshape.getLoc(), type,
        [&](OpBuilder &b, Location l, ArrayRef<Value> at) {
          auto cst = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, l, v);
          };
          // the gather's own index d, from the reshaped space's indices
          SmallVector<Value> old(srcType.getRank());
          for (auto [d, group] : llvm::enumerate(groups)) {
            int64_t stride = 1;
            if (expand) { // source dim d was split into `group`
              Value v;
              for (int64_t k : llvm::reverse(group)) {
                Value term = stride == 1 ? at[k]
                                         : arith::MulIOp::create(
                                               b, l, at[k], cst(stride));
                v = v ? arith::AddIOp::create(b, l, v, term) : term;
                stride *= type.getDimSize(k);
              }
              old[d] = v;
              continue;
            }
            for (int64_t k : llvm::reverse(group)) { // merged into dim d
              Value q = stride == 1 ? at[d]
                                    : arith::DivSIOp::create(b, l, at[d],
                                                             cst(stride));
              old[k] = group.size() == 1
                           ? q
                           : arith::RemSIOp::create(
                                 b, l, q, cst(srcType.getDimSize(k)));
              stride *= srcType.getDimSize(k);
            }
          }
          IRMapping mapping;
          for (Operation &op : gather.getBody()->without_terminator()) {
            if (auto idx = dyn_cast<linalg::IndexOp>(op))
              mapping.map(idx.getResult(), old[idx.getDim()]);
            else
              b.clone(op, mapping);
          }
          return mapping.lookupOrDefault(
              gather.getBody()->getTerminator()->getOperand(0));
        });
    rewriter.replaceOp(reshape, fresh);
    return success();
  }
};

/// A generic reading the result of a positional gather evaluates the gather
/// at the point it reads instead (the gather's loop indices are the reader's
/// indexing map applied to the reader's loop indices). Each read stays one
/// load of the gathered tensor, so this costs no traffic even where the
/// reader reads an element many times (a matmul reading a q/k/v slice).
struct FoldGatherIntoReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp reader,
                                PatternRewriter &rewriter) const override {
    if (!reader.hasPureTensorSemantics())
      return failure();
    // A reader with reduction loops (a convolution, a matmul) may read an
    // element many times: it takes only gathers that do no arithmetic on the
    // data (a pad or slice, not a pad of exp(x)), which cost the same load
    // whether folded or not.
    bool rereads = reader.getNumReductionLoops() > 0;
    OpOperand *input = nullptr;
    linalg::GenericOp gather;
    for (OpOperand *in : reader.getDpsInputOperands()) {
      gather = in->get().getDefiningOp<linalg::GenericOp>();
      if (gather && isPositionalGather(gather) &&
          stillCoveredWithout(reader, in) &&
          (!rereads || onlyMovesData(gather))) {
        input = in;
        break;
      }
    }
    if (!input)
      return failure();
    AffineMap readMap = reader.getMatchingIndexingMap(input);
    withoutInput(rewriter, reader, input, [&](Block *body) {
      // The gather's body, at the point the reader reads.
      Location loc = reader.getLoc();
      SmallVector<Value> loopIdx;
      for (unsigned d = 0; d < reader.getNumLoops(); ++d)
        loopIdx.push_back(linalg::IndexOp::create(rewriter, loc, d));
      IRMapping mapping;
      for (Operation &op : gather.getBody()->without_terminator()) {
        if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
          mapping.map(idx.getResult(),
                      affine::expandAffineExpr(
                          rewriter, loc, readMap.getResult(idx.getDim()),
                          loopIdx, {}));
          continue;
        }
        rewriter.clone(op, mapping);
      }
      return mapping.lookupOrDefault(
          cast<linalg::YieldOp>(gather.getBody()->getTerminator())
              .getValues()[0]);
    });
    return success();
  }
};

/// `v` computed at the builder's point: the scalar computation (see
/// kfuse::isScalarComputation; constants excepted) that defines it cloned
/// there, operands first. Tensors it reads stay where they are.
Value cloneScalar(OpBuilder &b, Value v, IRMapping &mapping) {
  if (Value done = mapping.lookupOrNull(v))
    return done;
  Operation *def = v.getDefiningOp();
  if (!kfuse::isScalarComputation(def) || matchPattern(def, m_Constant()))
    return v;
  for (Value operand : def->getOperands())
    cloneScalar(b, operand, mapping);
  return b.clone(*def, mapping)->getResult(cast<OpResult>(v).getResultNumber());
}

/// A generic whose body uses a scalar computed outside it, or that takes one
/// as an input (torch-mlir reads a 0-d tensor with tensor.extract and fills
/// a tensor with the element, or uses it in a body), computes it in its body
/// instead: the element is then a gather read of the tensor (an input of the
/// generic's group) rather than a scalar crossing into a group, which groups
/// cannot take.
struct ScalarsIntoBody : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool computed(Value v) {
    Operation *def = v.getDefiningOp();
    return kfuse::isScalarComputation(def) && !matchPattern(def, m_Constant());
  }

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!g.hasPureTensorSemantics())
      return failure();
    for (OpOperand *input : g.getDpsInputOperands())
      if (computed(input->get())) {
        withoutInput(rewriter, g, input, [&](Block *) {
          IRMapping mapping;
          return cloneScalar(rewriter, input->get(), mapping);
        });
        return success();
      }
    SmallVector<OpOperand *> captured;
    g.getBody()->walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands())
        if (computed(use.get()) &&
            !g->isAncestor(use.get().getParentBlock()->getParentOp()))
          captured.push_back(&use);
    });
    if (captured.empty())
      return failure();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(g.getBody());
    IRMapping mapping;
    rewriter.modifyOpInPlace(g, [&] {
      for (OpOperand *use : captured)
        use->set(cloneScalar(rewriter, use->get(), mapping));
    });
    return success();
  }
};

/// A generic without loops (arithmetic on 0-d tensors: torch's scalar
/// hyperparameters, lerp's weight, a bias correction 1 - beta^step) read by a
/// generic with loops is computed in the reader's body, from its own inputs
/// read there through the reader's (constant) map: one kernel instead of a
/// one-thread kernel, a 0-d intermediate and a dependency. Contractions keep
/// such a producer outside (their bodies run once per product).
struct FoldScalarProducerIntoReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool isScalarGeneric(linalg::GenericOp g) {
    return g && g.getNumLoops() == 0 && g.hasPureTensorSemantics() &&
           !g->hasAttr(kMaterializeAttr) &&
           llvm::all_of(g.getRegionOutputArgs(),
                        [](BlockArgument a) { return a.use_empty(); });
  }

  LogicalResult matchAndRewrite(linalg::GenericOp reader,
                                PatternRewriter &rewriter) const override {
    if (reader.getNumLoops() == 0 || !reader.hasPureTensorSemantics() ||
        kfuse::isContractionGeneric(reader))
      return failure();
    for (OpOperand *input : reader.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::GenericOp>();
      if (!isScalarGeneric(producer) || !stillCoveredWithout(reader, input))
        continue;
      // The producer's inputs are read where the reader read its result.
      AffineMap at = reader.getMatchingIndexingMap(input);
      auto [inputs, maps] = inputsBut(reader, input);
      for (Value v : producer.getDpsInputs()) {
        inputs.push_back(v);
        maps.push_back(at);
      }
      linalg::GenericOp fused = withInputs(rewriter, reader, inputs, maps);
      Block *body = fused.getBody();
      unsigned argNo = input->getOperandNumber();
      unsigned firstNew = reader.getNumDpsInputs();
      IRMapping mapping;
      for (auto [i, v] : llvm::enumerate(producer.getDpsInputs()))
        mapping.map(producer.getBody()->getArgument(i),
                    body->insertArgument(firstNew + i,
                                         getElementTypeOrSelf(v.getType()),
                                         v.getLoc()));
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(body);
      for (Operation &op : producer.getBody()->without_terminator())
        rewriter.clone(op, mapping);
      unsigned resultNo = cast<OpResult>(input->get()).getResultNumber();
      Value value = mapping.lookupOrDefault(
          producer.getBody()->getTerminator()->getOperand(resultNo));
      rewriter.replaceAllUsesWith(body->getArgument(argNo), value);
      body->eraseArgument(argNo);
      rewriter.replaceOp(reader, fused.getResults());
      return success();
    }
    return failure();
  }
};

/// A transposing copy of the only use of a reduction's result (a
/// contraction's, most often: autograd's dK = (Q^T dS)^T) is the reduction
/// writing its result through the copy's permutation: the copy and its
/// intermediate disappear (fusion-reductions-last then puts the loops in
/// the new result's order). The accumulator must start from a fill, which
/// is made again at the copy's shape.
struct FoldCopyIntoReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp copy,
                                PatternRewriter &rewriter) const override {
    if (!isCopy(copy))
      return failure();
    AffineMap perm = copy.getIndexingMapsArray().front();
    Value t = copy.getDpsInputs()[0];
    auto producer = t.getDefiningOp<linalg::GenericOp>();
    if (!perm.isPermutation() || perm.isIdentity() || !producer ||
        !t.hasOneUse() || producer.getNumReductionLoops() == 0 ||
        producer.getNumResults() != 1 ||
        !producer.hasPureTensorSemantics() ||
        producer->hasAttr(kMaterializeAttr))
      return failure();
    AffineMap out =
        producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
    Value start = filledWith(producer.getDpsInits()[0]);
    if (!out.isProjectedPermutation() || !start)
      return failure();
    Location loc = producer.getLoc();
    Value init =
        kfuse::fillGeneric(rewriter, loc, start, copy.getDpsInits()[0])
            ->getResult(0);
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.back() = inversePermutation(perm).compose(out);
    auto moved = linalg::GenericOp::create(
        rewriter, loc, copy->getResultTypes(), producer.getDpsInputs(),
        ValueRange{init}, maps, producer.getIteratorTypesArray());
    moved->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    rewriter.cloneRegionBefore(producer.getRegion(), moved.getRegion(),
                               moved.getRegion().begin());
    rewriter.replaceOp(copy, moved->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FoldCopiesPass
    : FixpointPass<kfuse::impl::FoldCopiesBase<FoldCopiesPass>> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SliceAsGather, FoldCopyIntoReader, FoldGatherIntoReader,
                 GatherThroughProducer, CollapseOfCopy, ExpandOfCopy,
                 ReshapeOfGather<tensor::ExpandShapeOp>,
                 ReshapeOfGather<tensor::CollapseShapeOp>,
                 FoldCopyIntoReduction, ScalarsIntoBody,
                 FoldScalarProducerIntoReader,
                 ReshapeOfResourceConstant<tensor::ExpandShapeOp>,
                 ReshapeOfResourceConstant<tensor::CollapseShapeOp>>(
        &getContext());
    patterns.add<AlignedSliceAsView>(&getContext(), /*benefit=*/2);
    // (where gathers read: GatherIndices.cpp)
    populateGatherIndexPatterns(patterns);
    // (a folded select may leave an input nothing reads)
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    rewriteToFixpoint(std::move(patterns));
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
    if (asserts.empty())
      return markAllAnalysesPreserved();
    for (Operation *op : asserts)
      op->erase();
  }
};

/// Why output `init` of `generic` is not written whole (see CheckGenerics
/// in Passes.td), or an empty string.
std::string partialOutputReason(linalg::GenericOp generic, OpOperand &init) {
  AffineMap map = generic.getMatchingIndexingMap(&init);
  auto type = dyn_cast<ShapedType>(init.get().getType());
  if (!type)
    return "";
  llvm::SmallBitVector used(map.getNumDims());
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    int64_t size = type.getDimSize(i);
    std::string where = "dimension " + std::to_string(i) + " of size " +
                        (ShapedType::isDynamic(size) ? std::string("?")
                                                     : std::to_string(size));
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (used.test(dim.getPosition()))
        return where + " through d" + std::to_string(dim.getPosition()) +
               ", a loop that already indexes another dimension";
      used.set(dim.getPosition());
      continue;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(expr)) {
      if (size == 1 && c.getValue() == 0)
        continue;
      return where + " at index " + std::to_string(c.getValue()) + " only";
    }
    return where + " through a computed index";
  }
  return "";
}

struct CheckGenericsPass : kfuse::impl::CheckGenericsBase<CheckGenericsPass> {
  void runOnOperation() override {
    markAllAnalysesPreserved(); // (it only checks)
    WalkResult result = getOperation().walk([&](linalg::GenericOp generic) {
      SmallVector<utils::IteratorType> iterators =
          generic.getIteratorTypesArray();
      for (OpOperand &init : generic.getDpsInitsMutable()) {
        AffineMap map = generic.getMatchingIndexingMap(&init);
        int64_t index = init.getOperandNumber() - generic.getNumDpsInputs();
        std::string partial = partialOutputReason(generic, init);
        if (!partial.empty()) {
          generic.emitError()
              << "kfuse: output #" << index
              << " of this linalg.generic is written through "
              << AffineMapAttr::get(map) << ", which reaches only part of "
              << init.get().getType() << " (" << partial
              << "): the rest would keep the init's values, which kfuse does "
                 "not carry over. Compute the part as a tensor of its own and "
                 "tensor.insert_slice it into the init";
          return WalkResult::interrupt();
        }
        for (auto [d, kind] : llvm::enumerate(iterators)) {
          if (kind != utils::IteratorType::parallel ||
              map.isFunctionOfDim(unsigned(d)))
            continue;
          // (a "parallel" loop an output does not vary along)
          generic.emitError()
              << "kfuse: loop d" << d
              << " of this linalg.generic is \"parallel\", but output #"
              << index << " (" << AffineMapAttr::get(map)
              << ") does not vary along it: its iterations would all write "
                 "the same elements. Mark the loop \"reduction\" if the body "
                 "combines into the output";
          return WalkResult::interrupt();
        }
      }
      // A "reduction" loop every output varies along reduces nothing: each
      // iteration writes elements of its own (a parallel loop mislabelled,
      // which planning would take for a reduction's).
      for (auto [d, kind] : llvm::enumerate(iterators)) {
        if (kind != utils::IteratorType::reduction ||
            generic.getNumDpsInits() == 0 ||
            !llvm::all_of(generic.getDpsInitsMutable(), [&](OpOperand &init) {
              return generic.getMatchingIndexingMap(&init).isFunctionOfDim(
                  unsigned(d));
            }))
          continue;
        generic.emitError()
            << "kfuse: loop d" << d
            << " of this linalg.generic is \"reduction\", but every output "
               "varies along it: it reduces nothing. Mark the loop "
               "\"parallel\"";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // dense_resource constants whose blob does not hold their elements (the
    // parser takes them; translating to LLVM, or reading the data for the
    // GPU, would find out late)
    getOperation().walk([&](Operation *op) {
      for (NamedAttribute named : op->getAttrs()) {
        auto attr = dyn_cast<DenseResourceElementsAttr>(named.getValue());
        if (!attr)
          continue;
        std::string reason = resourceSizeProblem(attr);
        if (reason.empty())
          continue;
        op->emitError() << "kfuse: " << reason;
        signalPassFailure();
      }
    });
    // A tensor.expand_shape whose output_shape gives a static dimension of
    // its result another size (upstream's verifier takes it; bufferized,
    // memref.expand_shape's verifier refuses it, naming neither this op nor
    // the sizes).
    getOperation().walk([&](tensor::ExpandShapeOp expand) {
      ArrayRef<int64_t> given = expand.getStaticOutputShape();
      RankedTensorType type = expand.getResultType();
      for (auto [pos, size] : llvm::enumerate(type.getShape())) {
        if (ShapedType::isDynamic(size) || pos >= given.size() ||
            given[pos] == size)
          continue;
        InFlightDiagnostic diag = expand.emitError()
                                  << "kfuse: output_shape gives dimension "
                                  << pos << " of this tensor.expand_shape as ";
        if (ShapedType::isDynamic(given[pos]))
          diag << "a value";
        else
          diag << given[pos];
        diag << ", but its result type " << type << " has " << size
             << " there";
        signalPassFailure();
        return;
      }
    });
  }

  /// Why `attr`'s blob cannot be its elements, or an empty string.
  static std::string resourceSizeProblem(DenseResourceElementsAttr attr) {
    ShapedType type = attr.getType();
    DenseResourceElementsHandle handle = attr.getRawHandle();
    std::string key = handle.getKey().str();
    AsmResourceBlob *blob = handle.getBlob();
    if (!blob)
      return "the data of dense_resource<" + key + "> is not in the module";
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return "";
    int64_t need = type.getNumElements() *
                   ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    int64_t has = int64_t(blob->getData().size());
    if (has == need)
      return "";
    return "dense_resource<" + key + "> holds " + std::to_string(has) +
           " bytes, its type " +
           [&] {
             std::string t;
             llvm::raw_string_ostream os(t);
             os << type;
             return t;
           }() +
           " needs " + std::to_string(need);
  }
};

struct DropDeadResultsPass
    : FixpointPass<kfuse::impl::DropDeadResultsBase<DropDeadResultsPass>> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    rewriteToFixpoint(std::move(patterns));
  }
};

/// The outer of two nested reductions (see MergeNestedReductions in
/// Passes.td) and the inner one it reads, merged into one generic.
struct MergeNestedReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp outer,
                                PatternRewriter &rewriter) const override {
    // The outer one only combines its one input into its accumulator.
    Operation *outerOp = accumulatorCombiner(outer);
    if (!outerOp || outer.getNumReductionLoops() == 0 ||
        outer.getNumDpsInputs() != 1 ||
        outer.getBody()->getOperations().size() != 2 ||
        !llvm::is_contained(outerOp->getOperands(),
                            outer.getBody()->getArgument(0)))
      return rewriter.notifyMatchFailure(outer, "not a plain reduction");
    OpOperand *read = outer.getDpsInputOperand(0);
    // (or the inner result scaled by a constant: a mean of means)
    linalg::GenericOp scale = scaledBy(read->get(), outerOp);
    Value innerResult =
        scale ? scale.getDpsInputOperand(0)->get() : read->get();
    auto inner = innerResult.getDefiningOp<linalg::GenericOp>();
    if (!inner || !read->get().hasOneUse() || !innerResult.hasOneUse() ||
        inner.getNumReductionLoops() == 0 || !inner.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(outer, "no inner reduction");
    // (scaled, the outer sum must start at 0 too: the scale moves after it)
    if (scale && !startsNeutral(outer, outerOp))
      return rewriter.notifyMatchFailure(outer, "outer starts elsewhere");
    // (a contraction's result summed again stays a contraction and its sum:
    // merged, fewer threads would each do the whole product)
    if (needsContractionKernel(inner))
      return rewriter.notifyMatchFailure(outer, "inner contraction");
    Operation *innerOp = accumulatorCombiner(inner);
    if (!innerOp || innerOp->getName() != outerOp->getName() ||
        innerOp->getAttrDictionary() != outerOp->getAttrDictionary() ||
        !inner.getBody()->getOps<linalg::IndexOp>().empty())
      return rewriter.notifyMatchFailure(outer, "another combiner");
    if (!startsNeutral(inner, innerOp))
      return rewriter.notifyMatchFailure(outer, "inner starts elsewhere");
    // Outer loop j reads dimension k of the inner result, which the inner
    // generic wrote at its loop written[k].
    AffineMap readMap = outer.getMatchingIndexingMap(read);
    AffineMap writtenMap =
        inner.getMatchingIndexingMap(inner.getDpsInitOperand(0));
    if (!readMap.isPermutation() || !writtenMap.isProjectedPermutation() ||
        writtenMap.getNumResults() != readMap.getNumResults())
      return rewriter.notifyMatchFailure(outer, "maps");
    SmallVector<unsigned> innerLoopOf(outer.getNumLoops());
    for (unsigned k = 0; k < readMap.getNumResults(); ++k)
      innerLoopOf[readMap.getDimPosition(k)] = writtenMap.getDimPosition(k);
    // The merged loops: the outer result's dimensions in order, then the
    // inner generic's other loops, all reducing.
    AffineMap outMap = outer.getMatchingIndexingMap(outer.getDpsInitOperand(0));
    if (!outMap.isProjectedPermutation())
      return rewriter.notifyMatchFailure(outer, "result map");
    unsigned numLoops = inner.getNumLoops();
    SmallVector<int64_t> newPos(numLoops, -1);
    unsigned next = 0;
    for (unsigned k = 0; k < outMap.getNumResults(); ++k)
      newPos[innerLoopOf[outMap.getDimPosition(k)]] = next++;
    unsigned parallel = next;
    // The reducing loops in the order the first input that reads them
    // all through a projected permutation lays them out in memory (as the
    // builder's reduction over several axes has them): x.sum(0).sum() reads
    // x[row, col] as one reduction over (row, col), not over (col, row),
    // which is the iteration space of an elementwise sibling over x.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<unsigned> rest;
    for (unsigned l = 0; l < numLoops; ++l)
      if (newPos[l] < 0)
        rest.push_back(l);
    for (OpOperand *in : inner.getDpsInputOperands()) {
      AffineMap m = inner.getMatchingIndexingMap(in);
      auto at = [&](unsigned l) {
        return m.getResultPosition(getAffineDimExpr(l, ctx));
      };
      if (!m.isProjectedPermutation() ||
          !llvm::all_of(rest, [&](unsigned l) { return at(l).has_value(); }))
        continue;
      llvm::stable_sort(rest, [&](unsigned a, unsigned b) {
        return *at(a) < *at(b);
      });
      break;
    }
    for (unsigned l : rest)
      newPos[l] = next++;
    SmallVector<AffineExpr> dims;
    for (unsigned l = 0; l < numLoops; ++l)
      dims.push_back(getAffineDimExpr(newPos[l], ctx));
    SmallVector<AffineMap> maps;
    for (OpOperand *in : inner.getDpsInputOperands())
      maps.push_back(
          inner.getMatchingIndexingMap(in).replaceDimsAndSymbols(dims, {},
                                                                 numLoops, 0));
    // (the result at the leading loops, like the builder's reductions)
    SmallVector<AffineExpr> lead;
    for (unsigned i = 0; i < parallel; ++i)
      lead.push_back(getAffineDimExpr(i, ctx));
    maps.push_back(AffineMap::get(numLoops, 0, lead, ctx));
    SmallVector<utils::IteratorType> iters(numLoops,
                                           utils::IteratorType::reduction);
    std::fill_n(iters.begin(), parallel, utils::IteratorType::parallel);
    auto merged = linalg::GenericOp::create(
        rewriter, outer.getLoc(), outer->getResultTypes(),
        inner.getDpsInputs(), outer.getDpsInits(), maps, iters);
    merged->setDiscardableAttrs(outer->getDiscardableAttrDictionary());
    rewriter.cloneRegionBefore(inner.getRegion(), merged.getRegion(),
                               merged.getRegion().begin());
    Value result = merged->getResult(0);
    if (scale) {
      // The scale, over the merged result.
      auto type = cast<RankedTensorType>(result.getType());
      Value empty = tensor::EmptyOp::create(rewriter, outer.getLoc(),
                                            type.getShape(),
                                            type.getElementType());
      AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
      auto scaled = linalg::GenericOp::create(
          rewriter, outer.getLoc(), TypeRange{type}, ValueRange{result},
          ValueRange{empty}, ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel));
      rewriter.cloneRegionBefore(scale.getRegion(), scaled.getRegion(),
                                 scaled.getRegion().begin());
      result = scaled->getResult(0);
    }
    rewriter.replaceOp(outer, result);
    if (scale)
      rewriter.eraseOp(scale);
    rewriter.eraseOp(inner);
    return success();
  }

private:
  /// Whether the accumulator of `g` (combining with `combiner`) starts at
  /// the combiner's neutral element: a fill of that constant.
  static bool startsNeutral(linalg::GenericOp g, Operation *combiner) {
    Value value = filledWith(g.getDpsInitOperand(0)->get());
    Attribute start;
    return value && matchPattern(value, m_Constant(&start)) &&
           start == *arith::getNeutralElement(combiner);
  }

  /// The generic producing `v` when it only scales a tensor of its shape by
  /// a float constant that `combiner` commutes with: `in * c`, `c * in` or
  /// `in / c`, for a sum any c, for a max or min a positive one.
  static linalg::GenericOp scaledBy(Value v, Operation *combiner) {
    auto g = v.getDefiningOp<linalg::GenericOp>();
    if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
        g.getNumReductionLoops() != 0 ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !isa<RankedTensorType>(g.getDpsInputOperand(0)->get().getType()) ||
        g.getBody()->getOperations().size() != 2)
      return nullptr;
    Operation *op = g.getBody()->getTerminator()->getOperand(0).getDefiningOp();
    Value in = g.getBody()->getArgument(0);
    if (!op || !isa<arith::MulFOp, arith::DivFOp>(op) ||
        op->getBlock() != g.getBody())
      return nullptr;
    Value c = op->getOperand(0) == in ? op->getOperand(1) : op->getOperand(0);
    FloatAttr value;
    if (c == in || !matchPattern(c, m_Constant(&value)) ||
        (isa<arith::DivFOp>(op) && op->getOperand(0) != in))
      return nullptr;
    if (isa<arith::AddFOp>(combiner))
      return g;
    if (isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp>(combiner) &&
        value.getValue().isFiniteNonZero() && !value.getValue().isNegative())
      return g;
    return nullptr;
  }
};

struct NormalizeViewsPass
    : kfuse::impl::NormalizeViewsBase<NormalizeViewsPass> {
  using Base::Base;

  void runOnOperation() override {
    OpPassManager rounds(func::FuncOp::getOperationName());
    auto hoist = std::make_unique<HoistReshapesPass>();
    auto fold = std::make_unique<FoldCopiesPass>();
    // (the passes run as they are, so each tells whether it changed the
    // function: no fingerprint of the whole function before and after)
    HoistReshapesPass *hoisted = hoist.get();
    FoldCopiesPass *folded = fold.get();
    rounds.addPass(std::move(hoist));
    rounds.addPass(std::move(fold));
    for (unsigned round = 0; round < maxRounds; ++round) {
      if (failed(runPipeline(rounds, getOperation())))
        return signalPassFailure();
      if (!hoisted->changed && !folded->changed) {
        if (round == 0)
          markAllAnalysesPreserved(); // (nothing changed at all)
        return;
      }
    }
  }
};

struct MergeNestedReductionsPass
    : FixpointPass<
          kfuse::impl::MergeNestedReductionsBase<MergeNestedReductionsPass>> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeNestedReduction>(&getContext());
    rewriteToFixpoint(std::move(patterns));
  }
};

/// A generic with a reduction loop before a parallel one, interchanged so
/// that its parallel loops come first (see ReductionsLast in Passes.td).
struct ReductionsLastPass
    : kfuse::impl::ReductionsLastBase<ReductionsLastPass> {
  void runOnOperation() override {
    // New loop i is old loop order[i]: the parallel loops (in the order of
    // the result's dimensions where every result is written through the
    // same permutation of them), then the rest.
    auto orderOf = [](linalg::GenericOp g) {
      SmallVector<unsigned> order;
      SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
      AffineMap out = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
      bool byResult =
          out.isProjectedPermutation() &&
          out.getNumResults() == g.getNumParallelLoops() &&
          llvm::all_of(g.getDpsInitsMutable(),
                       [&](OpOperand &o) {
                         return g.getMatchingIndexingMap(&o) == out;
                       }) &&
          llvm::all_of(out.getResults(), [&](AffineExpr e) {
            return iters[cast<AffineDimExpr>(e).getPosition()] ==
                   utils::IteratorType::parallel;
          });
      if (byResult)
        for (AffineExpr e : out.getResults())
          order.push_back(cast<AffineDimExpr>(e).getPosition());
      for (bool parallel : {true, false})
        for (auto [i, it] : llvm::enumerate(iters))
          if ((it == utils::IteratorType::parallel) == parallel &&
              !(parallel && byResult))
            order.push_back(i);
      return order;
    };
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.getNumReductionLoops() > 0 && g.getNumParallelLoops() > 0 &&
          g.getNumDpsInits() > 0 && !llvm::equal(orderOf(g),
                                                 llvm::seq<unsigned>(
                                                     0, g.getNumLoops())))
        generics.push_back(g);
    });
    if (generics.empty())
      return markAllAnalysesPreserved();
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp g : generics) {
      SmallVector<unsigned> order = orderOf(g);
      rewriter.setInsertionPoint(g);
      FailureOr<linalg::GenericOp> moved =
          linalg::interchangeGenericOp(rewriter, g, order);
      if (failed(moved)) {
        g.emitError("kfuse: could not put this reduction's parallel loops "
                    "first");
        return signalPassFailure();
      }
      // linalg.index k becomes an affine.apply of every new index that
      // picks one of them: the index itself, so matchers (argmax's column)
      // see linalg.index.
      moved->getBody()->walk([&](affine::AffineApplyOp apply) {
        AffineMap map = apply.getAffineMap();
        if (map.getNumResults() != 1 || map.getNumSymbols() != 0)
          return;
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(0));
        if (!dim)
          return;
        rewriter.replaceOp(apply, apply.getOperand(dim.getPosition()));
      });
      moved->getBody()->walk([&](linalg::IndexOp index) {
        if (index.use_empty())
          rewriter.eraseOp(index);
      });
    }
  }
};

} // namespace

void kfuse::populateGatherThroughProducerPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherThroughProducer>(patterns.getContext());
}
