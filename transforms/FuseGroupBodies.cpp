//===- FuseGroupBodies.cpp - one linalg.generic per fusion.group ----------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

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

/// Row groups: an elementwise op over fewer loops than the reduction that
/// reads it, through a broadcast (BERT's position embeddings, gathered over
/// (position, hidden) and added over (batch, position, hidden)), which
/// elementwise fusion left alone because its own result alone gives one of
/// its loops an extent (see the fusion control below). The row kernel runs
/// ops over the rows or over the rows x columns only: the op is recomputed
/// over the loops of each reader instead, its linalg.index ops and its
/// inputs' maps renamed onto those loops, and the reader reads that copy at
/// each point. (A value the kernel evaluates where it reads it costs no
/// memory traffic either way.) Ops over the rows or the full space, and ops
/// whose result leaves the group, stay.
bool broadcastLowerRankOps(fusion::GroupOp group) {
  SmallVector<SmallVector<int64_t>> kept;
  for (Operation &op : group.getBodyBlock())
    if (auto g = dyn_cast<linalg::GenericOp>(op);
        g && g.getNumReductionLoops() > 0) {
      SmallVector<int64_t> rows;
      for (auto [range, it] :
           llvm::zip(g.getStaticLoopRanges(), g.getIteratorTypesArray()))
        if (it == utils::IteratorType::parallel)
          rows.push_back(range);
      kept.push_back(rows);
      kept.push_back(g.getStaticLoopRanges());
    }
  if (kept.empty())
    return false;
  SmallVector<linalg::GenericOp> candidates;
  for (Operation &op : group.getBodyBlock()) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() > 0 || g.getNumResults() != 1 ||
        llvm::is_contained(kept, g.getStaticLoopRanges()) ||
        !g.getIndexingMapsArray().back().isPermutation() ||
        g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)) ||
        g.getResult(0).use_empty())
      continue;
    bool ok = llvm::all_of(g.getResult(0).getUses(), [&](OpOperand &use) {
      auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!reader || !reader.isDpsInput(&use))
        return false;
      AffineMap map = reader.getMatchingIndexingMap(&use);
      return map.isProjectedPermutation() && !map.isPermutation();
    });
    if (ok)
      candidates.push_back(g);
  }
  IRRewriter rewriter(group.getContext());
  for (linalg::GenericOp g : candidates) {
    AffineMap toTensor = inversePermutation(g.getIndexingMapsArray().back());
    // One copy for the readers over the same loops reading g the same way
    // (a layer norm's mean, variance and output).
    SmallVector<std::tuple<SmallVector<int64_t>, AffineMap, Value>> copies;
    for (OpOperand &use : llvm::make_early_inc_range(g.getResult(0).getUses())) {
      auto reader = cast<linalg::GenericOp>(use.getOwner());
      // The reader's loops -> g's loops.
      AffineMap loops = toTensor.compose(reader.getMatchingIndexingMap(&use));
      unsigned n = reader.getNumLoops();
      auto identity = AffineMap::getMultiDimIdentityMap(n, g.getContext());
      auto readAsCopy = [&](Value copy) {
        rewriter.modifyOpInPlace(reader, [&] {
          SmallVector<AffineMap> readerMaps = reader.getIndexingMapsArray();
          readerMaps[use.getOperandNumber()] = identity;
          use.set(copy);
          reader.setIndexingMapsAttr(
              rewriter.getAffineMapArrayAttr(readerMaps));
        });
      };
      SmallVector<int64_t> ranges = reader.getStaticLoopRanges();
      auto found = llvm::find_if(copies, [&](auto &c) {
        return std::get<0>(c) == ranges && std::get<1>(c) == loops;
      });
      if (found != copies.end()) {
        readAsCopy(std::get<2>(*found));
        continue;
      }
      SmallVector<AffineMap> maps;
      for (OpOperand *in : g.getDpsInputOperands())
        maps.push_back(g.getMatchingIndexingMap(in).compose(loops));
      maps.push_back(identity);
      rewriter.setInsertionPointAfter(g);
      auto type = cast<RankedTensorType>(g.getResult(0).getType());
      Value init = tensor::EmptyOp::create(rewriter, g.getLoc(),
                                           reader.getStaticLoopRanges(),
                                           type.getElementType());
      auto copy = linalg::GenericOp::create(
          rewriter, g.getLoc(), init.getType(), g.getDpsInputs(),
          ValueRange{init}, maps,
          SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            IRMapping mapping;
            for (auto [from, to] :
                 llvm::zip(g.getBody()->getArguments(), args))
              mapping.map(from, to);
            for (Operation &op : g.getBody()->without_terminator()) {
              if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
                unsigned dim = cast<AffineDimExpr>(
                                   loops.getResult(idx.getDim()))
                                   .getPosition();
                mapping.map(idx.getResult(),
                            linalg::IndexOp::create(b, loc, dim).getResult());
                continue;
              }
              b.clone(op, mapping);
            }
            linalg::YieldOp::create(
                b, loc,
                mapping.lookupOrDefault(
                    g.getBody()->getTerminator()->getOperand(0)));
          });
      copies.emplace_back(ranges, loops, copy.getResult(0));
      readAsCopy(copy.getResult(0));
    }
    rewriter.eraseOp(g);
  }
  return !candidates.empty();
}

