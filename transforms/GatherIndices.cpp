//===- GatherIndices.cpp - gathers read at positions the loops compute ----===//
//
// Part of fusion-fold-copies: the rewrites that analyse where a gather in a
// generic's body (tensor.extract of a tensor from outside) reads, so that a
// gather at positions the loop indices compute becomes an ordinary input.
// Front ends write pads, concats, slices and torch's index tensors this way
// (group norm's per-channel statistics and weights).
//
//  - IndexBounds: ranges of the index arithmetic in a body, from the loop
//    ranges; FoldDecidedIndexArithmetic folds the comparisons, clamps and
//    negative-index wraps they decide.
//  - loopExpr / exprBounds / simplifyInRanges / recombined: the same
//    arithmetic as affine expressions of the loop indices, simplified within
//    the loop ranges; readAtLoopIndices follows a gather through the
//    reshapes of the tensor it reads to a position at loop indices.
//  - GatherAtLoopIndicesAsInput makes such a gather an input;
//    SplitLoopForGather splits a loop i = hi * q + lo so that gathers at
//    i floordiv q or i mod q read at loop indices.
//  - InputComputedInBody: inputs whose elements the body can compute (a
//    splat, a fill of a constant, a constant integer tensor that is a
//    function of the position: PositionFunction) are computed there.
//
// The patterns run in fusion-fold-copies' pattern set (populated with
// populateGatherIndexPatterns), with the copy folds they feed and are fed
// by.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kfuse;

namespace {

/// Interval arithmetic on 64-bit bounds [lo, hi], shared by the bounds of
/// body values (IndexBounds) and of affine expressions (exprBounds); none
/// where a result could overflow or is not known.
using Range = std::optional<std::pair<int64_t, int64_t>>;

Range span(int64_t a, int64_t b) {
  return std::make_pair(std::min(a, b), std::max(a, b));
}

/// [0, n - 1] for a loop of static range n.
Range loopRange(int64_t n) {
  return ShapedType::isDynamic(n) || n <= 0 ? Range() : span(0, n - 1);
}

Range addRanges(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) {
  int64_t x, y;
  if (__builtin_add_overflow(a.first, b.first, &x) ||
      __builtin_add_overflow(a.second, b.second, &y))
    return std::nullopt;
  return span(x, y);
}

Range mulRanges(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) {
  int64_t x, y, z, w;
  if (__builtin_mul_overflow(a.first, b.first, &x) ||
      __builtin_mul_overflow(a.first, b.second, &y) ||
      __builtin_mul_overflow(a.second, b.first, &z) ||
      __builtin_mul_overflow(a.second, b.second, &w))
    return std::nullopt;
  return span(std::min({x, y, z, w}), std::max({x, y, z, w}));
}

/// floor(a / c) for a constant c > 0 (monotonic in a).
Range floorDivRange(std::pair<int64_t, int64_t> a, int64_t c) {
  return span(llvm::divideFloorSigned(a.first, c),
              llvm::divideFloorSigned(a.second, c));
}

/// a mod c for a constant c > 0 with a result in [0, c): a itself where it
/// lies there already.
Range modRange(std::pair<int64_t, int64_t> a, int64_t c) {
  return a.first >= 0 && a.second < c ? span(a.first, a.second)
                                      : span(0, c - 1);
}

/// Bounds [lo, hi] of the index and i64 values in a generic's body, from
/// its static loop ranges (linalg.index d lies in [0, N_d - 1]) and
/// constants, through the arithmetic gathers compute positions with; none
/// where a bound is unknown or could overflow.
class IndexBounds {
public:
  explicit IndexBounds(linalg::GenericOp g) : g(g) {}

