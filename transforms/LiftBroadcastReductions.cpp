//===- LiftBroadcastReductions.cpp - reductions recomputed on finer rows --===//
//
// A masked mean over a middle axis divides one reduction by another:
//
//   y[b, h] = sum_s x[b, s, h] m[b, s] / max(sum_s m[b, s], 1)
//
// The numerator reduces over rows (b, h), the count over rows (b): two row
// spaces, so two kernels, and the mask's float values are written by one and
// read by the other. The count is read by the division broadcast along h.
// Computed once per (b, h) instead of once per b, it becomes a reduction over
// the numerator's rows and columns, and the count's loads are the
// numerator's own loads of m[b, s]: one kernel, nothing written in between.
//
// A reduction R (rows P, columns C) is lifted to rows P' when:
//  - every use of its value, through elementwise ops over P that read it at
//    the same point (the clamp above), is an input of an op over P' (its
//    parallel loops) that reads it broadcast: through a map that picks
//    distinct loops of P' for P (the same for every such op);
//  - a row reduction T over rows P' and columns of C's extents meets those
//    ops (it is one of them, or they read its value, perhaps through
//    elementwise ops over P' such as an f16 sum's truncation), and reads
//    every tensor R reads at the same points, directly or through
//    elementwise producers: the lifted R loads nothing T does not load
//    already.
// R becomes a reduction over (P', C) of copies of its inputs laid out like
// the input T streams (so that the two reductions agree on which loops are
// contiguous), the elementwise ops between it and its readers run over P',
// and the readers read the result at their own points. Fusion then puts R
// in T's group, and fusion-fuse-group-bodies inlines the copies.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

#define DEBUG_TYPE "fusion-lift-broadcast-reductions"

namespace kfuse {
#define GEN_PASS_DEF_LIFTBROADCASTREDUCTIONS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// Whether a generic's body reads loop indices or gathers: its meaning
/// depends on its loops, which lifting renumbers.
bool dependsOnLoops(linalg::GenericOp g) {
  return !g.getBody()->getOps<linalg::IndexOp>().empty() ||
         kfuse::hasGatherReads(g);
}

/// Whether `map` reads through dimension expressions only (no constants or
/// sums: the loops a lifted op's inputs are read along are renumbered).
bool plainDims(AffineMap map) {
  return llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); });
}

