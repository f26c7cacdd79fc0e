//===- PicksAsGathers.cpp - one-hot sums as gathers -----------------------===//
//
// A sum over a loop j of `j == k ? f(j) : 0`, with k not depending on j, is
// f(k) where k lies in j's range and 0 elsewhere: only one term is not zero.
// Written as the sum, the pick of a cross-entropy's label logit reads the
// whole row and compares every column with the label; written as the
// gather, it reads one element a row.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#define DEBUG_TYPE "fusion-picks-as-gathers"

namespace kfuse {
#define GEN_PASS_DEF_PICKSASGATHERS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// One sum the pass rewrites, as matched in a generic's body.
struct Pick {
  unsigned loop;   // j: the reduction loop the sum picks along
  int64_t extent;  // its range
  Operation *step; // acc + sel (arith.addf or arith.addi)
  Value picked;    // f(j), the term where j == k
  Value zero;      // the term elsewhere
  Value key;       // k, compared with j as it is
  bool keyIsIndex; // whether k is an index (else an integer compared with
                   // an index_cast of j)
};

/// Whether `v` is loop `loop`'s index, or an index_cast of it to integers
/// wide enough to hold every value of the loop as a non-negative number.
bool isLoopIndex(Value v, unsigned loop, int64_t extent, bool &asIndex) {
  if (auto index = v.getDefiningOp<linalg::IndexOp>()) {
    asIndex = true;
    return index.getDim() == loop;
  }
  Operation *cast = v.getDefiningOp();
  if (!isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp>(cast))
    return false;
  auto index = cast->getOperand(0).getDefiningOp<linalg::IndexOp>();
  auto type = dyn_cast<IntegerType>(v.getType());
  if (!index || index.getDim() != loop || !type)
    return false;
  asIndex = false;
  unsigned width = type.getWidth();
  return width > 1 &&
         (width >= 64 || extent - 1 <= (int64_t(1) << (width - 1)) - 1);
}

/// Whether the body value `v` is computed without loop `loop`: from no
/// index of it and no input read along it.
bool independentOf(Value v, unsigned loop, linalg::GenericOp g,
                   DenseMap<Value, bool> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  bool result = true;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != g.getBody())
      result = false;
    else if (arg.getArgNumber() >= g.getNumDpsInputs())
      result = false; // (the accumulator)
    else
      result =
          !g.getMatchingIndexingMap(g.getDpsInputOperand(arg.getArgNumber()))
               .isFunctionOfDim(loop);
  } else if (Operation *def = v.getDefiningOp();
             def->getBlock() != g.getBody()) {
    result = true; // (defined above the generic)
  } else if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    result = index.getDim() != loop;
  } else if (def->getNumRegions() != 0 || !isPure(def)) {
    result = false;
  } else {
    result = llvm::all_of(def->getOperands(), [&](Value operand) {
      return independentOf(operand, loop, g, memo);
    });
  }
  memo[v] = result;
  return result;
}

/// Whether every op `v` is computed by in the body is pure and without
/// regions, so that it may be computed at one position instead of all.
bool computable(Value v, linalg::GenericOp g, DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v)) // (not the accumulator)
    return arg.getOwner() != g.getBody() ||
           arg.getArgNumber() < g.getNumDpsInputs();
  Operation *def = v.getDefiningOp();
  if (def->getBlock() != g.getBody())
    return true;
  if (def->getNumRegions() != 0 || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return computable(operand, g, seen);
  });
}

/// The pick `g` computes, if its body is `acc + (j == k ? f(j) : 0)`.
std::optional<Pick> matchPick(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g.getNumReductionLoops() == 0 ||
      !g.hasPureTensorSemantics())
    return std::nullopt;
  Block *body = g.getBody();
  BlockArgument acc = body->getArguments().back();
  Operation *step = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<arith::AddFOp, arith::AddIOp>(step) ||
      step->getBlock() != body || !acc.hasOneUse() || !step->hasOneUse())
    return std::nullopt;
  Value term =
      step->getOperand(0) == acc ? step->getOperand(1) : step->getOperand(0);
  if (term == acc)
    return std::nullopt;
  auto select = term.getDefiningOp<arith::SelectOp>();
  if (!select || select->getBlock() != body || !select->hasOneUse())
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp->getBlock() != body)
    return std::nullopt;
  bool eq = cmp.getPredicate() == arith::CmpIPredicate::eq;
  if (!eq && cmp.getPredicate() != arith::CmpIPredicate::ne)
    return std::nullopt;
  Value picked = eq ? select.getTrueValue() : select.getFalseValue();
  Value zero = eq ? select.getFalseValue() : select.getTrueValue();
  bool isZero = isa<arith::AddFOp>(step) ? matchPattern(zero, m_AnyZeroFloat())
                                         : matchPattern(zero, m_Zero());
  if (!isZero)
    return std::nullopt;

  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  AffineMap initMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  for (unsigned loop = 0; loop < ranges.size(); ++loop) {
    if (iterators[loop] != utils::IteratorType::reduction ||
        ShapedType::isDynamic(ranges[loop]) || ranges[loop] <= 0 ||
        initMap.isFunctionOfDim(loop))
      continue;
    for (unsigned side = 0; side < 2; ++side) {
      Value index = cmp->getOperand(side), key = cmp->getOperand(1 - side);
      bool asIndex = false;
      if (!isLoopIndex(index, loop, ranges[loop], asIndex))
        continue;
      DenseMap<Value, bool> memo;
      DenseSet<Value> seen;
      // (a key independent of the loop is computed by pure ops already)
      if (!independentOf(key, loop, g, memo) || !computable(picked, g, seen))
        continue;
      return Pick{loop, ranges[loop], step, picked, zero, key, asIndex};
    }
  }
  return std::nullopt;
}

