//===- SplitFullReductions.cpp - full reductions of row-wise values -------===//
//
// A loss is often a reduction over every element of a value computed row by
// row: KL divergence sums p * (log p - log q) over a batch of rows after two
// log-softmaxes, a mean squared error follows a layer norm. The full
// reduction cannot join the rows' group (a row group runs one block per
// row, the full reduction one pass over everything), so the whole
// [rows, columns] value is written and read back: twice the traffic of the
// inputs for a loss that returns one number.
//
// Reduced row by row first, the value never leaves the row kernel: the
// reduction becomes one over the columns into a tensor of the rows (a row
// reduction of the group) and a reduction of that small tensor into the
// original accumulator:
//
//   s = sum_{i,j} t[i, j]   ->   r[i] = sum_j t[i, j];  s = sum_i r[i]
//
// The rows are the loops along which a value computed by a reduction
// reaches the terms broadcast (read through a map that drops the other
// loops), followed from the full reduction through elementwise producers.
// Floating-point sums are reassociated, as every parallel reduction is.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

#define DEBUG_TYPE "fusion-split-full-reductions"

namespace kfuse {
#define GEN_PASS_DEF_SPLITFULLREDUCTIONS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// Columns a row must have (elements reduced per row) for the rows' partial
/// results to cost at most 1/32 of what the reduction reads.
constexpr int64_t kMinRowLength = 32;

/// The loops of the full reduction `g` along which a value computed by a
/// reduction is broadcast into its terms (through elementwise producers
/// that read each other at the same point), in increasing order; empty
/// when there is none.
SmallVector<unsigned> rowLoops(linalg::GenericOp g) {
  unsigned n = g.getNumLoops();
  // (a tensor, and the map from g's loops to its dimensions)
  SmallVector<std::pair<Value, AffineMap>> work;
  for (OpOperand *in : g.getDpsInputOperands())
    if (isa<RankedTensorType>(in->get().getType()) &&
        g.getMatchingIndexingMap(in).isPermutation())
      work.push_back({in->get(), g.getMatchingIndexingMap(in)});
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty() && seen.size() < 32) {
    auto [v, toV] = work.pop_back_val();
    auto p = v.getDefiningOp<linalg::GenericOp>();
    if (!p || p.getNumReductionLoops() != 0 || !seen.insert(p).second)
      continue;
    AffineMap out =
        p.getIndexingMapMatchingResult(cast<OpResult>(v));
    if (!out.isPermutation())
      continue;
    AffineMap toP = inversePermutation(out).compose(toV);
    for (OpOperand *in : p.getDpsInputOperands()) {
      if (!isa<RankedTensorType>(in->get().getType()))
        continue;
      AffineMap m = p.getMatchingIndexingMap(in).compose(toP);
      if (m.isPermutation()) {
        work.push_back({in->get(), m});
        continue;
      }
      if (!m.isProjectedPermutation() || m.getNumResults() == 0 ||
          m.getNumResults() >= n || !kfuse::fromReduction(in->get()))
        continue;
      SmallVector<unsigned> rows;
      for (AffineExpr e : m.getResults())
        rows.push_back(cast<AffineDimExpr>(e).getPosition());
      llvm::sort(rows);
      return rows;
    }
  }
  return {};
}

struct SplitFullReductionsPass
    : kfuse::impl::SplitFullReductionsBase<SplitFullReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.getNumLoops() >= 2 && g.getNumParallelLoops() == 0 &&
          g.getNumDpsInits() == 1 && g.getNumResults() == 1 &&
          g.hasPureTensorSemantics() &&
          g.getIndexingMapMatchingResult(g->getResult(0)).getNumResults() ==
              0)
        candidates.push_back(g);
    });
    if (candidates.empty())
      return markAllAnalysesPreserved();
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp g : candidates)
      split(rewriter, g);
  }

  void split(IRRewriter &rewriter, linalg::GenericOp g) {
    // acc' = combine(acc, term) with a neutral element, acc read once.
    Operation *combiner = kfuse::accumulatorCombiner(g);
    if (!combiner)
      return;
    Value acc = g.getBody()->getArguments().back();
    TypedAttr neutral = *arith::getNeutralElement(combiner);
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    SmallVector<unsigned> rows = rowLoops(g);
    if (rows.empty())
      return;
    int64_t rowLength = 1;
    SmallVector<int64_t> rowShape;
    for (auto [l, extent] : llvm::enumerate(ranges)) {
      if (llvm::is_contained(rows, l))
        rowShape.push_back(extent);
      else
        rowLength *= extent;
    }
    if (rowLength < kMinRowLength)
      return;

    // r[rows] = the reduction over the other loops, from the neutral element.
    Location loc = g.getLoc();
    MLIRContext *ctx = g.getContext();
    Type accType = acc.getType();
    rewriter.setInsertionPoint(g);
    Value empty = tensor::EmptyOp::create(rewriter, loc, rowShape, accType);
    Value start = arith::ConstantOp::create(rewriter, loc, neutral);
    Value init =
        kfuse::fillGeneric(rewriter, loc, start, empty)->getResult(0);
    SmallVector<AffineExpr> rowExprs;
    for (unsigned l : rows)
      rowExprs.push_back(getAffineDimExpr(l, ctx));
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    maps.back() = AffineMap::get(g.getNumLoops(), 0, rowExprs, ctx);
    SmallVector<utils::IteratorType> iters(g.getNumLoops(),
                                           utils::IteratorType::reduction);
    for (unsigned l : rows)
      iters[l] = utils::IteratorType::parallel;
    auto inner = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, g.getDpsInputs(),
        ValueRange{init}, maps, iters);
    rewriter.cloneRegionBefore(g.getRegion(), inner.getRegion(),
                               inner.getRegion().begin());
    if (!kfuse::reductionsTrail(inner)) {
      // (the rows' loops first, as the row kinds expect)
      SmallVector<unsigned> order(rows);
      for (unsigned l = 0; l < g.getNumLoops(); ++l)
        if (!llvm::is_contained(rows, l))
          order.push_back(l);
      FailureOr<linalg::GenericOp> moved =
          linalg::interchangeGenericOp(rewriter, inner, order);
      if (failed(moved)) {
        rewriter.eraseOp(inner);
        return;
      }
      inner = *moved;
    }

    std::string rowCount = std::to_string(
        std::accumulate(rowShape.begin(), rowShape.end(), int64_t(1),
                        std::multiplies<int64_t>()));
    inner->setAttr(kfuse::kNoteAttr,
                   rewriter.getStringAttr(
                       "reduces each of its " + rowCount +
                       " rows here for a reduction over every element (" +
                       std::to_string(rowLength) +
                       " per row) that reads row values: the terms are not "
                       "written (fusion-split-full-reductions)"));

    // s = the original accumulator combined with every r[rows].
    unsigned k = rows.size();
    auto outer = linalg::GenericOp::create(
        rewriter, loc, g->getResultTypes(), ValueRange{inner->getResult(0)},
        g.getDpsInits(),
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(k),
                            AffineMap::get(k, 0, {}, ctx)},
        SmallVector<utils::IteratorType>(k, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange args) {
          IRMapping m;
          Value term = combiner->getOperand(0) == acc
                           ? combiner->getOperand(1)
                           : combiner->getOperand(0);
          m.map(term, args[0]);
          m.map(acc, args[1]);
          linalg::YieldOp::create(b, l, b.clone(*combiner, m)->getResult(0));
        });
    outer->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    rewriter.replaceOp(g, outer->getResults());
  }
};

} // namespace