  Range of(Value v, unsigned depth = 0) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    Range r = depth > 32 ? std::nullopt : compute(v, depth);
    memo[v] = r;
    return r;
  }

private:
  Range compute(Value v, unsigned depth) {
    Type t = v.getType();
    if (!t.isIndex() && !t.isInteger(64))
      return std::nullopt;
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return c.getSignificantBits() <= 64
                 ? Range(span(c.getSExtValue(), c.getSExtValue()))
                 : std::nullopt;
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
      if (idx->getParentOp() != g.getOperation())
        return std::nullopt;
      // (the loop ranges are computed at the first loop index: most bodies
      // the normalize patterns look at have none)
      if (loops.empty())
        loops = g.getStaticLoopRanges();
      return loopRange(loops[idx.getDim()]);
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
      return of(op->getOperand(0), depth + 1);
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      Range a = of(sel.getTrueValue(), depth + 1),
            b = of(sel.getFalseValue(), depth + 1);
      if (!a || !b)
        return std::nullopt;
      return span(std::min(a->first, b->first), std::max(a->second, b->second));
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    Range a = of(op->getOperand(0), depth + 1);
    Range b = of(op->getOperand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    auto [al, ah] = *a;
    auto [bl, bh] = *b;
    if (isa<arith::AddIOp>(op))
      return addRanges(*a, *b);
    if (isa<arith::SubIOp>(op)) {
      int64_t x, y;
      if (__builtin_sub_overflow(al, bh, &x) ||
          __builtin_sub_overflow(ah, bl, &y))
        return std::nullopt;
      return span(x, y);
    }
    if (isa<arith::MulIOp>(op))
      return mulRanges(*a, *b);
    if (isa<arith::MaxSIOp>(op))
      return span(std::max(al, bl), std::max(ah, bh));
    if (isa<arith::MinSIOp>(op))
      return span(std::min(al, bl), std::min(ah, bh));
    // Divisions and remainders by a positive constant.
    if (bl != bh || bl <= 0)
      return std::nullopt;
    if (isa<arith::DivSIOp>(op) || (isa<arith::DivUIOp>(op) && al >= 0))
      return span(al / bl, ah / bl); // (truncation is monotonic)
    if (isa<arith::RemUIOp>(op) && al >= 0)
      return modRange(*a, bl);
    if (isa<arith::FloorDivSIOp>(op))
      return floorDivRange(*a, bl);
    if (isa<arith::RemSIOp>(op)) {
      if (al >= 0)
        return modRange(*a, bl);
      return span(-(bl - 1), std::max<int64_t>(0, std::min(ah, bl - 1)));
    }
    return std::nullopt;
  }

  linalg::GenericOp g;
  SmallVector<int64_t> loops;
  llvm::DenseMap<Value, Range> memo;
};

/// Integer comparisons, maxima and minima in a generic's body that its loop
/// ranges decide (IndexBounds) are replaced by their value: a slice of a
/// concat no longer reads the inputs it lies outside of, clamps that never
/// clamp go, and torch's wrapping of negative indices (i < 0 ? i + n : i)
/// disappears for indices that are positions.
struct FoldDecidedIndexArithmetic : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    IndexBounds bounds(g);
    // op, the operand it always equals (read when replacing: an operand may
    // itself be decided and replaced first)
    SmallVector<std::pair<Operation *, unsigned>> decided;
    SmallVector<std::pair<Operation *, bool>> compares;
    g.getBody()->walk([&](Operation *op) {
      if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
        auto a = bounds.of(cmp.getLhs()), b = bounds.of(cmp.getRhs());
        if (!a || !b)
          return;
        using P = arith::CmpIPredicate;
        P p = cmp.getPredicate();
        bool nonneg = a->first >= 0 && b->first >= 0;
        if (nonneg) // unsigned compares of non-negative values are signed ones
          p = p == P::ult   ? P::slt
              : p == P::ule ? P::sle
              : p == P::ugt ? P::sgt
              : p == P::uge ? P::sge
                            : p;
        std::optional<bool> known;
        auto lt = [&](auto x, auto y) -> std::optional<bool> {
          if (x->second < y->first)
            return true;
          if (x->first >= y->second)
            return false;
          return std::nullopt;
        };
        switch (p) {
        case P::slt: known = lt(a, b); break;
        case P::sgt: known = lt(b, a); break;
        case P::sge:
          if (auto r = lt(a, b)) known = !*r;
          break;
        case P::sle:
          if (auto r = lt(b, a)) known = !*r;
          break;
        case P::eq:
        case P::ne:
          if (a->second < b->first || b->second < a->first)
            known = p == P::ne;
          else if (a->first == a->second && b->first == b->second)
            known = p == P::eq;
          break;
        default: break;
        }
        if (known)
          compares.push_back({op, *known});
        return;
      }
      if (isa<arith::MaxSIOp, arith::MinSIOp>(op)) {
        auto a = bounds.of(op->getOperand(0)), b = bounds.of(op->getOperand(1));
        if (!a || !b)
          return;
        bool max = isa<arith::MaxSIOp>(op);
        // the operand that always wins
        if (max ? a->first >= b->second : a->second <= b->first)
          decided.push_back({op, 0});
        else if (max ? b->first >= a->second : b->second <= a->first)
          decided.push_back({op, 1});
      }
    });
    if (decided.empty() && compares.empty())
      return failure();
    for (auto [op, operand] : decided)
      rewriter.replaceOp(op, op->getOperand(operand));
    for (auto [op, value] : compares) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, arith::ConstantIntOp::create(rewriter, op->getLoc(),
                                                           value, 1));
    }
    return success();
  }
};

