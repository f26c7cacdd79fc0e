//===- SetNumerics.cpp - numerics and GPU math rewrites -------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "fusion-set-numerics"

namespace kfuse {
#define GEN_PASS_DEF_SETNUMERICS
#define GEN_PASS_DEF_IEEESQRT
#define GEN_PASS_DEF_FASTEXP
#define GEN_PASS_DEF_FASTDIV
#define GEN_PASS_DEF_EXPANDPOWI
#define GEN_PASS_DEF_GPUINTRINSICS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
FloatAttr floatConstantOf(Value v);

struct SetNumericsPass : kfuse::impl::SetNumericsBase<SetNumericsPass> {
  using SetNumericsBase::SetNumericsBase;

  void runOnOperation() override {
    if (mode != "strict" && mode != "fast") {
      getOperation().emitError()
          << "fusion-set-numerics: mode must be 'strict' or 'fast', got '"
          << mode << "'";
      return signalPassFailure();
    }
    // x ** 0.5 is sqrt(x), as numpy and torch compute it (-0 for -0, NaN
    // for -inf, where C's pow gives +0 and +inf): before fusion-ieee-sqrt,
    // so that strict numerics round it correctly on CUDA too, and one
    // instruction where powf takes dozens.
    getOperation().walk([](math::PowFOp op) {
      FloatAttr half = floatConstantOf(op.getRhs());
      if (!half || !half.getValue().isExactlyValue(0.5))
        return;
      OpBuilder b(op);
      op.replaceAllUsesWith(
          math::SqrtOp::create(b, op.getLoc(), op.getLhs(), op.getFastmath())
              .getResult());
      op.erase();
    });
    if (mode == "strict")
      return; // the input's flags are the contract
    getOperation().walk([](arith::ArithFastMathInterface op) {
      // Casts keep their flags: there is nothing to contract in them, and
      // MLIR folds extf(truncf(x)) to x when both allow contraction, which
      // would drop a rounding the input asked for (x.to(bf16).float()).
      if (isa<arith::ExtFOp, arith::TruncFOp>(op.getOperation()))
        return;
      // (ops without flags carry no attribute until one is set)
      arith::FastMathFlagsAttr old = op.getFastMathFlagsAttr();
      arith::FastMathFlags flags =
          old ? old.getValue() : arith::FastMathFlags::none;
      flags = flags | arith::FastMathFlags::contract;
      // exp may be approximated (fusion-fast-exp: ex2.approx on CUDA), and
      // so may an f32 division (fusion-fast-div: div.full.f32)
      if (isa<math::ExpOp>(op.getOperation()) ||
          (isa<arith::DivFOp>(op.getOperation()) &&
           getElementTypeOrSelf(op->getResult(0).getType()).isF32()))
        flags = flags | arith::FastMathFlags::afn;
      op->setAttr(op.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(op->getContext(), flags));
    });
  }
};
/// f32 or f64, or a vector of them.
bool isIeeeFloat(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    t = v.getElementType();
  return t.isF32() || t.isF64();
}

/// `f(operands)` for scalars, or lane by lane for 1-D vectors of one shape
/// (NVVM intrinsics are scalar); null for other vectors.
Value lanewise(OpBuilder &b, Location loc, ValueRange xs,
               llvm::function_ref<Value(ValueRange)> f) {
  auto vec = dyn_cast<VectorType>(xs.front().getType());
  if (!vec)
    return f(xs);
  if (vec.getRank() != 1 || vec.isScalable())
    return nullptr;
  SmallVector<Value> lanes;
  for (int64_t i = 0; i < vec.getNumElements(); ++i) {
    SmallVector<Value> at;
    for (Value x : xs)
      at.push_back(vector::ExtractOp::create(b, loc, x, i));
    lanes.push_back(f(at));
  }
  return vector::FromElementsOp::create(b, loc, vec, lanes);
}

/// The NVVM intrinsic for a correctly rounded square root, lane by lane
/// for vectors (llvm.intr.sqrt is not legal in convert-gpu-to-nvvm).
Value sqrtRn(OpBuilder &b, Location loc, Value x) {
  Type elem = getElementTypeOrSelf(x.getType());
  auto intrinsic = b.getStringAttr(elem.isF32() ? "llvm.nvvm.sqrt.rn.f"
                                                : "llvm.nvvm.sqrt.rn.d");
  return lanewise(b, loc, x, [&](ValueRange v) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, elem, intrinsic, v)
        .getResult(0);
  });
}

