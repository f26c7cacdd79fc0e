//===- FuseGroupBodies.cpp - one linalg.generic per fusion.group ----------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "fusion-fuse-group-bodies"

namespace kfuse {
#define GEN_PASS_DEF_FUSEGROUPBODIES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

/// Merges two independent elementwise generics over the same loops into one
/// multi-result generic (horizontal fusion inside a group): after producer
/// fusion, consumers that shared a producer are siblings reading the same
/// inputs, and one kernel must compute them all.
linalg::GenericOp mergeSiblings(RewriterBase &rewriter, linalg::GenericOp a,
                                linalg::GenericOp b) {
  SmallVector<Value> inputs(a.getDpsInputs());
  llvm::append_range(inputs, b.getDpsInputs());
  SmallVector<Value> inits(a.getDpsInits());
  llvm::append_range(inits, b.getDpsInits());
  SmallVector<AffineMap> maps;
  for (OpOperand *o : a.getDpsInputOperands())
    maps.push_back(a.getMatchingIndexingMap(o));
  for (OpOperand *o : b.getDpsInputOperands())
    maps.push_back(b.getMatchingIndexingMap(o));
  for (OpOperand &o : a.getDpsInitsMutable())
    maps.push_back(a.getMatchingIndexingMap(&o));
  for (OpOperand &o : b.getDpsInitsMutable())
    maps.push_back(b.getMatchingIndexingMap(&o));
  SmallVector<Type> types(a.getResultTypes());
  llvm::append_range(types, b.getResultTypes());

  rewriter.setInsertionPointAfter(b);
  auto merged = linalg::GenericOp::create(
      rewriter, a.getLoc(), types, inputs, inits, maps,
      a.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        unsigned na = a.getNumDpsInputs(), nb_ = b.getNumDpsInputs();
        unsigned oa = a.getNumDpsInits();
        IRMapping mapping;
        for (unsigned i = 0; i < na; ++i)
          mapping.map(a.getBody()->getArgument(i), args[i]);
        for (unsigned i = 0; i < nb_; ++i)
          mapping.map(b.getBody()->getArgument(i), args[na + i]);
        for (unsigned i = 0; i < oa; ++i)
          mapping.map(a.getBody()->getArgument(na + i), args[na + nb_ + i]);
        for (unsigned i = 0; i < b.getNumDpsInits(); ++i)
          mapping.map(b.getBody()->getArgument(nb_ + i),
                      args[na + nb_ + oa + i]);
        SmallVector<Value> yielded;
        for (linalg::GenericOp g : {a, b}) {
          for (Operation &op : g.getBody()->without_terminator())
            nb.clone(op, mapping);
          for (Value v : g.getBody()->getTerminator()->getOperands())
            yielded.push_back(mapping.lookupOrDefault(v));
        }
        linalg::YieldOp::create(nb, loc, yielded);
      });
  unsigned ra = a.getNumResults();
  rewriter.replaceOp(a, merged.getResults().take_front(ra));
  rewriter.replaceOp(b, merged.getResults().drop_front(ra));
  return merged;
}

/// Gives every op its own init tensor: a fill or empty tensor shared as the
/// init of two ops would make bufferization copy it on the host before the
/// kernel that computes it.
void untieSharedInits(fusion::GroupOp group) {
  for (Operation &op : group.getBodyBlock()) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (!dps)
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Operation *def = init.get().getDefiningOp();
      if (!def || init.get().hasOneUse() ||
          !(isa<tensor::EmptyOp>(def) || isFillLike(def)))
        continue;
      OpBuilder b(&op);
      IRMapping mapping;
      // A fill's own init is an empty tensor: clone that too.
      for (Value v : def->getOperands())
        if (auto empty = v.getDefiningOp<tensor::EmptyOp>())
          mapping.map(v, b.clone(*empty)->getResult(0));
      init.set(b.clone(*def, mapping)->getResult(0));
    }
  }
}

/// Row groups: an elementwise op over the full space in another loop order
/// (placed by fusion-form-groups, see alignToRowSpace) is interchanged into
/// the order of the group's reductions, which the row kernel runs every
/// full-space op in. Done before elementwise fusion, which may fold away
/// the ops that placed it; fused into its consumers, it reads in their
/// order.
LogicalResult alignLoops(fusion::GroupOp group) {
  SmallVector<Operation *> ops;
  linalg::GenericOp reduction;
  bool alongRows = llvm::any_of(group.getBodyBlock(), [](Operation &op) {
    return isReductionAlongRows(&op);
  });
  for (Operation &op : group.getBodyBlock())
    if (auto g = dyn_cast<linalg::GenericOp>(op)) {
      // (column sums beside row reductions keep their loops, see
      // rowCompatible in fusion-form-groups)
      if (alongRows && isColumnReduction(g))
        continue;
      ops.push_back(g);
      if (!reduction && g.getNumReductionLoops() > 0 &&
          g.getNumParallelLoops() > 0 && reductionsTrail(g))
        reduction = g;
    }
  if (!reduction)
    return success();
  SmallVector<int64_t> full = reduction.getStaticLoopRanges();
  llvm::DenseMap<Operation *, SmallVector<unsigned>> interchanges =
      alignToRowSpace(ops, full, reduction.getNumParallelLoops());
  IRRewriter rewriter(group.getContext());
  for (Operation *op : ops) {
    auto it = interchanges.find(op);
    if (it == interchanges.end())
      continue;
    rewriter.setInsertionPoint(op);
    if (failed(linalg::interchangeGenericOp(
            rewriter, cast<linalg::GenericOp>(op), it->second)))
      return op->emitError() << "fusion-fuse-group-bodies: cannot put the "
                                "loops of this op in the order of group '"
                             << group.getSymName() << "'";
  }
  return success();
}