/// Value `v` of `g`'s body as an affine function of g's loop indices
/// (linalg.index, constants, and integer arithmetic the bounds show cannot
/// overflow: +, -, * by a constant, division and remainder of a
/// non-negative value by a positive constant), or none.
std::optional<AffineExpr> loopExpr(Value v, linalg::GenericOp g,
                                   IndexBounds &bounds, unsigned depth = 0) {
  MLIRContext *ctx = g.getContext();
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSignificantBits() <= 64
               ? std::optional(getAffineConstantExpr(c.getSExtValue(), ctx))
               : std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 32 || !bounds.of(v))
    return std::nullopt;
  if (auto idx = dyn_cast<linalg::IndexOp>(op))
    return idx->getParentOp() == g.getOperation()
               ? std::optional(getAffineDimExpr(idx.getDim(), ctx))
               : std::nullopt;
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
    return loopExpr(op->getOperand(0), g, bounds, depth + 1);
  if (op->getNumOperands() != 2)
    return std::nullopt;
  auto a = loopExpr(op->getOperand(0), g, bounds, depth + 1);
  auto b = loopExpr(op->getOperand(1), g, bounds, depth + 1);
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::AddIOp>(op))
    return *a + *b;
  if (isa<arith::SubIOp>(op))
    return *a - *b;
  if (isa<arith::MulIOp>(op) &&
      (isa<AffineConstantExpr>(*a) || isa<AffineConstantExpr>(*b)))
    return *a * *b;
  auto divisor = dyn_cast<AffineConstantExpr>(*b);
  if (!divisor || divisor.getValue() <= 0)
    return std::nullopt;
  if (isa<arith::FloorDivSIOp>(op))
    return a->floorDiv(divisor);
  bool nonNegative = bounds.of(op->getOperand(0))->first >= 0;
  if (nonNegative && isa<arith::DivSIOp, arith::DivUIOp>(op))
    return a->floorDiv(divisor);
  if (nonNegative && isa<arith::RemSIOp, arith::RemUIOp>(op))
    return *a % divisor;
  return std::nullopt;
}

/// Bounds [lo, hi] of affine expression `e` of loops with ranges `loops`;
/// none where unknown (a dynamic range, a symbol, possible overflow).
Range exprBounds(AffineExpr e, ArrayRef<int64_t> loops) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return span(c.getValue(), c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return loopRange(loops[d.getPosition()]);
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  Range a = exprBounds(bin.getLHS(), loops), b = exprBounds(bin.getRHS(), loops);
  if (!a || !b)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return addRanges(*a, *b);
  case AffineExprKind::Mul:
    return mulRanges(*a, *b);
  case AffineExprKind::FloorDiv:
  case AffineExprKind::Mod: {
    int64_t c = b->first;
    if (c != b->second || c <= 0)
      return std::nullopt;
    return e.getKind() == AffineExprKind::Mod ? modRange(*a, c)
                                              : floorDivRange(*a, c);
  }
  default:
    return std::nullopt;
  }
}

/// Sum `e` with each pair of terms k * c * (x floordiv c) + k * (x mod c)
/// replaced by k * x: a position linearized from its own digits.
AffineExpr recombined(AffineExpr e) {
  SmallVector<AffineExpr> terms;
  std::function<void(AffineExpr)> flatten = [&](AffineExpr t) {
    if (t.getKind() == AffineExprKind::Add) {
      auto bin = cast<AffineBinaryOpExpr>(t);
      flatten(bin.getLHS());
      flatten(bin.getRHS());
      return;
    }
    terms.push_back(t);
  };
  flatten(e);
  // term = coefficient * base
  auto split = [](AffineExpr t) -> std::pair<int64_t, AffineExpr> {
    if (t.getKind() == AffineExprKind::Mul)
      if (auto c = dyn_cast<AffineConstantExpr>(
              cast<AffineBinaryOpExpr>(t).getRHS()))
        return {c.getValue(), cast<AffineBinaryOpExpr>(t).getLHS()};
    return {1, t};
  };
  bool changed = true, any = false;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < terms.size() && !changed; ++i) {
      auto [ki, div] = split(terms[i]);
      if (div.getKind() != AffineExprKind::FloorDiv)
        continue;
      auto bin = cast<AffineBinaryOpExpr>(div);
      auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (!c || c.getValue() <= 0 || ki % c.getValue() != 0)
        continue;
      int64_t k = ki / c.getValue();
      for (size_t j = 0; j < terms.size(); ++j) {
        auto [kj, mod] = split(terms[j]);
        if (j == i || kj != k || mod != bin.getLHS() % c)
          continue;
        terms[i] = bin.getLHS() * k;
        terms.erase(terms.begin() + j);
        changed = any = true;
        break;
      }
    }
  }
  if (!any)
    return e;
  AffineExpr sum = getAffineConstantExpr(0, e.getContext());
  for (AffineExpr t : terms)
    sum = sum + t;
  return sum;
}

/// `e` with the divisions and remainders its loop ranges decide folded:
/// x floordiv c is 0 and x mod c is x where 0 <= x < c (a loop split in two
/// reads (hi * c + lo) floordiv c as hi).
AffineExpr simplifyInRanges(AffineExpr e, ArrayRef<int64_t> loops) {
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return e;
  AffineExpr l = simplifyInRanges(bin.getLHS(), loops);
  AffineExpr r = simplifyInRanges(bin.getRHS(), loops);
  auto within = [&] {
    auto c = dyn_cast<AffineConstantExpr>(r);
    auto b = exprBounds(l, loops);
    return c && b && b->first >= 0 && b->second < c.getValue();
  };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return recombined(l + r);
  case AffineExprKind::Mul:
    return l * r;
  case AffineExprKind::FloorDiv:
    return within() ? getAffineConstantExpr(0, e.getContext()) : l.floorDiv(r);
  case AffineExprKind::Mod:
    return within() ? l : l % r;
  case AffineExprKind::CeilDiv:
    return l.ceilDiv(r);
  default:
    return e;
  }
}

