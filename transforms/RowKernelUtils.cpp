//===- RowKernelUtils.cpp - what the row kernel emitters share ---------===//
//
// See RowKernelUtils.h.
//
//===----------------------------------------------------------------------===//

#include "transforms/RowKernelUtils.h"
#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Utils/VectorUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>
#include <map>
#include <numeric>

using namespace mlir;

namespace kfuse::row {

bool streamsAnInput(linalg::GenericOp g) {
  return llvm::any_of(g.getDpsInputOperands(), [&](OpOperand *in) {
    AffineMap map = g.getMatchingIndexingMap(in);
    return isa<ShapedType>(in->get().getType()) &&
           map.getNumResults() == g.getNumLoops() && map.isPermutation();
  });
}

bool contractionIn(linalg::GenericOp g, ArrayRef<linalg::GenericOp> generics) {
  if (g.getNumReductionLoops() == 0 || !kfuse::needsContractionKernel(g))
    return false;
  return !llvm::any_of(generics, [&](linalg::GenericOp other) {
    return other != g && other.getNumReductionLoops() > 0 &&
           other.getStaticLoopRanges() == g.getStaticLoopRanges() &&
           other.getIteratorTypesArray() == g.getIteratorTypesArray() &&
           !kfuse::needsContractionKernel(other) && streamsAnInput(other);
  });
}

std::optional<Combiner> findCombiner(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1)
    return std::nullopt;
  Value acc = g.getBody()->getArguments().back();
  Operation *op = g.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  if (!op || op->getNumOperands() != 2 ||
      (op->getOperand(0) != acc && op->getOperand(1) != acc))
    return std::nullopt;
  Value other =
      op->getOperand(0) == acc ? op->getOperand(1) : op->getOperand(0);
  if (other == acc || acc.getNumUses() != 1)
    return std::nullopt;
  using K = gpu::AllReduceOperation;
  std::optional<K> kind =
      llvm::TypeSwitch<Operation *, std::optional<K>>(op)
          .Case<arith::AddFOp, arith::AddIOp>([](auto) { return K::ADD; })
          .Case<arith::MulFOp, arith::MulIOp>([](auto) { return K::MUL; })
          .Case<arith::MaximumFOp>([](auto) { return K::MAXIMUMF; })
          .Case<arith::MinimumFOp>([](auto) { return K::MINIMUMF; })
          .Case<arith::MaxNumFOp>([](auto) { return K::MAXNUMF; })
          .Case<arith::MinNumFOp>([](auto) { return K::MINNUMF; })
          .Case<arith::MaxSIOp>([](auto) { return K::MAXSI; })
          .Case<arith::MinSIOp>([](auto) { return K::MINSI; })
          .Case<arith::MaxUIOp>([](auto) { return K::MAXUI; })
          .Case<arith::MinUIOp>([](auto) { return K::MINUI; })
          .Case<arith::AndIOp>([](auto) { return K::AND; })
          .Case<arith::OrIOp>([](auto) { return K::OR; })
          .Case<arith::XOrIOp>([](auto) { return K::XOR; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  return Combiner{*kind, op};
}

TypedAttr neutral(OpBuilder &b, gpu::AllReduceOperation kind, Type type) {
  using K = gpu::AllReduceOperation;
  if (auto ft = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    switch (kind) {
    case K::ADD:
      return b.getFloatAttr(ft, 0.0);
    case K::MUL:
      return b.getFloatAttr(ft, 1.0);
    case K::MAXIMUMF:
    case K::MAXNUMF:
      return b.getFloatAttr(ft, APFloat::getInf(sem, /*Negative=*/true));
    default:
      return b.getFloatAttr(ft, APFloat::getInf(sem, /*Negative=*/false));
    }
  }
  auto it = cast<IntegerType>(type);
  unsigned w = it.getWidth();
  switch (kind) {
  case K::ADD:
  case K::OR:
  case K::XOR:
  case K::MAXUI:
    return b.getIntegerAttr(it, APInt::getZero(w));
  case K::MUL:
    return b.getIntegerAttr(it, APInt(w, 1));
  case K::AND:
  case K::MINUI:
    return b.getIntegerAttr(it, APInt::getAllOnes(w));
  case K::MAXSI:
    return b.getIntegerAttr(it, APInt::getSignedMinValue(w));
  default:
    return b.getIntegerAttr(it, APInt::getSignedMaxValue(w));
  }
}

int64_t clusterBlockThreads(int64_t maxCluster, int64_t occupancy) {
  int64_t most = 1024 / std::max<int64_t>(1, occupancy);
  return maxCluster > 8 ? std::min<int64_t>(most, 512) : most;
}

int64_t chunkWidthIn(int64_t n) {
  int64_t w = 8;
  while (w > 1 && n % w != 0)
    w /= 2;
  return w;
}

bool isPrivateTo(Value buffer, ArrayRef<linalg::GenericOp> readers) {
  Value base = buffer;
  while (auto view = base.getDefiningOp<ViewLikeOpInterface>())
    base = view.getViewSource();
  if (!base.getDefiningOp<memref::AllocOp>())
    return false;
  SmallVector<Value> worklist{base};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == v) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (!g || !llvm::is_contained(readers, g))
        return false;
    }
  }
  return true;
}