/// The dimensions of tensor `v` that some tensor other than a generic's
/// result gives an extent to, through the generics that compute `v` (a
/// group input gives all of its own; a gather over (b, s, h) indexed by
/// ids over (b, s) only b and s; a sum of such gathers no more). Fusion
/// inlines generics into their readers, and an extent that only a
/// generic's result gives leaves with it.
/// (`known`: the answers for the values visited so far)
llvm::SmallBitVector
anchoredDims(Value v, llvm::DenseMap<Value, llvm::SmallBitVector> &known) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  auto type = cast<ShapedType>(v.getType());
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g)
    return known[v] = llvm::SmallBitVector(type.getRank(), true);
  // (the result's dims from the generic's loops)
  AffineMap out = g.getIndexingMapMatchingResult(cast<OpResult>(v));
  llvm::SmallBitVector loops(g.getNumLoops());
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (!isa<ShapedType>(in->get().getType()))
      continue;
    llvm::SmallBitVector dims = anchoredDims(in->get(), known);
    for (auto [k, e] :
         llvm::enumerate(g.getMatchingIndexingMap(in).getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e); d && dims.test(k))
        loops.set(d.getPosition());
  }
  llvm::SmallBitVector dims(type.getRank());
  for (auto [k, e] : llvm::enumerate(out.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(e); d && loops.test(d.getPosition()))
      dims.set(k);
  return known[v] = dims;
}

/// Whether every loop of the consumer of `fused` keeps an extent once the
/// producer of `fused` is fused into it, from tensors that stay (see
/// anchoredDims): the consumer's inits, its other inputs and the
/// producer's inputs, read through the consumer's loops.
bool loopsBoundedAfterFusion(OpOperand *fused) {
  auto consumer = cast<linalg::GenericOp>(fused->getOwner());
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!producer)
    return true;
  llvm::SmallBitVector bounded(consumer.getNumLoops());
  llvm::DenseMap<Value, llvm::SmallBitVector> known;
  auto mark = [&](AffineMap map, Value v, bool all) {
    if (!isa<ShapedType>(v.getType()))
      return;
    llvm::SmallBitVector dims =
        all ? llvm::SmallBitVector(map.getNumResults(), true)
            : anchoredDims(v, known);
    for (auto [k, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e); d && dims.test(k))
        bounded.set(d.getPosition());
  };
  for (OpOperand &o : consumer->getOpOperands())
    if (&o != fused)
      mark(consumer.getMatchingIndexingMap(&o), o.get(),
           consumer.isDpsInit(&o));
  AffineMap out = producer.getIndexingMapMatchingResult(
      cast<OpResult>(fused->get()));
  if (!out.isPermutation())
    return false;
  // consumer loops -> producer loops
  AffineMap toProducer =
      inversePermutation(out).compose(consumer.getMatchingIndexingMap(fused));
  for (OpOperand *in : producer.getDpsInputOperands())
    mark(producer.getMatchingIndexingMap(in).compose(toProducer), in->get(),
         /*all=*/false);
  return bounded.all();
}