/// The expressions that read dimensions `sizes` (a row-major group) at the
/// position loop index `d` has when it runs over all of them:
/// (d floordiv (s1 * ... * sk), ..., (d floordiv sk) mod s(k-1), d mod sk).
SmallVector<AffineExpr> delinearized(AffineExpr d, ArrayRef<int64_t> sizes) {
  SmallVector<AffineExpr> exprs(sizes.size());
  int64_t stride = 1;
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    AffineExpr e = stride == 1 ? d : d.floorDiv(stride);
    exprs[i] = i == 0 ? e : e % sizes[i];
    stride *= sizes[i];
  }
  return exprs;
}

/// Index arithmetic in a generic's body that its loop ranges reduce to one
/// loop index or a constant (loopExpr, then simplifyInRanges) is that index
/// or constant. A reader that runs over the loops of a reshape it used to
/// read through linearizes its old index from the new ones, and a gather
/// through the same reshape delinearizes it again: ((t + 8 * b) mod 8,
/// (t + 8 * b) floordiv 8) is (t, b) where t < 8 (a loss over
/// logits[:, :-1].reshape(-1, V), picking one logit a row).
struct IndexArithmeticAtLoopIndices : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    IndexBounds bounds(g);
    SmallVector<int64_t> loops; // (computed at the first candidate)
    SmallVector<std::pair<Operation *, AffineExpr>> found;
    g.getBody()->walk([&](Operation *op) {
      if (op->getNumOperands() != 2 || op->getNumResults() != 1 ||
          !op->getResult(0).getType().isIndex() ||
          !isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
               arith::DivUIOp, arith::FloorDivSIOp, arith::RemSIOp,
               arith::RemUIOp>(op))
        return;
      std::optional<AffineExpr> e = loopExpr(op->getResult(0), g, bounds);
      if (!e)
        return;
      if (loops.empty())
        loops = g.getStaticLoopRanges();
      AffineExpr simple = simplifyInRanges(*e, loops);
      if (isa<AffineDimExpr, AffineConstantExpr>(simple))
        found.push_back({op, simple});
    });
    if (found.empty())
      return failure();
    for (auto [op, e] : found) {
      rewriter.setInsertionPoint(op);
      Value v = isa<AffineDimExpr>(e)
                    ? Value(linalg::IndexOp::create(
                          rewriter, op->getLoc(),
                          cast<AffineDimExpr>(e).getPosition()))
                    : Value(arith::ConstantIndexOp::create(
                          rewriter, op->getLoc(),
                          cast<AffineConstantExpr>(e).getValue()));
      rewriter.replaceOp(op, v);
    }
    return success();
  }
};

/// Where gather `extract` in g's body reads, where that is at loop indices
/// and constants: the deepest source of the tensor's views (reshapes read
/// at the linearized or delinearized position: a [4, 4] view of a [16]
/// tensor read at (i floordiv 4, i mod 4) is the tensor read at i) and the
/// position there; none otherwise.
std::optional<std::pair<Value, SmallVector<AffineExpr>>>
readAtLoopIndices(linalg::GenericOp g, tensor::ExtractOp extract,
                  IndexBounds &bounds) {
  MLIRContext *ctx = g.getContext();
  if (g->isAncestor(extract.getTensor().getParentBlock()->getParentOp()) ||
      !extract.getTensor().getType().hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> loops = g.getStaticLoopRanges();
  SmallVector<AffineExpr> exprs;
  for (Value i : extract.getIndices())
    if (auto e = loopExpr(i, g, bounds))
      exprs.push_back(simplifyInRanges(*e, loops));
  if (exprs.size() != extract.getIndices().size())
    return std::nullopt;
  auto pure = [](ArrayRef<AffineExpr> exprs) {
    return llvm::all_of(exprs, [](AffineExpr e) {
      return isa<AffineDimExpr, AffineConstantExpr>(e);
    });
  };
  std::optional<std::pair<Value, SmallVector<AffineExpr>>> found;
  for (Value v = extract.getTensor();;) {
    if (pure(exprs))
      found = std::make_pair(v, exprs);
    SmallVector<AffineExpr> next;
    if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
        expand && expand.getSrcType().hasStaticShape()) {
      for (ReassociationIndices group : expand.getReassociationIndices()) {
        AffineExpr e = getAffineConstantExpr(0, ctx);
        for (int64_t r : group)
          e = e * expand.getResultType().getDimSize(r) + exprs[r];
        next.push_back(e);
      }
      v = expand.getSrc();
    } else if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
               collapse && collapse.getSrcType().hasStaticShape()) {
      for (auto [e, group] :
           llvm::zip(exprs, collapse.getReassociationIndices())) {
        SmallVector<int64_t> sizes;
        for (int64_t r : group)
          sizes.push_back(collapse.getSrcType().getDimSize(r));
        llvm::append_range(next, delinearized(e, sizes));
      }
      // (a collapse to rank 0 has no groups: its source's dimensions, all
      // of extent 1, are read at 0)
      if (collapse.getReassociationIndices().empty())
        next.assign(collapse.getSrcType().getRank(),
                    getAffineConstantExpr(0, ctx));
      v = collapse.getSrc();
    } else {
      break;
    }
    exprs.clear();
    for (AffineExpr e : next)
      exprs.push_back(simplifyInRanges(e, loops));
  }
  if (!found)
    return std::nullopt;
  // (linalg infers a loop's range from an operand indexing it directly: a
  // gather of a part of a tensor stays a gather)
  SmallVector<Value> operands(g.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(g.getMatchingIndexingMap(in));
  operands.push_back(found->first);
  maps.push_back(AffineMap::get(g.getNumLoops(), 0, found->second, ctx));
  for (OpOperand &init : g.getDpsInitsMutable()) {
    operands.push_back(init.get());
    maps.push_back(g.getMatchingIndexingMap(&init));
  }
  if (!keepsLoopRanges(g, operands, maps))
    return std::nullopt;
  return found;
}


