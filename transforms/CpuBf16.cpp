//===- CpuBf16.cpp - bf16 moved as bits for the CPU JIT -------------------===//
//
// Without native bf16, the x86 backend promotes bf16 values it has to
// materialize (a select of two bf16 values, a stored bf16 constant) to f32
// and truncates back with the `__truncsfbf2` runtime call, which the JIT
// cannot resolve. Selects and stores only move bits: on the LLVM dialect,
// they are done on i16 instead. Arithmetic on bf16 and conversions of
// integers to bf16 (fusion-cpu-bf16-casts) go through f32 and an
// arith.truncf, which arith-expand turns into integer operations.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#define DEBUG_TYPE "fusion-cpu-bf16-bits"

namespace kfuse {
#define GEN_PASS_DEF_CPUBF16BITS
#define GEN_PASS_DEF_CPUBF16CASTS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
struct CpuBf16BitsPass : kfuse::impl::CpuBf16BitsBase<CpuBf16BitsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if ((isa<LLVM::SelectOp>(op) &&
           getElementTypeOrSelf(op->getResult(0).getType()).isBF16()) ||
          (isa<LLVM::StoreOp>(op) &&
           getElementTypeOrSelf(cast<LLVM::StoreOp>(op).getValue().getType())
               .isBF16()))
        ops.push_back(op);
    });
    if (ops.empty())
      return markAllAnalysesPreserved();
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto bitsOf = [&](Value v) -> Value {
        Type bits = b.getI16Type();
        if (auto vec = dyn_cast<VectorType>(v.getType()))
          bits = vec.clone(bits);
        return LLVM::BitcastOp::create(b, loc, bits, v);
      };
      if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
        Value s = LLVM::SelectOp::create(b, loc, select.getCondition(),
                                         bitsOf(select.getTrueValue()),
                                         bitsOf(select.getFalseValue()));
        Value back = LLVM::BitcastOp::create(b, loc, select.getType(), s);
        select.getResult().replaceAllUsesWith(back);
        select.erase();
        continue;
      }
      auto store = cast<LLVM::StoreOp>(op);
      store.getValueMutable().assign(bitsOf(store.getValue()));
    }
  }
};

bool isBf16(Type t) { return getElementTypeOrSelf(t).isBF16(); }

/// `t` with f32 in place of bf16 (scalars and shaped types).
Type widened(Type t) {
  if (!isBf16(t))
    return t;
  Type f32 = Float32Type::get(t.getContext());
  if (auto shaped = dyn_cast<ShapedType>(t))
    return shaped.clone(f32);
  return f32;
}

struct CpuBf16CastsPass : kfuse::impl::CpuBf16CastsBase<CpuBf16CastsPass> {
  void runOnOperation() override {
    // Arithmetic on bf16 (a sum accumulated in bf16, as torch-mlir writes
    // x.bfloat16().sum()): in f32, rounded to bf16 after each op, as the
    // x86 back end would promote it, without its __truncsfbf2 calls.
    SmallVector<Operation *> arithmetic;
    getOperation()->walk([&](Operation *op) {
      if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
          isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp,
              arith::ConstantOp, arith::SelectOp, arith::SIToFPOp,
              arith::UIToFPOp>(op) ||
          op->getNumRegions() != 0)
        return;
      if (llvm::any_of(op->getOperandTypes(), isBf16) ||
          llvm::any_of(op->getResultTypes(), isBf16))
        arithmetic.push_back(op);
    });
    for (Operation *op : arithmetic) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      OperationState state(loc, op->getName());
      for (Value v : op->getOperands())
        state.addOperands(isBf16(v.getType())
                              ? arith::ExtFOp::create(b, loc, widened(v.getType()), v)
                                    .getResult()
                              : v);
      for (Type t : op->getResultTypes())
        state.addTypes(widened(t));
      state.addAttributes(op->getAttrs());
      Operation *wide = b.create(state);
      for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults()))
        old.replaceAllUsesWith(
            isBf16(old.getType())
                ? arith::TruncFOp::create(b, loc, old.getType(), now).getResult()
                : now);
      op->erase();
    }
    SmallVector<Operation *> casts;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::SIToFPOp, arith::UIToFPOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isBF16())
        casts.push_back(op);
    });
    for (Operation *op : casts) {
      OpBuilder b(op);
      Type bf16 = op->getResult(0).getType();
      Type f32 = b.getF32Type();
      if (auto shaped = dyn_cast<ShapedType>(bf16))
        f32 = shaped.clone(f32);
      OperationState state(op->getLoc(), op->getName());
      state.addOperands(op->getOperands());
      state.addTypes(f32);
      Value wide = b.create(state)->getResult(0);
      Value narrow = arith::TruncFOp::create(b, op->getLoc(), bf16, wide);
      op->getResult(0).replaceAllUsesWith(narrow);
      op->erase();
    }
  }
};
} // namespace