std::optional<std::pair<linalg::GenericOp, unsigned>>
lastWriterBefore(ArrayRef<linalg::GenericOp> generics, Value buffer,
                 unsigned pos) {
  for (unsigned p = pos; p-- > 0;)
    for (auto [i, init] :
         llvm::enumerate(linalg::GenericOp(generics[p]).getOutputs()))
      if (init == buffer)
        return std::make_pair(linalg::GenericOp(generics[p]), unsigned(i));
  return std::nullopt;
}

void inputsBut(linalg::GenericOp g, unsigned skip,
               SmallVectorImpl<Value> &inputs,
               SmallVectorImpl<AffineMap> &maps) {
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->getOperandNumber() != skip) {
      inputs.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
}

bool sameComputation(Value a, Value b,
                     llvm::function_ref<bool(Value, Value)> same) {
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  if (!ra || !rb || ra.getResultNumber() != rb.getResultNumber())
    return false;
  Operation *oa = ra.getOwner(), *ob = rb.getOwner();
  if (oa->getName() != ob->getName() ||
      oa->getAttrDictionary() != ob->getAttrDictionary() ||
      oa->getNumOperands() != ob->getNumOperands() || oa->getNumRegions() ||
      ob->getNumRegions() || !isMemoryEffectFree(oa))
    return false;
  for (auto [x, y] : llvm::zip(oa->getOperands(), ob->getOperands()))
    if (!same(x, y))
      return false;
  return true;
}

bool memoizedSame(SameMemo &memo, Value a, Operation *ga, Value b,
                  Operation *gb, unsigned depth,
                  llvm::function_ref<bool()> compare) {
  if (depth > kMaxSameDepth)
    return false;
  auto key =
      std::make_tuple(a.getAsOpaquePointer(), ga, b.getAsOpaquePointer(), gb);
  if (auto known = memo.find(key); known != memo.end())
    return known->second;
  memo[key] = false;
  bool same = compare();
  memo[key] = same; // (compare() grew the map: the key is looked up again)
  return same;
}

bool sameTermIn(ArrayRef<linalg::GenericOp> generics,
                llvm::DenseMap<Operation *, unsigned> &order, Value a,
                linalg::GenericOp ga, Value b, linalg::GenericOp gb,
                SameMemo &memo, unsigned depth) {
  return memoizedSame(memo, a, ga, b, gb, depth, [&] {
    auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
    bool inA = argA && argA.getOwner() == ga.getBody(),
         inB = argB && argB.getOwner() == gb.getBody();
    auto sameRead = [&] {
      if (!inA || !inB || argA.getArgNumber() >= ga.getNumDpsInputs() ||
          argB.getArgNumber() >= gb.getNumDpsInputs())
        return false;
      OpOperand *ia = ga.getDpsInputOperand(argA.getArgNumber());
      OpOperand *ib = gb.getDpsInputOperand(argB.getArgNumber());
      if (ia->get() != ib->get() ||
          ga.getMatchingIndexingMap(ia) != gb.getMatchingIndexingMap(ib))
        return false;
      auto wa = lastWriterBefore(generics, ia->get(), order[ga]);
      auto wb = lastWriterBefore(generics, ib->get(), order[gb]);
      return wa.has_value() == wb.has_value() && (!wa || *wa == *wb);
    };
    if (inA || inB)
      return sameRead();
    return a == b || // (a value from above both bodies)
           sameComputation(a, b, [&](Value x, Value y) {
             return sameTermIn(generics, order, x, ga, y, gb, memo, depth + 1);
           });
  });
}