/// Elementwise fusion of a generic producer into its consumer, as upstream's
/// pattern does it, then common subexpressions of the fused body merged and
/// repeated operands read once: a value read twice by its consumer (x *
/// sigmoid(x), x of a chain) would otherwise be inlined twice, and a chain
/// of such steps would double its body at each (ten stacked SiLUs written
/// out: 17 s to compile, eleven 116 s).
struct FuseElementwiseOnce : OpRewritePattern<linalg::GenericOp> {
  FuseElementwiseOnce(MLIRContext *context,
                      std::function<bool(OpOperand *)> control)
      : OpRewritePattern(context), control(std::move(control)) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!producer || !linalg::areElementwiseOpsFusable(&operand) ||
          !control(&operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return rewriter.notifyMatchFailure(consumer, "fusion failed");
      // (the consumer's results; the producer's stay its own where read)
      for (auto [from, to] : fused->replacements)
        rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
          return use.get().getDefiningOp() != producer.getOperation();
        });
      rewriter.eraseOp(consumer);
      // (repeated operands first: their uses become one block argument,
      // and the ops on it the same)
      auto op = cast<linalg::GenericOp>(fused->fusedOp);
      FailureOr<linalg::GenericOp> deduplicated =
          linalg::deduplicateOperandsAndRemoveDeadResults(
              rewriter, op, /*removeOutputs=*/false);
      if (succeeded(deduplicated))
        op = *deduplicated;
      DominanceInfo dominance;
      eliminateCommonSubExpressions(rewriter, dominance, op);
      return success();
    }
    return failure();
  }

  std::function<bool(OpOperand *)> control;
};

/// An elementwise group fused in one step: one generic over the loops of
/// the results the group's generics give outside them, whose body holds
/// each member's body once for each point it is read at (a view: the
/// fused loops -> the member's loops; the identity for the results, a
/// bias's (d1) for a generic over the bias read through a broadcast), in
/// program order. Pairwise fusion (FuseElementwiseOnce) copies the body
/// built so far at every edge: a chain of n ops took time quadratic in n
/// (6000 generics, 33 s on a 2-core host). The steps: the members
/// (findMembers), the results kept (findKept), the views each member is
/// evaluated at (findViews), the fused op's inputs (collectInputs), and
/// its body (buildBody).
class OneStepFusion {
public:
  explicit OneStepFusion(fusion::GroupOp group)
      : group(group), ctx(group.getContext()) {}

  /// False, changing nothing, where the group does not have this form (a
  /// result over other loops, a member read through a map that is not an
  /// affine function of the fused loops, an init computed by a member);
  /// pairwise fusion then handles it.
  bool run();

private:
  bool findMembers();
  bool findKept();
  void addView(Operation *g, AffineMap v) {
    SmallVector<AffineMap> &list = views[g];
    if (!llvm::is_contained(list, v))
      list.push_back(v);
  }
  bool findViews();
  void collectInputs();
  void buildBody(OpBuilder &b, Location loc, ValueRange args);

  fusion::GroupOp group;
  MLIRContext *ctx;
  SmallVector<linalg::GenericOp> members;
  llvm::DenseSet<Operation *> inGroup;
  /// The results read by anything but a member, and their loops.
  SmallVector<OpResult> kept;
  SmallVector<int64_t> ranges;
  AffineMap identity;
  /// The views each member is evaluated at.
  llvm::DenseMap<Operation *, SmallVector<AffineMap>> views;
  /// The fused op's inputs and maps, and each (value, map) input's index.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  llvm::DenseMap<std::pair<Value, AffineMap>, unsigned> inputIndex;
};

/// The group's generics: all parallel, on tensors, none writing into an
/// init it reads or a member computes; besides them only empty tensors and
/// constants. Two at least.
bool OneStepFusion::findMembers() {
  for (Operation &op : group.getBodyBlock()) {
    if (auto g = dyn_cast<linalg::GenericOp>(op)) {
      members.push_back(g);
      continue;
    }
    if (!isa<tensor::EmptyOp, fusion::YieldOp>(op) &&
        !op.hasTrait<OpTrait::ConstantLike>())
      return false;
  }
  if (members.size() < 2)
    return false;
  for (linalg::GenericOp g : members) {
    if (g.getNumParallelLoops() != g.getNumLoops() ||
        !g.hasPureTensorSemantics() || !g.getRegion().hasOneBlock() ||
        llvm::any_of(g.getDpsInitsMutable(), [&](OpOperand &init) {
          Operation *def = init.get().getDefiningOp();
          return g.payloadUsesValueFromOperand(&init) ||
                 (def && inGroup.contains(def));
        }))
      return false;
    inGroup.insert(g);
  }
  return true;
}