/// Whether a result of `exp` below 2^-126 is lost in the rounding of every
/// use: each adds it to (or subtracts it from, or it from) a constant of
/// magnitude 2^-100 or more, or not finite, (1 + exp(-x) of a sigmoid, a
/// SiLU's, exp(x) + 1 of a softplus), whose half ulp is above 2^-126. Such
/// an exp may then flush its subnormal results (see kfuse::kFlushSubnormals)
/// and its users' results stay the same bit for bit. (Fast numerics set no
/// `reassoc`: the addition is not regrouped with other terms.)
bool absorbsSubnormals(math::ExpOp exp) {
  if (exp->use_empty())
    return false;
  for (OpOperand &use : exp->getUses()) {
    Operation *user = use.getOwner();
    arith::FastMathFlags flags;
    if (auto add = dyn_cast<arith::AddFOp>(user))
      flags = add.getFastmath();
    else if (auto sub = dyn_cast<arith::SubFOp>(user))
      flags = sub.getFastmath();
    else
      return false;
    if (arith::bitEnumContainsAny(flags, arith::FastMathFlags::reassoc))
      return false;
    FloatAttr c = floatConstantOf(user->getOperand(1 - use.getOperandNumber()));
    if (!c)
      return false;
    APFloat v = c.getValue();
    if (v.isFinite() && (v.isZero() || ilogb(abs(v)) < -100))
      return false;
  }
  return true;
}

struct FastExpPass : kfuse::impl::FastExpBase<FastExpPass> {
  void runOnOperation() override {
    SmallVector<math::ExpOp> exps;
    getOperation()->walk([&](math::ExpOp op) {
      if (!arith::bitEnumContainsAll(op.getFastmath(),
                                     arith::FastMathFlags::afn))
        return;
      Type t = op.getType();
      auto vec = dyn_cast<VectorType>(t);
      if (getElementTypeOrSelf(t).isF32() &&
          (!vec || (vec.getRank() == 1 && !vec.isScalable())))
        exps.push_back(op);
    });
    if (exps.empty())
      return markAllAnalysesPreserved();
    for (math::ExpOp op : exps) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type t = op.getType();
      TypedAttr log2e = b.getF32FloatAttr(1.4426950408889634);
      if (auto v = dyn_cast<VectorType>(t))
        log2e = DenseElementsAttr::get(v, log2e);
      Value scaled = arith::MulFOp::create(
          b, loc, op.getOperand(), arith::ConstantOp::create(b, loc, log2e),
          arith::FastMathFlags::contract);
      // (LLVM 22 has no NVVM ex2 intrinsic; PTX it is. Marked exps flush
      // subnormal results: see kfuse::kFlushSubnormals.)
      StringRef ex2 =
          op->hasAttr(kfuse::kFlushSubnormals) || absorbsSubnormals(op)
              ? "ex2.approx.ftz.f32 $0, $1;"
              : "ex2.approx.f32 $0, $1;";
      Value r = lanewise(b, loc, scaled, [&](ValueRange lane) -> Value {
        return LLVM::InlineAsmOp::create(
                   b, loc, TypeRange{b.getF32Type()}, lane, ex2, "=f,f",
                   /*has_side_effects=*/false, /*is_align_stack=*/false,
                   LLVM::tailcallkind::TailCallKind::None,
                   LLVM::AsmDialectAttr(), ArrayAttr())
            .getResult(0);
      });
      op.replaceAllUsesWith(r);
      op.erase();
    }
  }
};

/// The float constant `v` is (or a splat of), or null.
FloatAttr floatConstantOf(Value v) {
  FloatAttr c;
  if (matchPattern(v, m_Constant(&c)))
    return c;
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat() ||
      !isa<FloatType>(dense.getElementType()))
    return FloatAttr();
  return dense.getSplatValue<FloatAttr>();
}

/// Whether `v` is a constant (or a splat of one) whose reciprocal is exact:
/// a power of two, which LLVM turns into a multiplication.
bool exactReciprocal(Value v) {
  FloatAttr c = floatConstantOf(v);
  return c && c.getValue().getExactInverse(nullptr);
}

