//===- SaturateConversions.cpp - float-to-int conversions that saturate ---===//
//
// arith.fptosi / arith.fptoui of a value outside the integer type's range
// (or NaN) is poison: the CPU's instruction gives the most negative integer,
// a GPU's cvt saturates, and LLVM may fold either way. kfuse defines them as
// saturating on both targets, NaN giving 0 (what PTX's cvt.rzi does and
// LLVM's fptosi.sat means): the conversion reads a clamped value, and
// selects give the bounds outside the range.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

namespace kfuse {
#define GEN_PASS_DEF_SATURATECONVERSIONS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// `v` (2^k or -2^k, or 0) in float type `t`: +-inf where `t` cannot hold it
/// (2^31 in f16), so that `x >= it` still holds for x past every integer.
Value powerOfTwo(OpBuilder &b, Location loc, Type t, unsigned k,
                 bool negative) {
  auto ft = cast<FloatType>(getElementTypeOrSelf(t));
  APFloat value(ft.getFloatSemantics(), 1);
  value = scalbn(value, int(k), APFloat::rmNearestTiesToEven);
  if (negative)
    value.changeSign();
  TypedAttr attr = FloatAttr::get(ft, value);
  if (auto vt = dyn_cast<VectorType>(t))
    attr = DenseElementsAttr::get(vt, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

Value splatInt(OpBuilder &b, Location loc, Type t, const APInt &v) {
  auto it = cast<IntegerType>(getElementTypeOrSelf(t));
  TypedAttr attr = IntegerAttr::get(it, v);
  if (auto vt = dyn_cast<VectorType>(t))
    attr = DenseElementsAttr::get(vt, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

struct SaturateConversionsPass
    : kfuse::impl::SaturateConversionsBase<SaturateConversionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> casts;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) &&
          !isa<TensorType>(op->getResultTypes()[0]))
        casts.push_back(op);
    });
    if (casts.empty())
      return markAllAnalysesPreserved();
    for (Operation *op : casts)
      saturate(op);
  }

  void saturate(Operation *op) {
    bool isSigned = isa<arith::FPToSIOp>(op);
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type ft = x.getType(), it = op->getResult(0).getType();
    unsigned bits = getElementTypeOrSelf(it).getIntOrFloatBitWidth();
    // In range: lo <= x < hi (x truncates toward zero: -1 < x < 0 gives 0).
    Value hi = powerOfTwo(b, loc, ft, isSigned ? bits - 1 : bits, false);
    Value above =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, hi);
    Value below;
    if (isSigned) {
      // (x < -2^(w-1); where the float type cannot hold -2^(w-1), the bound
      // is -inf and only -inf is below: x <= -inf)
      Value lo = powerOfTwo(b, loc, ft, bits - 1, true);
      APFloat bound(
          cast<FloatType>(getElementTypeOrSelf(ft)).getFloatSemantics(), 1);
      bool infinite =
          scalbn(bound, int(bits - 1), APFloat::rmNearestTiesToEven)
              .isInfinity();
      below = arith::CmpFOp::create(b, loc,
                                    infinite ? arith::CmpFPredicate::OLE
                                             : arith::CmpFPredicate::OLT,
                                    x, lo);
    } else {
      below = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLE, x,
          powerOfTwo(b, loc, ft, 0, true)); // (x <= -1)
    }
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value outside = arith::OrIOp::create(
        b, loc, arith::OrIOp::create(b, loc, above, below), nan);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(ft));
    Value safe = arith::SelectOp::create(b, loc, outside, zero, x);
    Operation *convert = b.clone(*op);
    convert->setOperand(0, safe);
    Value r = convert->getResult(0);
    APInt most = isSigned ? APInt::getSignedMaxValue(bits)
                          : APInt::getMaxValue(bits);
    APInt least = isSigned ? APInt::getSignedMinValue(bits) : APInt(bits, 0);
    r = arith::SelectOp::create(b, loc, below, splatInt(b, loc, it, least), r);
    r = arith::SelectOp::create(b, loc, above, splatInt(b, loc, it, most), r);
    op->getResult(0).replaceAllUsesWith(r);
    op->erase();
  }
};

} // namespace