/// The fused loops: those of the results read by anything but a member,
/// which must all run over them. (A result read inside a member's body, by
/// a gather, stays to the pairwise patterns, which recompute the gathered
/// producer there.)
bool OneStepFusion::findKept() {
  Block &body = group.getBodyBlock();
  for (linalg::GenericOp g : members)
    for (OpResult r : g->getResults()) {
      bool outside = false;
      for (Operation *u : r.getUsers()) {
        if (inGroup.contains(u))
          continue;
        Operation *top = body.findAncestorOpInBlock(*u);
        if (top && top != u && inGroup.contains(top))
          return false;
        outside = true;
      }
      if (outside)
        kept.push_back(r);
    }
  if (kept.empty())
    return false;
  ranges =
      cast<linalg::GenericOp>(kept.front().getOwner()).getStaticLoopRanges();
  if (llvm::any_of(kept, [&](OpResult r) {
        return cast<linalg::GenericOp>(r.getOwner()).getStaticLoopRanges() !=
               ranges;
      }))
    return false;
  identity = AffineMap::getMultiDimIdentityMap(ranges.size(), ctx);
  return true;
}

/// The views each member is evaluated at, from its readers' (members come
/// after what they read: readers first, in reverse order). A linalg.index
/// in a body reads its view's result, which must be a fused loop or a
/// constant.
bool OneStepFusion::findViews() {
  for (OpResult r : kept)
    addView(r.getOwner(), identity);
  for (linalg::GenericOp g : llvm::reverse(members))
    for (AffineMap view : views.lookup(g))
      for (OpOperand *in : g.getDpsInputOperands()) {
        auto producer = in->get().getDefiningOp<linalg::GenericOp>();
        if (!producer || !inGroup.contains(producer))
          continue;
        AffineMap out =
            producer.getIndexingMapMatchingResult(cast<OpResult>(in->get()));
        if (!out.isPermutation())
          return false;
        addView(producer, inversePermutation(out)
                              .compose(g.getMatchingIndexingMap(in))
                              .compose(view));
      }
  for (auto &[op, list] : views) {
    Block *b = cast<linalg::GenericOp>(op).getBody();
    if (!b->getOps<linalg::IndexOp>().empty() &&
        llvm::any_of(list, [](AffineMap v) {
          return llvm::any_of(v.getResults(), [](AffineExpr e) {
            return !isa<AffineDimExpr, AffineConstantExpr>(e);
          });
        }))
      return false;
  }
  return true;
}

/// The fused op's inputs: each (value, map) read from outside the members,
/// once.
void OneStepFusion::collectInputs() {
  for (linalg::GenericOp g : members)
    for (AffineMap view : views.lookup(g))
      for (OpOperand *in : g.getDpsInputOperands()) {
        if (Operation *def = in->get().getDefiningOp();
            def && inGroup.contains(def))
          continue;
        AffineMap map = g.getMatchingIndexingMap(in).compose(view);
        if (inputIndex.try_emplace({in->get(), map}, inputs.size()).second) {
          inputs.push_back(in->get());
          maps.push_back(map);
        }
      }
}