/// The generic `g` without its loop `p.loop`: each term read where the
/// loop's index is the key (tensor.extract of the inputs read along it), and
/// 0 where the key lies outside the loop's range.
void rewritePick(linalg::GenericOp g, const Pick &p) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  unsigned loops = g.getNumLoops();
  llvm::SmallBitVector dropped(loops);
  dropped.set(p.loop);

  // Inputs read along the loop are gathered; the others stay inputs.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> keptArg(g.getNumDpsInputs(), -1);
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(in);
    if (map.isFunctionOfDim(p.loop))
      continue;
    keptArg[in->getOperandNumber()] = inputs.size();
    inputs.push_back(in->get());
    maps.push_back(compressDims(map, dropped));
  }
  OpOperand *init = g.getDpsInitOperand(0);
  AffineMap initMap = compressDims(g.getMatchingIndexingMap(init), dropped);
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  iterators.erase(iterators.begin() + p.loop);
  // Without reduction loops left, the sum's start is read as an input, not
  // as the output's old value: elementwise fusion then takes its producer
  // (a fill) as it takes any input's.
  bool parallel =
      !llvm::is_contained(iterators, utils::IteratorType::reduction);
  if (parallel) {
    inputs.push_back(init->get());
    maps.push_back(initMap);
  }
  maps.push_back(initMap);

  Value out = init->get();
  if (parallel) // (the output's old value unread)
    out = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, out),
        cast<RankedTensorType>(out.getType()).getElementType());
  auto fresh = linalg::GenericOp::create(
      b, loc, g.getResultTypes(), inputs, ValueRange{out}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Block *old = g.getBody();
        IRMapping mapping;
        // The loop indices of the new generic, in the old numbering.
        SmallVector<Value> at(loops);
        for (unsigned d = 0, n = 0; d < loops; ++d)
          if (d != p.loop)
            at[d] = linalg::IndexOp::create(nb, nloc, n++);
        for (auto [i, slot] : llvm::enumerate(keptArg))
          if (slot >= 0)
            mapping.map(old->getArgument(i), args[slot]);

        // Values computed from the body, in body order: the key's first.
        auto cloneOf = [&](Value v, auto &self) -> Value {
          if (Value done = mapping.lookupOrNull(v))
            return done;
          Operation *def = v.getDefiningOp();
          if (!def || def->getBlock() != old)
            return v; // (defined above the generic)
          if (auto index = dyn_cast<linalg::IndexOp>(def)) {
            Value value = at[index.getDim()];
            mapping.map(v, value);
            return value;
          }
          for (Value operand : def->getOperands())
            self(operand, self);
          Operation *copy = nb.clone(*def, mapping);
          return copy->getResult(cast<OpResult>(v).getResultNumber());
        };
        Value key = cloneOf(p.key, cloneOf);
        Value keyIndex =
            p.keyIsIndex
                ? key
                : arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), key)
                      .getResult();
        Value extent = arith::ConstantIndexOp::create(nb, nloc, p.extent);
        Value inRange = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, keyIndex, extent);
        Value last = arith::ConstantIndexOp::create(nb, nloc, p.extent - 1);
        // (within the loop's range wherever the key is: no guard needed)
        at[p.loop] = arith::MinUIOp::create(nb, nloc, keyIndex, last);

        // The terms' inputs read along the loop, gathered at the key.
        for (OpOperand *in : g.getDpsInputOperands()) {
          if (keptArg[in->getOperandNumber()] >= 0)
            continue;
          BlockArgument arg = old->getArgument(in->getOperandNumber());
          if (arg.use_empty())
            continue;
          AffineMap map = g.getMatchingIndexingMap(in);
          SmallVector<Value> indices;
          for (AffineExpr e : map.getResults())
            indices.push_back(affine::expandAffineExpr(nb, nloc, e, at, {}));
          mapping.map(arg,
                      tensor::ExtractOp::create(nb, nloc, in->get(), indices));
        }
        // Indices of the loop read by the terms are the key's.
        Value picked = cloneOf(p.picked, cloneOf);
        Value zero = cloneOf(p.zero, cloneOf);
        Value term = arith::SelectOp::create(nb, nloc, inRange, picked, zero);
        Value acc = parallel ? args[inputs.size() - 1] : args.back();
        IRMapping stepMapping;
        Value oldAcc = old->getArguments().back();
        for (Value operand : p.step->getOperands())
          stepMapping.map(operand, operand == oldAcc ? acc : term);
        Operation *step = nb.clone(*p.step, stepMapping);
        linalg::YieldOp::create(nb, nloc, step->getResults());
      });
  fresh->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  g->replaceAllUsesWith(fresh->getResults());
  g->erase();
}

struct PicksAsGathersPass
    : kfuse::impl::PicksAsGathersBase<PicksAsGathersPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Pick>> picks;
    getOperation().walk([&](linalg::GenericOp g) {
      if (std::optional<Pick> p = matchPick(g))
        picks.push_back({g, *p});
    });
    if (picks.empty())
      return markAllAnalysesPreserved();
    for (auto &[g, p] : picks)
      rewritePick(g, p);
  }
};

} // namespace