std::optional<Center> rowFunction(Value q, linalg::GenericOp at,
                                  Operation *user) {
  Block *body = at.getBody();
  Center c;
  c.value = q;
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{q};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto a = dyn_cast<BlockArgument>(v)) {
      if (a.getOwner() != body)
        continue;
      if ((c.r && c.r != a) || a.getArgNumber() >= at.getNumDpsInputs() ||
          !isa<MemRefType>(
              at.getDpsInputOperand(a.getArgNumber())->get().getType()))
        return std::nullopt;
      c.r = a;
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (op->getBlock() != body || op->hasTrait<OpTrait::ConstantLike>())
      continue; // (a constant, or a value from outside)
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return std::nullopt;
    if (slice.insert(op))
      llvm::append_range(work, op->getOperands());
  }
  if (!c.r)
    return std::nullopt;
  auto inside = [&](Operation *u) { return u == user || slice.contains(u); };
  if (!llvm::all_of(c.r.getUsers(), inside) ||
      llvm::any_of(slice, [&](Operation *op) {
        return !llvm::all_of(op->getUsers(), inside);
      }))
    return std::nullopt;
  c.ops.assign(slice.begin(), slice.end());
  llvm::sort(c.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return c;
}

Value isZero(OpBuilder &b, Location loc, Value idx) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, idx,
                               arith::ConstantIndexOp::create(b, loc, 0));
}

Value byteAddress(OpBuilder &b, Location loc, Value buffer, Value offset) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  if (offset)
    address = arith::AddIOp::create(b, loc, address, offset);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

Value ptx(OpBuilder &b, Location loc, Type result, ValueRange operands,
          StringRef text, StringRef constraints) {
  auto op = LLVM::InlineAsmOp::create(
      b, loc, result ? TypeRange{result} : TypeRange{}, operands, text,
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
  return result ? op.getResult(0) : Value();
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value,
                    int special) {
  auto elem = cast<FloatType>(getElementTypeOrSelf(type));
  const llvm::fltSemantics &sem = elem.getFloatSemantics();
  Value c = arith::ConstantOp::create(
      b, loc,
      special < 0   ? b.getFloatAttr(elem, APFloat::getInf(sem, true))
      : special > 0 ? b.getFloatAttr(elem, APFloat::getNaN(sem))
                    : b.getFloatAttr(elem, value));
  if (type != elem)
    c = vector::BroadcastOp::create(b, loc, type, c);
  return c;
}

Value rescale(OpBuilder &b, Location loc, Value from, Value to,
              arith::FastMathFlags flags, bool flush) {
  Value same =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, from, to);
  auto exp = math::ExpOp::create(
      b, loc, arith::SubFOp::create(b, loc, from, to), flags);
  if (flush)
    exp->setAttr(kfuse::kFlushSubnormals, b.getUnitAttr());
  return arith::SelectOp::create(
      b, loc, same, floatConstant(b, loc, from.getType(), 1.0), exp);
}

Value onlineSum(OpBuilder &b, Location loc, Value s, Value m, Value r) {
  Type t = m.getType();
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  Value ninf = floatConstant(b, loc, t, 0, -1);
  Value pinf =
      floatConstant(b, loc, t, std::numeric_limits<double>::infinity());
  Value shift =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, r));
  Value finite = arith::MulFOp::create(b, loc, s, rescale(b, loc, m, r));
  Value none = arith::SelectOp::create(
      b, loc, cmp(arith::CmpFPredicate::ONE, r, ninf),
      floatConstant(b, loc, t, 0.0), floatConstant(b, loc, t, 0, 1));
  return arith::SelectOp::create(
      b, loc, cmp(arith::CmpFPredicate::OEQ, m, pinf), shift,
      arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, m, ninf),
                              none, finite));
}

Value sumTerm(linalg::GenericOp g) {
  std::optional<Combiner> sum = findCombiner(g);
  if (!sum || !isa<arith::AddFOp>(sum->op))
    return Value();
  return sum->termOf(g);
}

