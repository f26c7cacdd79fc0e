//===- CpuBf16.cpp - bf16 moved as bits for the CPU JIT -------------------===//
//
// Without native bf16, the x86 backend promotes bf16 values it has to
// materialize (a select of two bf16 values, a stored bf16 constant) to f32
// and truncates back with the `__truncsfbf2` runtime call, which the JIT
// cannot resolve. Selects and stores only move bits: on the LLVM dialect,
// they are done on i16 instead.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

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

struct CpuBf16CastsPass : kfuse::impl::CpuBf16CastsBase<CpuBf16CastsPass> {
  void runOnOperation() override {
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