struct FastDivPass : kfuse::impl::FastDivBase<FastDivPass> {
  void runOnOperation() override {
    SmallVector<arith::DivFOp> divs;
    getOperation()->walk([&](arith::DivFOp op) {
      Type t = op.getType();
      auto vec = dyn_cast<VectorType>(t);
      if (arith::bitEnumContainsAll(op.getFastmath(),
                                    arith::FastMathFlags::afn) &&
          getElementTypeOrSelf(t).isF32() &&
          (!vec || (vec.getRank() == 1 && !vec.isScalable())) &&
          !exactReciprocal(op.getRhs()))
        divs.push_back(op);
    });
    if (divs.empty())
      return markAllAnalysesPreserved();
    // (the reciprocal of each broadcast divisor, computed once)
    llvm::DenseMap<Value, Value> reciprocals;
    for (arith::DivFOp op : divs) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type f32 = b.getF32Type();
      // A vector divided by one value in every lane (a row's sum, broadcast)
      // is multiplied by that value's reciprocal, correctly rounded once: 1.5
      // ulp at most, and one multiplication a lane.
      if (auto bcast = op.getRhs().getDefiningOp<vector::BroadcastOp>();
          bcast && bcast.getSource().getType().isF32()) {
        Value s = bcast.getSource();
        Value &r = reciprocals[s];
        if (!r) {
          OpBuilder rb(op->getContext());
          if (Operation *def = s.getDefiningOp())
            rb.setInsertionPointAfter(def);
          else
            rb.setInsertionPointToStart(cast<BlockArgument>(s).getOwner());
          r = arith::DivFOp::create(
              rb, loc, arith::ConstantOp::create(rb, loc, rb.getF32FloatAttr(1.0)),
              s);
        }
        Value rv = vector::BroadcastOp::create(b, loc, op.getType(), r);
        op.replaceAllUsesWith(arith::MulFOp::create(
            b, loc, op.getLhs(), rv, arith::FastMathFlags::contract)
                                  .getResult());
        op.erase();
        continue;
      }
      auto intrinsic = b.getStringAttr("llvm.nvvm.div.full");
      Value r = lanewise(b, loc, ValueRange{op.getLhs(), op.getRhs()},
                         [&](ValueRange lane) -> Value {
                           return LLVM::CallIntrinsicOp::create(
                                      b, loc, f32, intrinsic, lane)
                               .getResult(0);
                         });
      op.replaceAllUsesWith(r);
      op.erase();
    }
  }
};

/// A constant of `type` (a scalar, or a vector splat of it) holding the
/// element `value`.
Value constantOf(OpBuilder &b, Location loc, Type type, TypedAttr value) {
  if (auto v = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v, value));
  return arith::ConstantOp::create(b, loc, value);
}

/// x^m by repeated squaring with `mul` (null for m = 0).
Value powBySquaring(Value x, uint64_t m,
                    function_ref<Value(Value, Value)> mul) {
  Value result, square = x;
  for (; m != 0; m >>= 1) {
    if (m & 1)
      result = result ? mul(result, square) : square;
    if (m > 1)
      square = mul(square, square);
  }
  return result;
}

/// x^n for floats and a constant n (see ExpandPowI in Passes.td).
Value powByMultiplying(OpBuilder &b, Location loc, Value x, int64_t n,
                       arith::FastMathFlags flags) {
  uint64_t m = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  auto one = [&] {
    return constantOf(b, loc, x.getType(),
                      b.getFloatAttr(getElementTypeOrSelf(x), 1.0));
  };
  Value result = powBySquaring(x, m, [&](Value p, Value q) -> Value {
    return arith::MulFOp::create(b, loc, p, q, flags);
  });
  if (!result)
    return one();
  if (n < 0)
    result = arith::DivFOp::create(b, loc, one(), result, flags);
  return result;
}

struct GpuIntrinsicsPass
    : kfuse::impl::GpuIntrinsicsBase<GpuIntrinsicsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::TruncOp, math::CountLeadingZerosOp,
              math::CountTrailingZerosOp, math::CtPopOp, math::AbsIOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return markAllAnalysesPreserved();
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value x = op->getOperand(0);
      Value r = llvm::TypeSwitch<Operation *, Value>(op)
                    .Case([&](math::TruncOp) {
                      return LLVM::FTruncOp::create(b, loc, x);
                    })
                    .Case([&](math::CountLeadingZerosOp) {
                      return LLVM::CountLeadingZerosOp::create(b, loc, x, false);
                    })
                    .Case([&](math::CountTrailingZerosOp) {
                      return LLVM::CountTrailingZerosOp::create(b, loc, x,
                                                                false);
                    })
                    .Case([&](math::CtPopOp) {
                      return LLVM::CtPopOp::create(b, loc, x);
                    })
                    .Case([&](math::AbsIOp) {
                      return LLVM::AbsOp::create(b, loc, x.getType(), x, false);
                    });
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
  }
};