/// The fused body: each member's result at each view, as its body computed
/// it, then the kept results at the identity view yielded.
void OneStepFusion::buildBody(OpBuilder &b, Location loc, ValueRange args) {
  llvm::DenseMap<std::pair<Value, AffineMap>, Value> computed;
  for (linalg::GenericOp g : members)
    for (AffineMap view : views.lookup(g)) {
      IRMapping mapping;
      for (OpOperand *in : g.getDpsInputOperands()) {
        Value arg = g.getMatchingBlockArgument(in);
        AffineMap at = g.getMatchingIndexingMap(in).compose(view);
        auto producer = in->get().getDefiningOp<linalg::GenericOp>();
        if (producer && inGroup.contains(producer)) {
          AffineMap out =
              producer.getIndexingMapMatchingResult(cast<OpResult>(in->get()));
          mapping.map(arg,
                      computed.lookup(
                          {in->get(), inversePermutation(out).compose(at)}));
        } else {
          mapping.map(arg, args[inputIndex.lookup({in->get(), at})]);
        }
      }
      for (Operation &op : g.getBody()->without_terminator()) {
        if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
          AffineExpr e = view.getResult(idx.getDim());
          Value v = isa<AffineDimExpr>(e)
                        ? linalg::IndexOp::create(
                              b, loc, cast<AffineDimExpr>(e).getPosition())
                              .getResult()
                        : arith::ConstantIndexOp::create(
                              b, loc, cast<AffineConstantExpr>(e).getValue())
                              .getResult();
          mapping.map(idx.getResult(), v);
          continue;
        }
        b.clone(op, mapping);
      }
      for (auto [r, v] : llvm::zip(g->getResults(),
                                   g.getBody()->getTerminator()->getOperands()))
        computed[{r, view}] = mapping.lookupOrDefault(v);
    }
  SmallVector<Value> yielded;
  for (OpResult r : kept)
    yielded.push_back(computed.lookup({r, identity}));
  linalg::YieldOp::create(b, loc, yielded);
}

bool OneStepFusion::run() {
  if (!findMembers() || !findKept() || !findViews())
    return false;
  collectInputs();
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (OpResult r : kept) {
    auto g = cast<linalg::GenericOp>(r.getOwner());
    inits.push_back(g.getDpsInits()[r.getResultNumber()]);
    maps.push_back(g.getIndexingMapMatchingResult(r));
    types.push_back(r.getType());
  }
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPointAfter(members.back());
  auto fused = linalg::GenericOp::create(
      rewriter, members.back().getLoc(), types, inputs, inits, maps,
      SmallVector<utils::IteratorType>(ranges.size(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        buildBody(b, loc, args);
      });
  for (auto [r, to] : llvm::zip(kept, fused->getResults()))
    rewriter.replaceUsesWithIf(r, to, [&](OpOperand &use) {
      return !inGroup.contains(use.getOwner());
    });
  for (linalg::GenericOp g : llvm::reverse(members))
    rewriter.eraseOp(g);
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, fused);
  return true;
}

/// `group` fused in one step (see OneStepFusion); false, changing nothing,
/// where it does not have that form.
bool fuseInOneStep(fusion::GroupOp group) { return OneStepFusion(group).run(); }