bool dependsOn(linalg::GenericOp user, linalg::GenericOp producer) {
  return llvm::any_of(user->getOperands(), [&](Value v) {
    return v.getDefiningOp() == producer.getOperation();
  });
}

struct FuseGroupBodiesPass
    : kfuse::impl::FuseGroupBodiesBase<FuseGroupBodiesPass> {
  using FuseGroupBodiesBase::FuseGroupBodiesBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Inside a group every producer-consumer edge was already judged worth
    // fusing, so fuse them all.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *) { return true; });
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, &getContext());
    // (a conversion a group starts with may be read by a gather)
    populateGatherThroughProducerPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));

    WalkResult result = getOperation().walk([&](fusion::GroupOp group) {
      // (before fusion: the ops placed by planning are still there)
      if (group.getKind() != "elementwise" && failed(alignLoops(group)))
        return WalkResult::interrupt();
      if (failed(applyPatternsWithBudget(group, frozen))) {
        group.emitError() << "fusion-fuse-group-bodies: fusion of group '"
                          << group.getSymName() << "' did not converge";
        return WalkResult::interrupt();
      }
      // Folding may leave a row-wise group with nothing to reduce (an
      // arg-reduction over a unit axis is index 0 everywhere, and the search
      // feeding it dies): it is an elementwise kernel from here on.
      if (group.getKind() != "elementwise" &&
          llvm::none_of(group.getBodyBlock(), [](Operation &op) {
            auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
            return linalgOp && linalgOp.getNumReductionLoops() > 0;
          }))
        group.setKind("elementwise");
      if (group.getKind() != "elementwise") {
        untieSharedInits(group);
        // Row-wise groups keep several generics (reductions and their
        // epilogues run over different spaces); only elementwise producers
        // were folded into their consumers above.
        for (Operation &op : group.getBodyBlock())
          if (!isa<linalg::GenericOp, tensor::EmptyOp, fusion::YieldOp>(op) &&
              !op.hasTrait<OpTrait::ConstantLike>()) {
            op.emitError() << "fusion-fuse-group-bodies: '" << op.getName()
                           << "' cannot be part of reduction group '"
                           << group.getSymName() << "'";
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      }
      SmallVector<linalg::GenericOp> siblings;
      for (Operation &op : group.getBodyBlock())
        if (auto g = dyn_cast<linalg::GenericOp>(op))
          siblings.push_back(g);
      IRRewriter rewriter(group.getContext());
      while (siblings.size() > 1) {
        linalg::GenericOp a = siblings[0], b = siblings[1];
        if (dependsOn(b, a) || dependsOn(a, b) ||
            a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
            a.getNumParallelLoops() != a.getNumLoops() ||
            b.getNumParallelLoops() != b.getNumLoops())
          break;
        siblings.erase(siblings.begin(), siblings.begin() + 2);
        siblings.insert(siblings.begin(), mergeSiblings(rewriter, a, b));
      }
      if (siblings.size() == 1 &&
          failed(applyPatternsWithBudget(group, frozen))) {
        group.emitError() << "fusion-fuse-group-bodies: cleanup of group '"
                          << group.getSymName() << "' did not converge";
        return WalkResult::interrupt();
      }
      unsigned generics = 0;
      for (Operation &op : group.getBodyBlock()) {
        if (isa<linalg::GenericOp>(op)) {
          ++generics;
          continue;
        }
        if (isa<tensor::EmptyOp, fusion::YieldOp>(op) ||
            op.hasTrait<OpTrait::ConstantLike>())
          continue;
        op.emitError() << "fusion-fuse-group-bodies: '" << op.getName()
                       << "' in group '" << group.getSymName()
                       << "' cannot be part of an elementwise kernel";
        return WalkResult::interrupt();
      }
      // (none: fusion and folding left nothing to compute, e.g. min(x, +inf);
      // the group forwards its inputs and needs no kernel)
      if (generics > 1) {
        group.emitError() << "fusion-fuse-group-bodies: group '"
                          << group.getSymName() << "' still has " << generics
                          << " linalg.generic ops after fusion (expected 1)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