Value squaredValue(Value term) {
  Operation *op = term.getDefiningOp();
  if (auto mul = dyn_cast_if_present<arith::MulFOp>(op))
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  FloatAttr f;
  if (auto pow = dyn_cast_if_present<math::PowFOp>(op))
    return matchPattern(pow.getRhs(), m_Constant(&f)) &&
                   f.getValue().isExactlyValue(2.0)
               ? pow.getLhs()
               : Value();
  APInt n;
  if (auto pow = dyn_cast_if_present<math::FPowIOp>(op))
    return matchPattern(pow.getRhs(), m_ConstantInt(&n)) && n == 2
               ? pow.getLhs()
               : Value();
  return Value();
}

Value centeredValue(linalg::GenericOp v, bool &squares) {
  Value term = sumTerm(v);
  if (!term)
    return Value();
  Value acc = v.getBody()->getArguments().back();
  if (!term.hasOneUse() || term.getType() != acc.getType() ||
      !(acc.getType().isF32() || acc.getType().isF64()))
    return Value();
  Value d = squaredValue(term);
  squares = bool(d);
  if (!squares)
    return term;
  Operation *square = term.getDefiningOp();
  if (!llvm::all_of(d.getUsers(), [&](Operation *u) { return u == square; }))
    return Value();
  return d;
}

std::optional<Center> matchCenter(arith::SubFOp sub, linalg::GenericOp at) {
  Value rv = sub.getRhs();
  if (Operation *op = rv.getDefiningOp();
      op && isa<arith::DivFOp, arith::MulFOp>(op)) {
    unsigned k =
        isa<arith::MulFOp>(op) && matchPattern(op->getOperand(0), m_Constant())
            ? 0
            : 1;
    FloatAttr scale;
    if (!matchPattern(op->getOperand(k), m_Constant(&scale)) ||
        !scale.getValue().isFiniteNonZero())
      return std::nullopt;
    rv = op->getOperand(1 - k);
  }
  std::optional<Center> c = rowFunction(sub.getRhs(), at, sub);
  if (!c || rv != c->r || !c->r.hasOneUse())
    return std::nullopt;
  return c;
}

bool contiguousAlongRows(ArrayRef<linalg::GenericOp> generics) {
  linalg::GenericOp red;
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0 && !red)
      red = g;
  if (!red || red.getNumParallelLoops() == 0)
    return false;
  SmallVector<int64_t> full = kfuse::parallelExtents(red);
  unsigned rows = full.size();
  for (auto [range, it] :
       llvm::zip(red.getStaticLoopRanges(), red.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      full.push_back(range);
  bool found = false;
  for (linalg::GenericOp g : generics) {
    // Which loops of g are columns, and which is the innermost row loop.
    SmallVector<bool> isColumn;
    unsigned innerRow = 0;
    if (g.getNumReductionLoops() > 0) {
      for (auto [d, it] : llvm::enumerate(g.getIteratorTypesArray())) {
        isColumn.push_back(it == utils::IteratorType::reduction);
        if (!isColumn.back())
          innerRow = d;
      }
    } else if (g.getStaticLoopRanges() == ArrayRef<int64_t>(full)) {
      for (unsigned d = 0; d < full.size(); ++d)
        isColumn.push_back(d >= rows);
      innerRow = rows - 1;
    } else {
      continue; // row space
    }
    for (OpOperand *in : g.getDpsInputOperands()) {
      if (!isa<ShapedType>(in->get().getType()))
        continue;
      AffineMap map = g.getMatchingIndexingMap(in);
      bool readsColumns = false, readsRows = false;
      for (unsigned d = 0; d < isColumn.size(); ++d)
        (isColumn[d] ? readsColumns : readsRows) |= map.isFunctionOfDim(d);
      // (a vector broadcast along the rows, v in sum(x[k, m] * v[k], k),
      // or along the innermost row loop, a mask m in sum(x[b, s, h] *
      // m[b, s], s): consecutive threads, on consecutive innermost rows,
      // read one element)
      if (!readsColumns || !readsRows || !map.isFunctionOfDim(innerRow))
        continue;
      auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
      if (!last || last.getPosition() != innerRow)
        return false;
      found = true;
    }
  }
  return found;
}

bool rowsFillThreads(ArrayRef<linalg::GenericOp> generics, int64_t smCount) {
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0) {
      int64_t numRows = 1;
      for (int64_t r : kfuse::parallelExtents(g))
        numRows *= r;
      return numRows >= smCount * 128;
    }
  return false;
}

} // namespace kfuse::row