/// A gather in a generic's body (tensor.extract of a tensor from outside)
/// at loop indices and constants -- what a slice of a concat, or a pad
/// whose padding the loop ranges rule out, leaves once its index arithmetic
/// folds -- is an input read through the map those indices make: an
/// ordinary operand, loaded like any other. Indices affine in the loop
/// indices count too where the reshapes between the tensor and its source
/// make them loop indices there (a [4, 4] view of a [16] tensor read at
/// (i floordiv 4, i mod 4) is the tensor read at i).
struct GatherAtLoopIndicesAsInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!g.hasPureTensorSemantics())
      return failure();
    MLIRContext *ctx = g.getContext();
    IndexBounds bounds(g);
    for (Operation &op : g.getBody()->without_terminator()) {
      auto extract = dyn_cast<tensor::ExtractOp>(op);
      if (!extract)
        continue;
      auto read = readAtLoopIndices(g, extract, bounds);
      if (!read)
        continue;
      auto [src, at] = *read;
      SmallVector<Value> inputs(g.getDpsInputs());
      inputs.push_back(src);
      SmallVector<AffineMap> maps;
      for (OpOperand *in : g.getDpsInputOperands())
        maps.push_back(g.getMatchingIndexingMap(in));
      maps.push_back(AffineMap::get(g.getNumLoops(), 0, at, ctx));
      // Unit dimensions read at a constant are dropped: a collapse_shape
      // that folds into the reshapes before it (an expand that added them).
      auto srcType = cast<RankedTensorType>(src.getType());
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      SmallVector<AffineExpr> kept;
      for (auto [d, e] : llvm::enumerate(at)) {
        pending.push_back(d);
        if (srcType.getDimSize(d) == 1 && isa<AffineConstantExpr>(e))
          continue;
        groups.push_back(std::move(pending));
        pending.clear();
        kept.push_back(e);
      }
      if (!groups.empty())
        llvm::append_range(groups.back(), pending);
      if (kept.size() != at.size()) {
        inputs.back() =
            tensor::CollapseShapeOp::create(rewriter, extract.getLoc(), src, groups);
        maps.back() = AffineMap::get(g.getNumLoops(), 0, kept, ctx);
      }
      linalg::GenericOp fused = withInputs(rewriter, g, inputs, maps);
      Block *body = fused.getBody();
      BlockArgument arg = body->insertArgument(
          g.getNumDpsInputs(), extract.getType(), extract.getLoc());
      rewriter.replaceOp(extract, arg);
      rewriter.replaceOp(g, fused.getResults());
      return success();
    }
    return failure();
  }
};