/// Static extents of the reduction loops, in loop order.
SmallVector<int64_t> reductionExtents(linalg::GenericOp g) {
  SmallVector<int64_t> extents;
  for (auto [range, it] :
       llvm::zip(g.getStaticLoopRanges(), g.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      extents.push_back(range);
  return extents;
}

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (auto [i, e] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(e);
  return s + ")";
}

int64_t product(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// What lifting reduction `red` needs: the elementwise ops between it and its
/// readers, the readers' uses, the finer rows and where the old rows are
/// among them, and how the reduction beside it streams its input.
struct Lift {
  linalg::GenericOp red;
  SmallVector<linalg::GenericOp> rowOps;   // over the old rows, block order
  SmallVector<OpOperand *> readerUses;     // broadcast reads of their values
  SmallVector<int64_t> fine;               // the finer rows' extents
  SmallVector<unsigned> embed;             // old row i is fine row embed[i]
  AffineMap streamed;                      // host's map of its streamed input
  ShapedType streamedType;
};

struct LiftBroadcastReductionsPass
    : kfuse::impl::LiftBroadcastReductionsBase<LiftBroadcastReductionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &block = func.getBody().front();
    SmallVector<linalg::GenericOp> candidates;
    for (auto g : block.getOps<linalg::GenericOp>())
      candidates.push_back(g);
    IRRewriter rewriter(&getContext());
    llvm::DenseSet<Operation *> erased;
    bool changed = false;
    for (linalg::GenericOp g : candidates) {
      if (erased.contains(g))
        continue;
      if (std::optional<Lift> lift = analyze(g, block)) {
        apply(rewriter, *lift, erased);
        changed = true;
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// The lift of `red`, if it is a reduction read only broadcast over finer
  /// rows beside a reduction that reads its inputs already.
  std::optional<Lift> analyze(linalg::GenericOp red, Block &block) {
    if (!kfuse::isRowReductionGeneric(red) || red.getNumResults() != 1 ||
        red.getNumDpsInits() != 1 || !red.hasPureTensorSemantics() ||
        dependsOnLoops(red) || !kfuse::filledWith(red.getDpsInits()[0]))
      return std::nullopt;
    SmallVector<int64_t> rows = kfuse::parallelExtents(red);
    unsigned p = rows.size();
    AffineMap written = red.getIndexingMapMatchingResult(red->getResult(0));
    if (llvm::any_of(red.getStaticLoopRanges(), ShapedType::isDynamic) ||
        !kfuse::isLeadingLoopsMap(written, p))
      return std::nullopt;
    for (OpOperand *in : red.getDpsInputOperands())
      if (!plainDims(red.getMatchingIndexingMap(in)))
        return std::nullopt;

    Lift lift;
    lift.red = red;
    bool haveFine = false;
    SmallVector<Value> work{red->getResult(0)};
    llvm::DenseSet<Operation *> chain{red};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
        if (!user || user->getBlock() != &block || !user.isDpsInput(&use) ||
            !user.hasPureTensorSemantics() || dependsOnLoops(user))
          return std::nullopt;
        AffineMap read = user.getMatchingIndexingMap(&use);
        if (kfuse::isElementwiseGeneric(user) &&
            user.getStaticLoopRanges() == rows && read.isIdentity() &&
            user.getNumResults() == 1 &&
            user.getIndexingMapMatchingResult(user->getResult(0))
                .isIdentity()) {
          if (chain.insert(user).second) {
            for (OpOperand *in : user.getDpsInputOperands())
              if (!plainDims(user.getMatchingIndexingMap(in)))
                return std::nullopt;
            lift.rowOps.push_back(user);
            work.push_back(user->getResult(0));
          }
          continue;
        }
        // A reader over finer rows, reading the value broadcast.
        if (!kfuse::reductionsTrail(user) || read.getNumResults() != p)
          return std::nullopt;
        SmallVector<int64_t> fine = kfuse::parallelExtents(user);
        if (llvm::any_of(fine, ShapedType::isDynamic))
          return std::nullopt;
        SmallVector<unsigned> embed;
        for (auto [i, e] : llvm::enumerate(read.getResults())) {
          auto dim = dyn_cast<AffineDimExpr>(e);
          if (!dim || dim.getPosition() >= fine.size() ||
              llvm::is_contained(embed, dim.getPosition()) ||
              fine[dim.getPosition()] != rows[i])
            return std::nullopt;
          embed.push_back(dim.getPosition());
        }
        if (fine.size() <= p)
          return std::nullopt;
        if (haveFine && (fine != lift.fine || embed != lift.embed))
          return std::nullopt;
        haveFine = true;
        lift.fine = fine;
        lift.embed = embed;
        lift.readerUses.push_back(&use);
      }
    }
    if (!haveFine)
      return std::nullopt;
    llvm::sort(lift.rowOps, [](linalg::GenericOp a, linalg::GenericOp b) {
      return a->isBeforeInBlock(b);
    });

    // The reduction over the finer rows and the same columns that meets the
    // readers and reads R's inputs at the same points.
    SmallVector<int64_t> cols = reductionExtents(red);
    llvm::DenseSet<Operation *> readers;
    for (OpOperand *use : lift.readerUses)
      readers.insert(use->getOwner());
    for (linalg::GenericOp host : hostCandidates(readers, lift.fine)) {
      if (host->getBlock() != &block || chain.contains(host) ||
          !kfuse::isRowReductionGeneric(host) ||
          host.getNumResults() != 1 ||
          kfuse::parallelExtents(host) != lift.fine ||
          reductionExtents(host) != cols)
        continue;
      if (!readers.contains(host) && !meets(host, readers, lift.fine))
        continue;
      OpOperand *streamed = nullptr;
      for (OpOperand *in : host.getDpsInputOperands())
        if (host.getMatchingIndexingMap(in).isPermutation() &&
            isa<RankedTensorType>(in->get().getType())) {
          streamed = in;
          break;
        }
      if (!streamed || !readsAlready(host, lift))
        continue;
      lift.streamed = host.getMatchingIndexingMap(streamed);
      lift.streamedType = cast<ShapedType>(streamed->get().getType());
      return lift;
    }
    return std::nullopt;
  }

  /// The generics that may be the host of a lift whose readers are
  /// `readers`, in block order: the readers, and what `meets` finds walking
  /// forward, here walked back from them (the ops whose results reach a
  /// reader's rows through at most 16 elementwise ops over the finer rows).
  /// A superset of the hosts, each still checked: found without a scan of
  /// the block for each reduction (an optimizer's step over 400 parameters
  /// has 400 reductions read over finer rows, 10000 generics).
  static SmallVector<linalg::GenericOp>
  hostCandidates(const llvm::DenseSet<Operation *> &readers,
                 ArrayRef<int64_t> fine) {
    llvm::SetVector<Operation *> found;
    SmallVector<std::pair<Value, unsigned>> work;
    for (Operation *op : readers) {
      auto reader = cast<linalg::GenericOp>(op);
      found.insert(reader);
      for (OpOperand *in : reader.getDpsInputOperands())
        if (kfuse::isLeadingLoopsMap(reader.getMatchingIndexingMap(in),
                                     fine.size()))
          work.push_back({in->get(), 0});
    }
    while (!work.empty()) {
      auto [v, steps] = work.pop_back_val();
      auto def = v.getDefiningOp<linalg::GenericOp>();
      if (!def || !found.insert(def) || steps >= 16)
        continue;
      if (kfuse::isElementwiseGeneric(def) &&
          def.getStaticLoopRanges() == fine && def.getNumResults() == 1 &&
          def.getIndexingMapMatchingResult(def->getResult(0)).isIdentity())
        for (OpOperand *in : def.getDpsInputOperands())
          if (def.getMatchingIndexingMap(in).isIdentity())
            work.push_back({in->get(), steps + 1});
    }
    SmallVector<linalg::GenericOp> hosts = llvm::to_vector(llvm::map_range(
        found, [](Operation *op) { return cast<linalg::GenericOp>(op); }));
    llvm::sort(hosts, [](linalg::GenericOp a, linalg::GenericOp b) {
      return a->isBeforeInBlock(b);
    });
    return hosts;
  }

  /// Whether a reader reads `host`'s result at its own rows, as an epilogue
  /// does, directly or through elementwise ops over the rows that read it at
  /// the same point (an f16 sum's truncation from its f32 accumulator).
  static bool meets(linalg::GenericOp host,
                    const llvm::DenseSet<Operation *> &readers,
                    ArrayRef<int64_t> fine) {
    SmallVector<Value> work{host->getResult(0)};
    for (unsigned steps = 0; !work.empty() && steps < 16; ++steps) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
        if (!reader || !reader.isDpsInput(&use))
          continue;
        AffineMap read = reader.getMatchingIndexingMap(&use);
        if (readers.contains(reader) &&
            kfuse::isLeadingLoopsMap(read, fine.size()))
          return true;
        if (kfuse::isElementwiseGeneric(reader) && read.isIdentity() &&
            reader.getStaticLoopRanges() == fine &&
            reader.getNumResults() == 1 &&
            reader.getIndexingMapMatchingResult(reader->getResult(0))
                .isIdentity())
          work.push_back(reader->getResult(0));
      }
    }
    return false;
  }

  /// The map from the lifted reduction's loops (fine rows, then columns) to
  /// `red`'s loops.
  static AffineMap toOldLoops(Lift &lift) {
    MLIRContext *ctx = lift.red.getContext();
    unsigned n = lift.fine.size();
    SmallVector<AffineExpr> exprs;
    for (unsigned e : lift.embed)
      exprs.push_back(getAffineDimExpr(e, ctx));
    unsigned k = lift.red.getNumReductionLoops();
    for (unsigned j = 0; j < k; ++j)
      exprs.push_back(getAffineDimExpr(n + j, ctx));
    return AffineMap::get(n + k, 0, exprs, ctx);
  }

  /// Whether the host reads every tensor `lift.red` reads, at the points
  /// the lifted reduction would: directly, or through elementwise producers
  /// whose result maps are permutations.
  bool readsAlready(linalg::GenericOp host, Lift &lift) {
    SmallVector<std::pair<Value, AffineMap>> reads, work;
    for (OpOperand *in : host.getDpsInputOperands())
      if (isa<RankedTensorType>(in->get().getType()))
        work.push_back({in->get(), host.getMatchingIndexingMap(in)});
    llvm::DenseSet<Operation *> seen;
    while (!work.empty() && reads.size() < 64) {
      auto [v, map] = work.pop_back_val();
      reads.push_back({v, map});
      auto producer = v.getDefiningOp<linalg::GenericOp>();
      if (!producer || !kfuse::isElementwiseGeneric(producer) ||
          !seen.insert(producer).second)
        continue;
      AffineMap out =
          producer.getIndexingMapMatchingResult(cast<OpResult>(v));
      if (!out.isPermutation())
        continue;
      AffineMap toProducer = inversePermutation(out).compose(map);
      for (OpOperand *in : producer.getDpsInputOperands())
        if (isa<RankedTensorType>(in->get().getType()))
          work.push_back(
              {in->get(), producer.getMatchingIndexingMap(in).compose(
                              toProducer)});
    }
    AffineMap toOld = toOldLoops(lift);
    for (OpOperand *in : lift.red.getDpsInputOperands()) {
      if (!isa<RankedTensorType>(in->get().getType()))
        continue;
      AffineMap lifted = lift.red.getMatchingIndexingMap(in).compose(toOld);
      if (lifted.getNumResults() == 0)
        continue; // (a 0-d tensor: one element)
      if (!llvm::is_contained(reads, std::make_pair(in->get(), lifted)))
        return false;
    }
    return true;
  }

  void apply(IRRewriter &rewriter, Lift &lift,
             llvm::DenseSet<Operation *> &erased) {
    linalg::GenericOp red = lift.red;
    MLIRContext *ctx = red.getContext();
    Location loc = red.getLoc();
    unsigned n = lift.fine.size(), k = red.getNumReductionLoops();
    AffineMap toOld = toOldLoops(lift);
    // (the old rows among the fine ones: how the row ops' inputs are read)
    SmallVector<AffineExpr> oldRows;
    for (unsigned e : lift.embed)
      oldRows.push_back(getAffineDimExpr(e, ctx));
    AffineMap fineToOld = AffineMap::get(n, 0, oldRows, ctx);
    AffineMap fineId = AffineMap::getMultiDimIdentityMap(n, ctx);

    // Copies of R's inputs laid out like the host's streamed input: loops
    // over its dimensions, R's input read where the lifted reduction would.
    rewriter.setInsertionPoint(red);
    AffineMap fromStreamed = inversePermutation(lift.streamed);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : red.getDpsInputOperands()) {
      Value v = in->get();
      AffineMap lifted = red.getMatchingIndexingMap(in).compose(toOld);
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || lifted.getNumResults() == 0) {
        inputs.push_back(v);
        maps.push_back(lifted);
        continue;
      }
      unsigned rank = lift.streamedType.getRank();
      Value empty = tensor::EmptyOp::create(
          rewriter, loc, lift.streamedType.getShape(), type.getElementType());
      auto copy = linalg::GenericOp::create(
          rewriter, loc, TypeRange{empty.getType()}, ValueRange{v},
          ValueRange{empty},
          ArrayRef<AffineMap>{lifted.compose(fromStreamed),
                              AffineMap::getMultiDimIdentityMap(rank, ctx)},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          });
      inputs.push_back(copy->getResult(0));
      maps.push_back(lift.streamed);
    }
    auto resultType = cast<RankedTensorType>(red->getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, lift.fine,
                                          resultType.getElementType());
    Value init =
        kfuse::fillGeneric(rewriter, loc,
                           kfuse::filledWith(red.getDpsInits()[0]), empty)
            ->getResult(0);
    maps.push_back(AffineMap::get(
        n + k, 0, ArrayRef<AffineExpr>(fineId.getResults()), ctx));
    SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
    iters.append(k, utils::IteratorType::reduction);
    auto lifted =
        linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()},
                                  inputs, ValueRange{init}, maps, iters);
    rewriter.cloneRegionBefore(red.getRegion(), lifted.getRegion(),
                               lifted.getRegion().begin());
    SmallVector<int64_t> rows = kfuse::parallelExtents(red);
    lifted->setAttr(
        kfuse::kNoteAttr,
        rewriter.getStringAttr(
            "recomputes a reduction over " +
            shapeText(reductionExtents(red)) + " for each of the " +
            std::to_string(product(lift.fine)) + " rows " +
            shapeText(lift.fine) + " that read it broadcast, instead of " +
            (rows.empty() ? std::string("once")
                          : "once for each of " +
                                std::to_string(product(rows)) + " rows " +
                                shapeText(rows)) +
            ": the reduction over the same columns beside it loads its "
            "inputs already (fusion-lift-broadcast-reductions)"));

    // The elementwise ops between R and its readers, over the fine rows.
    IRMapping lifts;
    lifts.map(red->getResult(0), lifted->getResult(0));
    for (linalg::GenericOp op : lift.rowOps) {
      rewriter.setInsertionPoint(op);
      SmallVector<Value> ins;
      SmallVector<AffineMap> inMaps;
      for (OpOperand *in : op.getDpsInputOperands()) {
        if (Value l = lifts.lookupOrNull(in->get())) {
          ins.push_back(l);
          inMaps.push_back(fineId);
          continue;
        }
        ins.push_back(in->get());
        inMaps.push_back(op.getMatchingIndexingMap(in).compose(fineToOld));
      }
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      Value out = tensor::EmptyOp::create(rewriter, op.getLoc(), lift.fine,
                                          type.getElementType());
      inMaps.push_back(fineId);
      auto fineOp = linalg::GenericOp::create(
          rewriter, op.getLoc(), TypeRange{out.getType()}, ins,
          ValueRange{out}, inMaps,
          SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel));
      rewriter.cloneRegionBefore(op.getRegion(), fineOp.getRegion(),
                                 fineOp.getRegion().begin());
      lifts.map(op->getResult(0), fineOp->getResult(0));
    }

    // The readers read the lifted values at their own rows.
    for (OpOperand *use : lift.readerUses) {
      auto reader = cast<linalg::GenericOp>(use->getOwner());
      SmallVector<AffineMap> readerMaps = reader.getIndexingMapsArray();
      readerMaps[use->getOperandNumber()] =
          AffineMap::get(reader.getNumLoops(), 0,
                         ArrayRef<AffineExpr>(fineId.getResults()), ctx);
      rewriter.modifyOpInPlace(reader, [&] {
        use->set(lifts.lookup(use->get()));
        reader.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(readerMaps));
      });
    }
    for (linalg::GenericOp op : llvm::reverse(lift.rowOps)) {
      erased.insert(op);
      rewriter.eraseOp(op);
    }
    erased.insert(red);
    rewriter.eraseOp(red);
  }
};

} // namespace