/// Reduction groups (row kernels): a producer that reads a row value (a
/// reduction's result) and is read, where it is computed, by several
/// row-space ops (and perhaps yielded) stays an op of its own over the full
/// space once its body holds more than `bodyLimit` ops; the row kernel
/// evaluates it once where its readers read it. Fused, every reader would
/// get a copy: in a stack of L normalizations over the same rows (h = h +
/// f(norm(h))) reduction k's body held the whole chain from the group's
/// input, IR quadratic in L that only the row kernel's CSE made linear
/// again. (A column sum that reads the producer, or a reader through
/// another map, still gets its body: kept, the value would go to memory
/// between the rows' kernel and the columns'. Contraction groups keep
/// fusing their epilogues as before. A kept difference from a row value,
/// x - mean or exp(x - max), is copied back into the sums whose single-pass
/// forms need it in their body by the row emitter: inlineCenteredWriters.)
bool keepsSharedProducer(OpOperand *fused, unsigned bodyLimit) {
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  auto group = fused->getOwner()->getParentOfType<fusion::GroupOp>();
  if (!producer || !group || group.getKind() != "reduction" ||
      producer.getBody()->getOperations().size() <= bodyLimit)
    return false;
  Operation *reader = nullptr;
  bool several = false;
  for (OpOperand &use : producer->getUses()) {
    if (isa<fusion::YieldOp>(use.getOwner()))
      continue;
    auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!g || !g.getMatchingIndexingMap(&use).isIdentity() ||
        !reductionsTrail(g))
      return false;
    several |= reader && reader != g.getOperation();
    reader = g;
  }
  return several &&
         llvm::any_of(producer.getDpsInputs(), fromReduction);
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
    // But not a producer into a reduction whose loops, after fusion, nothing
    // but the producer's own result would give an extent (a gather indexed
    // by linalg.index: BERT's embeddings, looked up by token ids over
    // (batch, position) and stored over (batch, position, hidden)): the
    // result would stay a second result of the reduction, dead or not, and
    // the reduction would no longer be `acc = acc op f(x)`. The producer
    // stays an op of its own over the full space, which the row kernel
    // evaluates where the reductions read it.
    // Nor a long producer that several row-space ops share (see
    // keepsSharedProducer).
    auto control = [limit = unsigned(sharedBodyLimit)](OpOperand *fused) {
      auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
      if (consumer && keepsSharedProducer(fused, limit))
        return false;
      return !consumer || consumer.getNumReductionLoops() == 0 ||
             loopsBoundedAfterFusion(fused);
    };
    patterns.add<FuseElementwiseOnce>(&getContext(), control);
    // (upstream's other folds: constants and scalars into bodies, fills;
    // its own fusion of generics is FuseElementwiseOnce's)
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [control](OpOperand *fused) {
          return !fused->get().getDefiningOp<linalg::GenericOp>() &&
                 control(fused);
        });
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    // (results fusion kept because only they seemed to give some loop an
    // extent, where other operands give it too, and nothing reads)
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, &getContext());
    // (a conversion a group starts with may be read by a gather)
    populateGatherThroughProducerPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));

    WalkResult result = getOperation().walk([&](fusion::GroupOp group) {
      // (before fusion: the ops placed by planning are still there)
      if (group.getKind() != "elementwise" && failed(alignLoops(group)))
        return WalkResult::interrupt();
      if (group.getKind() == "elementwise")
        fuseInOneStep(group);
      if (failed(applyPatternsWithBudget(group, frozen, /*topDown=*/true))) {
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
        if (broadcastLowerRankOps(group) &&
            failed(applyPatternsWithBudget(group, frozen, /*topDown=*/true))) {
          group.emitError() << "fusion-fuse-group-bodies: fusion of group '"
                            << group.getSymName() << "' did not converge";
          return WalkResult::interrupt();
        }
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
      auto mergeable = [](linalg::GenericOp a, linalg::GenericOp b) {
        return !dependsOn(b, a) && !dependsOn(a, b) &&
               a.getStaticLoopRanges() == b.getStaticLoopRanges() &&
               a.getNumParallelLoops() == a.getNumLoops() &&
               b.getNumParallelLoops() == b.getNumLoops();
      };
      // (siblings over the same loops, in program order; a multi-tensor
      // group keeps one generic per space)
      bool merged = false;
      for (size_t i = 0; i < siblings.size(); ++i)
        for (size_t j = i + 1; j < siblings.size();) {
          if (!mergeable(siblings[i], siblings[j])) {
            ++j;
            continue;
          }
          siblings[i] = mergeSiblings(rewriter, siblings[i], siblings[j]);
          siblings.erase(siblings.begin() + j);
          merged = true;
        }
      if (merged && failed(applyPatternsWithBudget(group, frozen, /*topDown=*/true))) {
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
      // Several: independent generics over different loops (a multi-tensor
      // group, see fusion-form-groups), one launch with blocks for each.
      SmallVector<linalg::GenericOp> left;
      for (Operation &op : group.getBodyBlock())
        if (auto g = dyn_cast<linalg::GenericOp>(op))
          left.push_back(g);
      for (linalg::GenericOp a : left)
        for (linalg::GenericOp b : left)
          if (a != b && (dependsOn(b, a) ||
                         a.getNumParallelLoops() != a.getNumLoops() ||
                         a.getStaticLoopRanges() == b.getStaticLoopRanges())) {
            group.emitError()
                << "fusion-fuse-group-bodies: group '" << group.getSymName()
                << "' still has " << generics
                << " linalg.generic ops after fusion (expected 1, or "
                   "independent ones over different loops)";
            return WalkResult::interrupt();
          }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