/// A generic whose body gathers at `i floordiv q` or `i mod q` of a loop
/// index i whose range is a multiple of q (group norm's statistics, read at
/// (n, c floordiv C/G) by ops over [N, C, H, W]) runs with that loop split
/// in two, i = hi * q + lo: the gather reads at hi or lo, plain loop
/// indices, and becomes an input (GatherAtLoopIndicesAsInput). Operands
/// indexed by i are read through an expand_shape splitting that dimension,
/// and results indexed by it are collapsed back. Only where every gather
/// the split changes ends up reading at plain loop indices and constants,
/// and no map uses i other than as a whole dimension.
struct SplitLoopForGather : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!g.hasPureTensorSemantics() ||
        !llvm::any_of(g.getBody()->without_terminator(),
                      [](Operation &op) { return isa<tensor::ExtractOp>(op); }))
      return failure();
    SmallVector<int64_t> loops = g.getStaticLoopRanges();
    if (ShapedType::isDynamicShape(loops))
      return failure();
    MLIRContext *ctx = g.getContext();
    IndexBounds bounds(g);
    // The gathers' positions, as affine functions of the loops (and the
    // tensors they read).
    SmallVector<SmallVector<AffineExpr>> gathers;
    SmallVector<RankedTensorType> gathered;
    for (Operation &op : g.getBody()->without_terminator()) {
      auto extract = dyn_cast<tensor::ExtractOp>(op);
      if (!extract ||
          g->isAncestor(extract.getTensor().getParentBlock()->getParentOp()))
        continue;
      SmallVector<AffineExpr> exprs;
      for (Value i : extract.getIndices()) {
        auto e = loopExpr(i, g, bounds);
        if (!e)
          break;
        exprs.push_back(simplifyInRanges(*e, loops));
      }
      if (exprs.size() == extract.getIndices().size()) {
        gathers.push_back(std::move(exprs));
        gathered.push_back(extract.getTensor().getType());
      }
    }
    // A loop a gather divides: i floordiv q or i mod q.
    std::optional<std::pair<unsigned, int64_t>> split;
    for (ArrayRef<AffineExpr> exprs : gathers)
      for (AffineExpr e : exprs)
        e.walk([&](AffineExpr inner) {
          auto bin = dyn_cast<AffineBinaryOpExpr>(inner);
          if (split || !bin ||
              (inner.getKind() != AffineExprKind::FloorDiv &&
               inner.getKind() != AffineExprKind::Mod))
            return;
          auto d = dyn_cast<AffineDimExpr>(bin.getLHS());
          auto q = dyn_cast<AffineConstantExpr>(bin.getRHS());
          if (d && q && q.getValue() > 1 &&
              loops[d.getPosition()] > q.getValue() &&
              loops[d.getPosition()] % q.getValue() == 0)
            split = std::make_pair(d.getPosition(), q.getValue());
        });
    if (!split)
      return failure();
    auto [dim, q] = *split;
    // (gathers that already read at loop indices become inputs first)
    if (readsAtLoopIndices(g))
      return failure();
    // Loops after the split: hi at `dim`, lo at dim + 1.
    SmallVector<int64_t> newLoops(loops);
    newLoops[dim] = loops[dim] / q;
    newLoops.insert(newLoops.begin() + dim + 1, q);
    SmallVector<AffineExpr> sub;
    for (unsigned e = 0; e < loops.size(); ++e)
      sub.push_back(e < dim ? getAffineDimExpr(e, ctx)
                    : e == dim
                        ? getAffineDimExpr(dim, ctx) * q +
                              getAffineDimExpr(dim + 1, ctx)
                        : getAffineDimExpr(e + 1, ctx));
    auto moved = [&](AffineExpr e) {
      return simplifyInRanges(e.replaceDimsAndSymbols(sub, {}), newLoops);
    };
    // Every gather reading through the split loop reads at loop indices,
    // each over the whole of its tensor's dimension: one over a part stays
    // a gather (keepsLoopRanges), and the collapse of the split generic's
    // result would merge the loops again (ReshapeOfGather), over and over
    // (x[:, :12, 0] of a [4, 13, 5] x, collapsed to [48]).
    for (auto [exprs, type] : llvm::zip(gathers, gathered)) {
      if (llvm::none_of(exprs,
                        [&](AffineExpr e) { return e.isFunctionOfDim(dim); }))
        continue;
      for (auto [pos, e] : llvm::enumerate(exprs)) {
        AffineExpr m = moved(e);
        if (!isa<AffineDimExpr, AffineConstantExpr>(m))
          return failure();
        if (auto d = dyn_cast<AffineDimExpr>(m);
            d && type.getDimSize(pos) != newLoops[d.getPosition()])
          return failure();
      }
    }
    // Operands index the split loop only as a whole dimension, which splits
    // with it.
    SmallVector<AffineMap> maps;
    SmallVector<SmallVector<ReassociationIndices>> groupings;
    for (OpOperand &operand : g->getOpOperands()) {
      SmallVector<AffineExpr> results;
      SmallVector<ReassociationIndices> grouping;
      for (AffineExpr e : g.getMatchingIndexingMap(&operand).getResults()) {
        int64_t at = results.size();
        if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == dim) {
          results.push_back(getAffineDimExpr(dim, ctx));
          results.push_back(getAffineDimExpr(dim + 1, ctx));
          grouping.push_back({at, at + 1});
          continue;
        }
        if (e.isFunctionOfDim(dim))
          return failure();
        results.push_back(moved(e));
        grouping.push_back({at});
      }
      maps.push_back(AffineMap::get(newLoops.size(), 0, results, ctx));
      groupings.push_back(std::move(grouping));
    }
    // Build: expanded operands, the split generic, collapsed results.
    Location loc = g.getLoc();
    SmallVector<Value> inputs, inits;
    SmallVector<Type> resultTypes;
    for (auto [i, operand] : llvm::enumerate(g->getOpOperands())) {
      Value v = operand.get();
      if (groupings[i].size() != size_t(maps[i].getNumResults()))
        v = expandAt(rewriter, loc, v, groupings[i], q);
      if (g.isDpsInit(&operand)) {
        inits.push_back(v);
        resultTypes.push_back(v.getType());
      } else {
        inputs.push_back(v);
      }
    }
    SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
    iters.insert(iters.begin() + dim + 1, iters[dim]);
    auto splitOp = linalg::GenericOp::create(rewriter, loc, resultTypes,
                                             inputs, inits, maps, iters);
    splitOp->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(g.getRegion(), splitOp.getRegion(),
                                splitOp.getRegion().begin());
    SmallVector<linalg::IndexOp> indices(
        splitOp.getBody()->getOps<linalg::IndexOp>());
    for (linalg::IndexOp idx : indices) {
      rewriter.setInsertionPoint(idx);
      uint64_t e = idx.getDim();
      Value v;
      if (e < dim) {
        continue;
      } else if (e > dim) {
        v = linalg::IndexOp::create(rewriter, idx.getLoc(), e + 1);
      } else {
        Value hi = linalg::IndexOp::create(rewriter, idx.getLoc(), dim);
        Value lo = linalg::IndexOp::create(rewriter, idx.getLoc(), dim + 1);
        Value scaled = arith::MulIOp::create(
            rewriter, idx.getLoc(), hi,
            arith::ConstantIndexOp::create(rewriter, idx.getLoc(), q));
        v = arith::AddIOp::create(rewriter, idx.getLoc(), scaled, lo);
      }
      rewriter.replaceOp(idx, v);
    }
    rewriter.setInsertionPointAfter(splitOp);
    SmallVector<Value> results;
    for (auto [r, init] : llvm::zip(splitOp.getResults(), g.getDpsInits())) {
      if (r.getType() == init.getType()) {
        results.push_back(r);
        continue;
      }
      unsigned n = g.getNumDpsInputs() + results.size();
      results.push_back(tensor::CollapseShapeOp::create(
          rewriter, loc, init.getType(), r, groupings[n]));
    }
    rewriter.replaceOp(g, results);
    return success();
  }

  /// `v` with each dimension its `grouping` splits in two (the split loop's
  /// hi and lo extents) expanded.
  static Value expandAt(PatternRewriter &rewriter, Location loc, Value v,
                        ArrayRef<ReassociationIndices> grouping, int64_t q) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (auto [t, group] : llvm::enumerate(grouping)) {
      if (group.size() == 1) {
        shape.push_back(type.getDimSize(t));
        continue;
      }
      shape.push_back(type.getDimSize(t) / q);
      shape.push_back(q);
    }
    return tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v,
        grouping);
  }
};

