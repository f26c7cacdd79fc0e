//===- SetNumerics.cpp - strict or fast floating-point semantics ----------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#define DEBUG_TYPE "fusion-set-numerics"

namespace kfuse {
#define GEN_PASS_DEF_SETNUMERICS
#define GEN_PASS_DEF_IEEESQRT
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
struct SetNumericsPass : kfuse::impl::SetNumericsBase<SetNumericsPass> {
  using SetNumericsBase::SetNumericsBase;

  void runOnOperation() override {
    if (mode == "strict")
      return; // the input's flags are the contract
    if (mode != "fast") {
      getOperation().emitError()
          << "fusion-set-numerics: mode must be 'strict' or 'fast', got '"
          << mode << "'";
      return signalPassFailure();
    }
    getOperation().walk([](arith::ArithFastMathInterface op) {
      // (ops such as arith.extf carry no flags attribute until one is set)
      arith::FastMathFlagsAttr old = op.getFastMathFlagsAttr();
      arith::FastMathFlags flags =
          old ? old.getValue() : arith::FastMathFlags::none;
      op->setAttr(
          op.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(
              op->getContext(), flags | arith::FastMathFlags::contract));
    });
  }
};
/// f32 or f64, or a vector of them.
bool isIeeeFloat(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    t = v.getElementType();
  return t.isF32() || t.isF64();
}

/// The NVVM intrinsic for a correctly rounded square root, lane by lane
/// for vectors (llvm.intr.sqrt is not legal in convert-gpu-to-nvvm).
Value sqrtRn(OpBuilder &b, Location loc, Value x) {
  auto vec = dyn_cast<VectorType>(x.getType());
  Type elem = getElementTypeOrSelf(x.getType());
  auto intrinsic = b.getStringAttr(elem.isF32() ? "llvm.nvvm.sqrt.rn.f"
                                                : "llvm.nvvm.sqrt.rn.d");
  auto one = [&](Value v) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, elem, intrinsic, ValueRange{v})
        .getResult(0);
  };
  if (!vec)
    return one(x);
  if (vec.getRank() != 1 || vec.isScalable())
    return nullptr;
  SmallVector<Value> lanes;
  for (int64_t i = 0; i < vec.getNumElements(); ++i)
    lanes.push_back(one(vector::ExtractOp::create(b, loc, x, i)));
  return vector::FromElementsOp::create(b, loc, vec, lanes);
}

struct IeeeSqrtPass : kfuse::impl::IeeeSqrtBase<IeeeSqrtPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (!isa<math::SqrtOp, math::RsqrtOp>(op))
        return;
      Type t = op->getResultTypes()[0];
      auto vec = dyn_cast<VectorType>(t);
      if (isIeeeFloat(t) && (!vec || (vec.getRank() == 1 && !vec.isScalable())))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value x = op->getOperand(0);
      Value r = sqrtRn(b, loc, x);
      if (isa<math::RsqrtOp>(op)) {
        // As the CPU lowering does: 1 / sqrt(x), both correctly rounded.
        Type t = x.getType();
        Type elem = getElementTypeOrSelf(t);
        TypedAttr one = b.getFloatAttr(elem, 1.0);
        if (auto v = dyn_cast<VectorType>(t))
          one = DenseElementsAttr::get(v, one);
        r = arith::DivFOp::create(b, loc,
                                  arith::ConstantOp::create(b, loc, one), r);
      }
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
  }
};

} // namespace
