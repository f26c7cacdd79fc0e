//===- AssociativeCombiners.cpp - reduction steps as associative ops ------===//
//
// A reduction's step `acc - f` is `acc + (-f)` (exactly, for floats and for
// wrapping integers), and `select(acc > f, acc, f)` on integers is
// `max(acc, f)`. Written the first way, the step has no associative combiner
// and the CUDA target runs it in order (a thread per result); written the
// second, the row kernels split it across threads.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#define DEBUG_TYPE "fusion-associative-combiners"

namespace kfuse {
#define GEN_PASS_DEF_ASSOCIATIVECOMBINERS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// The integer max/min that `select(cmpi pred(a, b), a, b)` computes, given
/// whether the select takes `a` (not `b`) where the compare holds.
Value integerExtremum(OpBuilder &b, Location loc, arith::CmpIPredicate pred,
                      bool takesFirst, Value x, Value y) {
  using P = arith::CmpIPredicate;
  // (a > b ? a : b) is max(a, b); (a > b ? b : a) is min(a, b)
  bool greater;
  bool isSigned;
  switch (pred) {
  case P::sgt:
  case P::sge:
    greater = true, isSigned = true;
    break;
  case P::slt:
  case P::sle:
    greater = false, isSigned = true;
    break;
  case P::ugt:
  case P::uge:
    greater = true, isSigned = false;
    break;
  case P::ult:
  case P::ule:
    greater = false, isSigned = false;
    break;
  default:
    return Value();
  }
  bool max = greater == takesFirst;
  if (isSigned)
    return max ? arith::MaxSIOp::create(b, loc, x, y).getResult()
               : arith::MinSIOp::create(b, loc, x, y).getResult();
  return max ? arith::MaxUIOp::create(b, loc, x, y).getResult()
             : arith::MinUIOp::create(b, loc, x, y).getResult();
}

struct AssociativeCombinersPass
    : kfuse::impl::AssociativeCombinersBase<AssociativeCombinersPass> {
  void runOnOperation() override {
    bool changed = false;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.getNumReductionLoops() == 0 || g.getNumDpsInits() != 1)
        return;
      Block *body = g.getBody();
      BlockArgument acc = body->getArguments().back();
      Operation *step = body->getTerminator()->getOperand(0).getDefiningOp();
      if (!step || step->getBlock() != body || !step->hasOneUse())
        return;
      OpBuilder b(step);
      Location loc = step->getLoc();
      Value replacement;
      if (auto sub = dyn_cast<arith::SubFOp>(step);
          sub && sub.getLhs() == acc && sub.getRhs() != acc &&
          acc.hasOneUse()) {
        Value negated = arith::NegFOp::create(b, loc, sub.getRhs(),
                                              sub.getFastmathAttr());
        replacement =
            arith::AddFOp::create(b, loc, acc, negated, sub.getFastmathAttr());
      } else if (auto sub = dyn_cast<arith::SubIOp>(step);
                 sub && sub.getLhs() == acc && sub.getRhs() != acc &&
                 acc.hasOneUse()) {
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(sub.getType()));
        replacement = arith::AddIOp::create(
            b, loc, acc, arith::SubIOp::create(b, loc, zero, sub.getRhs()));
      } else if (auto select = dyn_cast<arith::SelectOp>(step)) {
        auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
        Value t = select.getTrueValue(), f = select.getFalseValue();
        // (the accumulator read by the compare and the select only)
        if (!cmp || cmp->getBlock() != body || !cmp->hasOneUse() ||
            (t != acc && f != acc) || t == f ||
            llvm::any_of(acc.getUsers(), [&](Operation *u) {
              return u != cmp && u != select;
            }))
          return;
        bool same = cmp.getLhs() == t && cmp.getRhs() == f;
        bool swapped = cmp.getLhs() == f && cmp.getRhs() == t;
        if (!same && !swapped)
          return;
        replacement =
            integerExtremum(b, loc, cmp.getPredicate(), same, t, f);
        if (!replacement)
          return;
        step->getResult(0).replaceAllUsesWith(replacement);
        step->erase();
        cmp->erase();
        changed = true;
        return;
      }
      if (!replacement)
        return;
      step->getResult(0).replaceAllUsesWith(replacement);
      step->erase();
      changed = true;
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