/// The elements of a constant integer tensor of static shape (dense, or a
/// resource blob of i32 / i64), in row-major order; none for other values
/// and for tensors too large to inspect.
std::optional<SmallVector<int64_t>> constantIntegers(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > (1 << 20) ||
      !type.getElementType().isSignlessInteger() ||
      type.getElementType().getIntOrFloatBitWidth() > 64)
    return std::nullopt;
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &a : dense.getValues<APInt>())
      values.push_back(a.getSExtValue());
    return values;
  }
  auto take = [&](auto blob) -> std::optional<SmallVector<int64_t>> {
    if (!blob)
      return std::nullopt;
    auto data = blob.tryGetAsArrayRef();
    if (!data || int64_t(data->size()) != type.getNumElements())
      return std::nullopt;
    values.assign(data->begin(), data->end());
    return values;
  };
  if (type.getElementType().isInteger(64))
    return take(dyn_cast<DenseI64ResourceElementsAttr>(attr));
  if (type.getElementType().isInteger(32))
    return take(dyn_cast<DenseI32ResourceElementsAttr>(attr));
  return std::nullopt;
}

/// An integer tensor whose element at position p is
/// b + a * ((p[dim] floordiv q) mod m) (no mod where m is 0): what torch's
/// index tensors for a regrouped dimension hold (group norm's c floordiv
/// C/G and c mod C/G, arange). dim is -1 where every element is b.
struct PositionFunction {
  int64_t dim = -1, b = 0, a = 0, q = 1, m = 0;
};