/// x^n for integers (wrapping), n >= 0 by repeated squaring over n's bits
/// (all of them, as selects, where n is not a constant); n < 0: 1 for x = 1,
/// +-1 for x = -1 (n odd: -1), else 0 (the integer part of 1 / x^|n|; 0 for
/// x = 0 too, where the quotient has none).
Value intPower(OpBuilder &b, Location loc, Value x, Value n) {
  Type t = x.getType();
  auto c = [&](int64_t v) -> Value {
    return constantOf(b, loc, t,
                      b.getIntegerAttr(getElementTypeOrSelf(t), v));
  };
  unsigned w = getElementTypeOrSelf(t).getIntOrFloatBitWidth();
  APInt exponent;
  Value result;
  bool constant = matchPattern(n, m_ConstantInt(&exponent));
  if (constant && !exponent.isNegative()) {
    result = powBySquaring(x, exponent.getZExtValue(),
                           [&](Value p, Value q) -> Value {
                             return arith::MulIOp::create(b, loc, p, q);
                           });
    return result ? result : c(1);
  }
  if (constant) {
    result = c(0); // (not used: n < 0)
  } else {
    result = c(1);
    Value square = x;
    for (unsigned i = 0; i + 1 < w; ++i) {
      Value bit = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, n, c(i)), c(1));
      Value set = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit,
                                        c(0));
      result = arith::SelectOp::create(
          b, loc, set, arith::MulIOp::create(b, loc, result, square), result);
      if (i + 2 < w)
        square = arith::MulIOp::create(b, loc, square, square);
    }
  }
  // (n < 0)
  auto is = [&](Value v, int64_t k) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, c(k));
  };
  Value odd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, arith::AndIOp::create(b, loc, n, c(1)),
      c(0));
  Value negative = arith::SelectOp::create(
      b, loc, is(x, 1), c(1),
      arith::SelectOp::create(
          b, loc, is(x, -1),
          arith::SelectOp::create(b, loc, odd, c(-1), c(1)), c(0)));
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, n, c(0));
  return arith::SelectOp::create(b, loc, below, negative, result);
}

struct ExpandPowIPass : kfuse::impl::ExpandPowIBase<ExpandPowIPass> {
  void runOnOperation() override {
    // (scalars and 1-D vectors)
    SmallVector<math::FPowIOp> ops;
    SmallVector<math::IPowIOp> iops;
    SmallVector<math::PowFOp> squares;
    getOperation()->walk([&](Operation *op) {
      if (!isa<math::FPowIOp, math::IPowIOp, math::PowFOp>(op))
        return;
      auto vec = dyn_cast<VectorType>(op->getResult(0).getType());
      if (vec && (vec.getRank() != 1 || vec.isScalable()))
        return;
      if (auto f = dyn_cast<math::FPowIOp>(op))
        ops.push_back(f);
      else if (auto i = dyn_cast<math::IPowIOp>(op))
        iops.push_back(i);
      else if (auto p = dyn_cast<math::PowFOp>(op);
               FloatAttr two = floatConstantOf(p.getRhs()))
        if (two.getValue().isExactlyValue(2.0))
          squares.push_back(p);
    });
    if (ops.empty() && iops.empty() && squares.empty())
      return markAllAnalysesPreserved();
    // (x * x is x^2 correctly rounded, as powf at its best: +inf for
    // +-inf, +0 for -0, NaN for NaN)
    for (math::PowFOp op : squares) {
      OpBuilder b(op);
      Value x = op.getLhs();
      op.replaceAllUsesWith(
          arith::MulFOp::create(b, op.getLoc(), x, x, op.getFastmath())
              .getResult());
      op.erase();
    }
    for (math::IPowIOp op : iops) {
      OpBuilder b(op);
      Value r = intPower(b, op.getLoc(), op.getLhs(), op.getRhs());
      op.replaceAllUsesWith(r);
      op.erase();
    }
    for (math::FPowIOp op : ops) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value x = op.getLhs(), n = op.getRhs();
      arith::FastMathFlags flags = op.getFastmath();
      APInt exponent;
      Value r;
      if (matchPattern(n, m_ConstantInt(&exponent)) &&
          exponent.getSignificantBits() <= 64) {
        r = powByMultiplying(b, loc, x, exponent.getSExtValue(), flags);
      } else {
        Value f = arith::SIToFPOp::create(b, loc, x.getType(), n);
        r = math::PowFOp::create(b, loc, x, f, flags);
      }
      op.replaceAllUsesWith(r);
      op.erase();
    }
  }
};

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
    if (ops.empty())
      return markAllAnalysesPreserved();
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
