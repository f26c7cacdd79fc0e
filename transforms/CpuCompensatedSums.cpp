//===- CpuCompensatedSums.cpp - float sums on the CPU carry their error ---===//
//
// The CPU target lowers a reduction to a loop that adds one term at a time
// into the accumulator, so the rounding error of a float sum grows with the
// number of terms: the mean of 2^20 positive floats came out 5e-4 too small
// (torch sums in blocks and is within 1e-7; the CUDA target reduces in
// trees). Each float sum that is not a contraction gets a second
// accumulator, the compensation (Kahan): the low-order bits lost by each
// addition are subtracted from the next term, so the error no longer grows
// with the number of terms.
//
//   y = term - c;  t = acc + y;  c' = (t - acc) - y;  acc' = t
//
// (c' = 0 once t is infinite or NaN: the difference would be NaN and poison
// a sum IEEE addition keeps at +-inf.)
//
// The compensation starts at zero, has the shape of the sum, and is
// dropped at the end. The new ops carry no fast-math flags (reassociation
// would fold c' to zero).
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "fusion-cpu-compensated-sums"

namespace kfuse {
#define GEN_PASS_DEF_CPUCOMPENSATEDSUMS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// The float addition a reduction folds its terms into its accumulator
/// with (`acc' = acc + term`), or null.
arith::AddFOp floatSum(linalg::GenericOp g) {
  if (g.getNumReductionLoops() == 0 || !g.hasPureTensorSemantics() ||
      kfuse::isContractionGeneric(g))
    return nullptr;
  auto add = dyn_cast_or_null<arith::AddFOp>(kfuse::accumulatorCombiner(g));
  if (!add || !isa<FloatType>(add.getType()))
    return nullptr;
  return add;
}

struct CpuCompensatedSumsPass
    : kfuse::impl::CpuCompensatedSumsBase<CpuCompensatedSumsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> sums;
    getOperation().walk([&](linalg::GenericOp g) {
      if (floatSum(g))
        sums.push_back(g);
    });
    if (sums.empty())
      return markAllAnalysesPreserved();
    for (linalg::GenericOp g : sums)
      compensate(g);
  }

  void compensate(linalg::GenericOp g) {
    arith::AddFOp add = floatSum(g);
    Value acc = g.getBody()->getArguments().back();
    Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();
    OpBuilder b(g);
    Location loc = g.getLoc();
    auto type = cast<RankedTensorType>(g.getDpsInits()[0].getType());
    Type ft = type.getElementType();
    // The compensation: zeros of the sum's shape (a fill generic, as
    // normalization leaves fills).
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(tensor::getMixedSize(b, loc, g.getDpsInits()[0], d));
    Value empty = tensor::EmptyOp::create(b, loc, sizes, ft);
    Value zero =
        arith::ConstantOp::create(b, loc, ft, b.getFloatAttr(ft, 0.0));
    Value zeros = kfuse::fillGeneric(b, loc, zero, empty)->getResult(0);

    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    maps.push_back(maps.back());
    SmallVector<Value> inits{g.getDpsInits()[0], zeros};
    auto fresh = linalg::GenericOp::create(
        b, loc, TypeRange{type, zeros.getType()}, g.getDpsInputs(), inits,
        maps, g.getIteratorTypesArray());
    fresh->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    // The old body moves over; the compensation is a new last argument.
    Region &region = fresh.getRegion();
    region.takeBody(g.getRegion());
    Block *body = &region.front();
    Value comp = body->addArgument(ft, loc);
    OpBuilder nb(add);
    Value y = arith::SubFOp::create(nb, loc, term, comp);
    Value t = arith::AddFOp::create(nb, loc, acc, y);
    Value lost = arith::SubFOp::create(
        nb, loc, arith::SubFOp::create(nb, loc, t, acc), y);
    // (once the sum is infinite or NaN the difference is NaN: nothing is
    // lost that a later term could restore, and the sum stays what IEEE
    // addition makes it)
    Value inf = arith::ConstantOp::create(
        nb, loc, ft,
        nb.getFloatAttr(ft, APFloat::getInf(
                                cast<FloatType>(ft).getFloatSemantics())));
    Value finite =
        arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OLT,
                              math::AbsFOp::create(nb, loc, t), inf);
    lost = arith::SelectOp::create(
        nb, loc, finite, lost,
        arith::ConstantOp::create(nb, loc, ft, nb.getFloatAttr(ft, 0.0)));
    Operation *yield = body->getTerminator();
    add.getResult().replaceAllUsesWith(t);
    add.erase();
    OpBuilder yb(yield);
    linalg::YieldOp::create(yb, loc, ValueRange{t, lost});
    yield->erase();
    g.getResult(0).replaceAllUsesWith(fresh.getResult(0));
    g.erase();
  }
};

} // namespace