/// The position function `values` (row-major over `shape`) follow, found by
/// fitting its parameters to the values along the one dimension they vary
/// over and checking every element against it; none if there is none.
std::optional<PositionFunction> fitPosition(ArrayRef<int64_t> values,
                                            ArrayRef<int64_t> shape) {
  PositionFunction f;
  if (values.empty())
    return std::nullopt;
  f.b = values[0];
  int64_t stride = 1;
  SmallVector<int64_t> strides(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (auto [d, n] : llvm::enumerate(shape)) {
    // (each element against the one at position 0 along d)
    bool varies = false;
    for (int64_t i = 0, e = values.size(); i < e && !varies; ++i)
      varies = values[i] != values[i - (i / strides[d]) % n * strides[d]];
    if (!varies)
      continue;
    if (f.dim >= 0)
      return std::nullopt; // varies along two dimensions
    f.dim = d;
  }
  auto at = [&](int64_t k) { return values[k * strides[f.dim]]; };
  if (f.dim >= 0) {
    int64_t n = shape[f.dim];
    while (f.q < n && at(f.q) == f.b)
      ++f.q;
    f.a = at(f.q) - f.b;
    for (int64_t m = 2; m * f.q < n; ++m)
      if (at(m * f.q) == f.b) {
        f.m = m;
        break;
      }
  }
  auto expected = [&](int64_t k) {
    int64_t t = k / f.q;
    if (f.m)
      t %= f.m;
    return f.b + f.a * t;
  };
  for (auto [i, v] : llvm::enumerate(values)) {
    int64_t k = f.dim < 0 ? 0 : (int64_t(i) / strides[f.dim]) % shape[f.dim];
    if (v != expected(k))
      return std::nullopt;
  }
  return f;
}

/// The scalar every element of `v` holds, as a constant attribute, where `v`
/// is a splat constant tensor or a fill of a constant; null otherwise.
TypedAttr splatOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return {};
  Attribute value;
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    value = dense.getSplatValue<Attribute>();
  else if (Value scalar = filledWith(v))
    matchPattern(scalar, m_Constant(&value));
  auto typed = dyn_cast_if_present<TypedAttr>(value);
  if (!typed || typed.getType() != type.getElementType())
    return {};
  return typed;
}

/// How the element a generic reads from `input` is computed in its body
/// instead of loaded: a constant where every element is one (a splat
/// constant, a fill of a constant, an integer tensor of one value), or
/// arithmetic on linalg.index where a constant integer tensor holds a
/// function of the position (PositionFunction: torch-mlir's index tensors
/// for group norm's statistics, aranges); null where it must be loaded.
std::function<Value(OpBuilder &, Location)>
elementInBody(linalg::GenericOp g, OpOperand *input) {
  if (TypedAttr value = splatOf(input->get());
      value && arith::ConstantOp::isBuildableWith(value, value.getType()))
    return [value](OpBuilder &b, Location loc) -> Value {
      return arith::ConstantOp::create(b, loc, value);
    };
  AffineMap map = g.getMatchingIndexingMap(input);
  auto type = dyn_cast<RankedTensorType>(input->get().getType());
  if (!type || !map.isProjectedPermutation())
    return nullptr;
  std::optional<SmallVector<int64_t>> values = constantIntegers(input->get());
  if (!values)
    return nullptr;
  std::optional<PositionFunction> f = fitPosition(*values, type.getShape());
  if (!f)
    return nullptr;
  Type elementType = type.getElementType();
  std::optional<unsigned> loop;
  if (f->dim >= 0)
    loop = cast<AffineDimExpr>(map.getResult(f->dim)).getPosition();
  return [f = *f, loop, elementType](OpBuilder &b, Location loc) -> Value {
    if (!loop)
      return arith::ConstantOp::create(b, loc,
                                       b.getIntegerAttr(elementType, f.b));
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value k = linalg::IndexOp::create(b, loc, *loop);
    if (f.q > 1)
      k = arith::DivSIOp::create(b, loc, k, cst(f.q));
    if (f.m)
      k = arith::RemSIOp::create(b, loc, k, cst(f.m));
    if (f.a != 1)
      k = arith::MulIOp::create(b, loc, k, cst(f.a));
    if (f.b != 0)
      k = arith::AddIOp::create(b, loc, k, cst(f.b));
    return arith::IndexCastOp::create(b, loc, elementType, k);
  };
}

/// A generic reading a tensor whose elements it can compute (elementInBody)
/// computes them in its body instead. A tensor of one value (autograd's
/// `grad * ones` for the gradient of a sum, torch-mlir's scalar operands
/// broadcast to a tensor) becomes a constant: the body's arithmetic then
/// folds (`x * 1.0` is `x`), a reader left a copy folds into its own readers,
/// and no kernel loads a tensor of one value. An index tensor holding
/// positions becomes index arithmetic the gather it feeds is analysed
/// through (GatherAtLoopIndicesAsInput, SplitLoopForGather).
struct InputComputedInBody : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp reader,
                                PatternRewriter &rewriter) const override {
    if (!reader.hasPureTensorSemantics())
      return failure();
    for (OpOperand *input : reader.getDpsInputOperands()) {
      auto element = elementInBody(reader, input);
      if (!element || !stillCoveredWithout(reader, input))
        continue;
      Location loc = input->get().getLoc();
      withoutInput(rewriter, reader, input,
                   [&](Block *) { return element(rewriter, loc); });
      return success();
    }
    return failure();
  }
};

} // namespace

bool kfuse::readsAtLoopIndices(linalg::GenericOp g) {
  IndexBounds bounds(g);
  for (auto extract : g.getBody()->getOps<tensor::ExtractOp>())
    if (readAtLoopIndices(g, extract, bounds))
      return true;
  return false;
}

void kfuse::populateGatherIndexPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldDecidedIndexArithmetic, IndexArithmeticAtLoopIndices,
               GatherAtLoopIndicesAsInput,
               SplitLoopForGather, InputComputedInBody>(
      patterns.getContext());
}
