//===- SplitArgReductions.cpp - argmax/argmin as one-result reductions ----===//
//
// torch's argmax, argmin and max/min(dim) with indices decompose into one
// linalg.generic that carries two accumulators, the running extremum m and
// its index i:
//
//   m' = maximumf(x, m)
//   i' = select(cmpf ogt(x, m), index_cast(linalg.index r), i)
//
// Folded in iteration order, i ends at the first column holding the row's
// maximum, except that a NaN stops every later update (a compare with NaN is
// false) while m becomes NaN. Nothing else in kfuse combines two coupled
// accumulators, and a GPU row kernel combines partials in no fixed order, so
// this pass rewrites the generic as one-result reductions that give exactly
// the sequential answer in any order of combination:
//
//   p = min over k of (isnan(x_k) ? k : INT_MAX)           (floats only)
//   v = max over k < p of x_k                               (maximumf)
//   j = min over k < p with x_k == v of k                   (first column)
//   i = (v > m0 && j found) ? j : i0                        (row epilogue)
//   m = maximumf over k of x_k, from m0                     (if m is used)
//
// A non-strict compare (oge: the last column of the maximum) takes the
// largest such k instead; min/minimumf mirror max. numpy's argmax, where a
// NaN wins, is written `andi(cmpf ugt(x, m), cmpf ord(m, m))`: the epilogue
// then gives p where there is a NaN. Integer elements need no
// p. Column numbers are carried as i32 (as i64 for reduced extents of 2^31 or
// more) and extended to the index type in the epilogue. All reductions share
// the rows of the original, so planning puts them and the epilogue in one
// row group.
//
// v and j are two dependent reductions, and j reads x again: on a GPU a row
// too long for one block takes a wave of partials for each. Where the
// element has at most 32 bits and the column fits in 31, both come from one
// maximum over 64-bit keys instead:
//
//   key_k = order(x_k) << 32 | (strict ? ~k : k + 1)     (32 bits each)
//
// order(x) is a signed 32-bit integer in the order of the search: a float's
// bits (widened to f32) with the negative half reversed, -0 as +0 (they
// compare equal, so the first of either wins) and every NaN above +inf
// (numpy's first NaN); integers sign- or zero-extended (unsigned ones moved
// into the signed range); a minimum search takes ~order, NaN staying on top.
// The largest key holds the extremum and, among its columns, the first (~k
// is largest for the smallest k) or the last; the low half is never 0, so
// no element's key is the neutral INT64_MIN. The epilogue decodes both
// (order is its own inverse on the bits) and applies the original compare
// as above. Numpy's form and integers then need one reduction (one wave);
// the NaN-stopping form keeps p and masks the keys of columns from p on.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "fusion-split-arg-reductions"

namespace kfuse {
#define GEN_PASS_DEF_SPLITARGREDUCTIONS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// The compare `lhs pred rhs` written as `rhs pred' lhs`.
arith::CmpFPredicate swapped(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OGT:
    return P::OLT;
  case P::OLT:
    return P::OGT;
  case P::OGE:
    return P::OLE;
  case P::OLE:
    return P::OGE;
  default:
    return p;
  }
}
arith::CmpIPredicate swapped(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::sgt:
    return P::slt;
  case P::slt:
    return P::sgt;
  case P::sge:
    return P::sle;
  case P::sle:
    return P::sge;
  case P::ugt:
    return P::ult;
  case P::ult:
    return P::ugt;
  case P::uge:
    return P::ule;
  case P::ule:
    return P::uge;
  default:
    return p;
  }
}

/// A matched arg-reduction generic.
struct ArgReduction {
  linalg::GenericOp op;
  unsigned redDim;      // the one reduction loop
  unsigned valueResult; // which result is the extremum (the other: index)
  Operation *extremum;  // maximumf / minimumf / maxsi / ... in the body
  Value x;              // the element folded, computed in the body
  Operation *compare;   // x <pred> m (either operand order)
  bool isFloat, strict; // strict: first column of the extremum; else last
  bool nanFirst;        // a NaN's column wins (numpy's argmax), see match
  int64_t extent;       // of the reduction loop
  llvm::SetVector<Operation *> slice;           // body ops computing x
  llvm::SmallSetVector<unsigned, 4> usedInputs; // inputs they read
};

/// `linalg.index r` (possibly index_cast to the index accumulator's type).
bool isColumnNumber(Value v, unsigned redDim, Type type) {
  if (v.getType() != type)
    return false;
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto index = v.getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == redDim;
}

/// The body ops `a.x` is computed by and the block arguments they read;
/// false if any is not an input (x depends on an accumulator).
bool collectSlice(ArgReduction &a) {
  Block *body = a.op.getBody();
  unsigned inputs = a.op.getNumDpsInputs();
  bool onlyInputs = true;
  auto use = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body) {
      onlyInputs &= arg.getArgNumber() < inputs;
      a.usedInputs.insert(arg.getArgNumber());
    }
  };
  SmallVector<Value> work{a.x};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    use(v);
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || !a.slice.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
    def->walk([&](Operation *nested) {
      if (nested != def)
        for (Value operand : nested->getOperands())
          use(operand);
    });
  }
  return onlyInputs;
}

std::optional<ArgReduction> match(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumDpsInits() != 2 ||
      g.getNumReductionLoops() != 1 || g.hasDynamicShape())
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  unsigned redDim =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  for (OpOperand &init : g.getDpsInitsMutable())
    if (g.getMatchingIndexingMap(&init).isFunctionOfDim(redDim) ||
        !g.getMatchingIndexingMap(&init).isProjectedPermutation())
      return std::nullopt;
  Block *body = g.getBody();
  unsigned n = body->getNumArguments();
  Operation *yield = body->getTerminator();
  for (unsigned valueResult : {0u, 1u}) {
    BlockArgument m = body->getArgument(n - 2 + valueResult);
    BlockArgument i = body->getArgument(n - 1 - valueResult);
    Operation *ext = yield->getOperand(valueResult).getDefiningOp();
    auto sel =
        yield->getOperand(1 - valueResult).getDefiningOp<arith::SelectOp>();
    if (!ext || !sel ||
        !isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxSIOp,
             arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(ext))
      continue;
    Value x = ext->getOperand(0) == m ? ext->getOperand(1) : ext->getOperand(0);
    if (x == m || (ext->getOperand(0) != m && ext->getOperand(1) != m) ||
        sel.getFalseValue() != i ||
        !isColumnNumber(sel.getTrueValue(), redDim, i.getType()) ||
        !i.hasOneUse())
      continue;
    Operation *cmp = sel.getCondition().getDefiningOp();
    // numpy's form: update when `x ugt m` (x greater, or either NaN) and m is
    // not NaN yet: the first NaN's column wins and nothing after it.
    bool nanFirst = false;
    if (auto both = dyn_cast_or_null<arith::AndIOp>(cmp)) {
      for (unsigned k : {0u, 1u}) {
        auto ord = both->getOperand(k).getDefiningOp<arith::CmpFOp>();
        if (ord && ord.getPredicate() == arith::CmpFPredicate::ORD &&
            ord.getLhs() == m && ord.getRhs() == m) {
          nanFirst = true;
          cmp = both->getOperand(1 - k).getDefiningOp();
        }
      }
      if (!nanFirst)
        continue;
    }
    if (!m.hasNUses(nanFirst ? 4 : 2))
      continue;
    if (!cmp || !isa<arith::CmpFOp, arith::CmpIOp>(cmp) ||
        !((cmp->getOperand(0) == x && cmp->getOperand(1) == m) ||
          (cmp->getOperand(0) == m && cmp->getOperand(1) == x)))
      continue;
    bool xFirst = cmp->getOperand(0) == x;
    bool isMax = isa<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(ext);
    bool ok = false, strict = false;
    if (auto f = dyn_cast<arith::CmpFOp>(cmp)) {
      using P = arith::CmpFPredicate;
      P p = xFirst ? f.getPredicate() : swapped(f.getPredicate());
      if (nanFirst)
        ok = isMax ? p == P::UGT : p == P::ULT;
      else
        ok =
            isMax ? (p == P::OGT || p == P::OGE) : (p == P::OLT || p == P::OLE);
      strict = p == P::OGT || p == P::OLT || nanFirst;
    } else {
      using P = arith::CmpIPredicate;
      P p = xFirst ? cast<arith::CmpIOp>(cmp).getPredicate()
                   : swapped(cast<arith::CmpIOp>(cmp).getPredicate());
      if (isa<arith::MaxSIOp>(ext))
        ok = p == P::sgt || p == P::sge;
      else if (isa<arith::MinSIOp>(ext))
        ok = p == P::slt || p == P::sle;
      else if (isa<arith::MaxUIOp>(ext))
        ok = p == P::ugt || p == P::uge;
      else
        ok = p == P::ult || p == P::ule;
      strict = p == P::sgt || p == P::slt || p == P::ugt || p == P::ult;
    }
    if (!ok || isa<arith::CmpFOp>(cmp) != isa<FloatType>(x.getType()) ||
        (nanFirst && !isa<arith::MaximumFOp, arith::MinimumFOp>(ext)))
      continue;
    ArgReduction a;
    a.op = g;
    a.redDim = redDim;
    a.extent = g.getStaticLoopRanges()[redDim];
    a.valueResult = valueResult;
    a.extremum = ext;
    a.x = x;
    a.compare = cmp;
    a.isFloat = isa<FloatType>(x.getType());
    a.strict = strict;
    a.nanFirst = nanFirst;
    if (!collectSlice(a))
      continue;
    return a;
  }
  return std::nullopt;
}

/// Builds the one-result generics of `a` and replaces its results.
class Splitter {
public:
  Splitter(ArgReduction &a)
      : a(a), g(a.op), b(a.op), loc(a.op.getLoc()), ctx(a.op.getContext()) {}

  void run() {
    colType = b.getIntegerType(a.extent < (int64_t(1) << 31) ? 32 : 64);
    for (unsigned d = 0; d < g.getNumLoops(); ++d)
      if (d != a.redDim) {
        rowDims.push_back(getAffineDimExpr(d, ctx));
        rowShape.push_back(g.getStaticLoopRanges()[d]);
      }
    Type elem = a.x.getType();
    auto minsi = [&](OpBuilder &nb, Value x, Value acc) -> Value {
      return arith::MinSIOp::create(nb, loc, x, acc);
    };
    auto maxsi = [&](OpBuilder &nb, Value x, Value acc) -> Value {
      return arith::MaxSIOp::create(nb, loc, x, acc);
    };
    auto extremum = [&](OpBuilder &nb, Value x, Value acc) -> Value {
      return applyTo(nb, a.extremum, x, acc);
    };
    // p: the first NaN column (floats only; keys put numpy's first NaN on
    // top by themselves).
    Value p;
    if (a.isFloat && !(keyed() && a.nanFirst))
      p = reduce(
          colType, notFound(/*first=*/true), minsi,
          [&](OpBuilder &nb, Value x, Value k, ArrayRef<Value>) {
            Value nan =
                arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNO, x, x);
            return arith::SelectOp::create(
                       nb, loc, nan, k, constant(nb, notFound(/*first=*/true)))
                .getResult();
          });
    if (keyed()) {
      Value key = reduce(
          b.getI64Type(), noKey(), maxsi,
          [&](OpBuilder &nb, Value x, Value k, ArrayRef<Value> rows) {
            Value key = keyOf(nb, x, k);
            if (!p)
              return key;
            Value before = arith::CmpIOp::create(
                nb, loc, arith::CmpIPredicate::slt, k, rows[0]);
            return arith::SelectOp::create(nb, loc, before, key,
                                           constant(nb, noKey()))
                .getResult();
          },
          p ? SmallVector<Value>{p} : SmallVector<Value>{});
      note(key, llvm::formatv("finds each row's {0} and {1} in one maximum "
                              "of 64-bit keys (the value's order above the "
                              "column) over its {2} columns{3} "
                              "(fusion-split-arg-reductions)",
                              extremumName(), tieName(), a.extent,
                              p ? ", after its first NaN column, where the "
                                  "search stops"
                                : ""));
      finish(keyedEpilogue(key));
      return;
    }
    // v: the extremum over the columns before the first NaN.
    TypedAttr none = *arith::getNeutralElement(a.extremum);
    Value v = reduce(
        elem, none, extremum,
        [&](OpBuilder &nb, Value x, Value k, ArrayRef<Value> rows) {
          if (!a.isFloat)
            return x;
          Value before = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::slt, k, rows[0]);
          return arith::SelectOp::create(nb, loc, before, x, constant(nb, none))
              .getResult();
        },
        p ? SmallVector<Value>{p} : SmallVector<Value>{});
    // j: the first (strict compare) or last column holding v, before the
    // first NaN.
    SmallVector<Value> jRows{v};
    if (p)
      jRows.push_back(p);
    TypedAttr noColumn = notFound(a.strict);
    Value j = reduce(
        colType, noColumn, a.strict ? Combine(minsi) : Combine(maxsi),
        [&](OpBuilder &nb, Value x, Value k, ArrayRef<Value> rows) {
          Value hit = a.isFloat
                          ? arith::CmpFOp::create(
                                nb, loc, arith::CmpFPredicate::OEQ, x, rows[0])
                                .getResult()
                          : arith::CmpIOp::create(
                                nb, loc, arith::CmpIPredicate::eq, x, rows[0])
                                .getResult();
          if (a.isFloat)
            hit = arith::AndIOp::create(
                nb, loc, hit,
                arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::slt, k,
                                      rows[1]));
          return arith::SelectOp::create(nb, loc, hit, k,
                                         constant(nb, noColumn))
              .getResult();
        },
        jRows);
    note(j, llvm::formatv("finds each row's {0} over its {1} columns, then "
                          "{2} ({3} of 64 bits leave no room for a column in "
                          "a 64-bit key; fusion-split-arg-reductions)",
                          extremumName(), a.extent, tieName(),
                          a.isFloat ? "floats" : "integers"));
    finish(epilogue(v, j, p, noColumn));
  }

private:
  ArgReduction &a;
  linalg::GenericOp g;
  OpBuilder b;
  Location loc;
  MLIRContext *ctx;
  Type colType;
  SmallVector<AffineExpr> rowDims;
  SmallVector<int64_t> rowShape;

  using Combine = function_ref<Value(OpBuilder &, Value, Value)>;
  using Fold = function_ref<Value(OpBuilder &, Value, Value, ArrayRef<Value>)>;

  /// What the report says of the search (fusion-form-groups lists it among
  /// the group's decisions).
  void note(Value reduction, const Twine &text) {
    reduction.getDefiningOp()->setAttr(kfuse::kNoteAttr,
                                       b.getStringAttr(text));
  }
  const char *extremumName() const { return isMax() ? "maximum" : "minimum"; }
  const char *tieName() const {
    return a.strict ? "the first column holding it" : "the last column holding it";
  }

  /// Replaces the index result by `index` and the extremum, if read, by a
  /// reduction of its own; erases the original.
  void finish(Value index) {
    Value value = g.getResult(a.valueResult);
    if (!value.use_empty())
      value.replaceAllUsesWith(extremumAlone());
    g.getResult(1 - a.valueResult).replaceAllUsesWith(index);
    g.erase();
  }

  /// Whether v and j come from one maximum over 64-bit keys: 32 bits of
  /// element order (floats of at most 32 bits, integers of at most 32) and
  /// 32 of column.
  bool keyed() const {
    Type t = a.x.getType();
    if (colType.getIntOrFloatBitWidth() != 32 || !t.isIntOrFloat())
      return false;
    if (isa<FloatType>(t)) // (f16 and bf16 widen exactly to f32)
      return t.isF32() || t.isF16() || t.isBF16();
    return t.getIntOrFloatBitWidth() <= 32;
  }
  bool isSigned() const {
    return isa<arith::MaxSIOp, arith::MinSIOp>(a.extremum);
  }
  bool isMax() const {
    return isa<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(a.extremum);
  }

  /// No key: below every element's.
  TypedAttr noKey() {
    return b.getIntegerAttr(b.getI64Type(), APInt::getSignedMinValue(64));
  }

  Value i32(OpBuilder &nb, int64_t v) {
    return arith::ConstantIntOp::create(nb, loc, nb.getI32Type(), v);
  }

  /// f32 bits <-> signed order: the negative half reversed (its own
  /// inverse).
  Value flipNegatives(OpBuilder &nb, Value bits) {
    Value sign = arith::ShRSIOp::create(nb, loc, bits, i32(nb, 31));
    Value mask = arith::AndIOp::create(nb, loc, sign, i32(nb, 0x7FFFFFFF));
    return arith::XOrIOp::create(nb, loc, bits, mask);
  }

  /// The element's place in the search as a signed i32 (see the header).
  Value orderOf(OpBuilder &nb, Value x) {
    Type t = x.getType();
    Value s;
    if (isa<FloatType>(t)) {
      Value wide = t.isF32() ? x
                             : arith::ExtFOp::create(nb, loc, nb.getF32Type(), x)
                                   .getResult();
      Value bits = arith::BitcastOp::create(nb, loc, nb.getI32Type(), wide);
      s = flipNegatives(nb, bits);
      // -0 (bits 0x80000000, order -1) as +0
      Value negZero = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                            s, i32(nb, -1));
      s = arith::SelectOp::create(nb, loc, negZero, i32(nb, 0), s);
      if (!isMax())
        s = arith::XOrIOp::create(nb, loc, s, i32(nb, -1));
      if (!a.nanFirst) // (keys from the first NaN on are masked)
        return s;
      Value nan =
          arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNO, x, x);
      return arith::SelectOp::create(nb, loc, nan, i32(nb, 0x7FFFFFFF), s);
    }
    if (t.getIntOrFloatBitWidth() == 32)
      s = x;
    else if (isSigned())
      s = arith::ExtSIOp::create(nb, loc, nb.getI32Type(), x);
    else
      s = arith::ExtUIOp::create(nb, loc, nb.getI32Type(), x);
    if (!isSigned())
      s = arith::XOrIOp::create(nb, loc, s, i32(nb, INT32_MIN));
    if (!isMax())
      s = arith::XOrIOp::create(nb, loc, s, i32(nb, -1));
    return s;
  }

  /// The element whose order is `s` (a NaN for the top of a float search;
  /// +0 for either zero).
  Value elementOf(OpBuilder &nb, Value s) {
    Type t = a.x.getType();
    if (!isMax())
      s = arith::XOrIOp::create(nb, loc, s, i32(nb, -1));
    if (isa<FloatType>(t)) {
      Value wide = arith::BitcastOp::create(nb, loc, nb.getF32Type(),
                                            flipNegatives(nb, s));
      return t.isF32() ? wide
                       : arith::TruncFOp::create(nb, loc, t, wide).getResult();
    }
    if (!isSigned())
      s = arith::XOrIOp::create(nb, loc, s, i32(nb, INT32_MIN));
    if (t.getIntOrFloatBitWidth() < 32)
      s = arith::TruncIOp::create(nb, loc, t, s);
    return s;
  }

  /// order(x) << 32 | (strict ? ~k : k + 1), k the i32 column.
  Value keyOf(OpBuilder &nb, Value x, Value k) {
    Type i64 = nb.getI64Type();
    Value high = arith::ShLIOp::create(
        nb, loc, arith::ExtSIOp::create(nb, loc, i64, orderOf(nb, x)),
        arith::ConstantIntOp::create(nb, loc, i64, 32));
    Value low =
        a.strict
            ? arith::XOrIOp::create(nb, loc, k, i32(nb, -1)).getResult()
            : arith::AddIOp::create(nb, loc, k, i32(nb, 1)).getResult();
    return arith::OrIOp::create(nb, loc, high,
                                arith::ExtUIOp::create(nb, loc, i64, low));
  }

  /// "No column": the largest column number when the first is wanted, the
  /// smallest when the last is.
  TypedAttr notFound(bool first) {
    unsigned w = colType.getIntOrFloatBitWidth();
    return b.getIntegerAttr(colType, first ? APInt::getSignedMaxValue(w)
                                           : APInt::getSignedMinValue(w));
  }

  Value constant(OpBuilder &nb, TypedAttr value) {
    return arith::ConstantOp::create(nb, loc, value);
  }

  /// The operands and maps of the inputs x is computed from.
  void inputsOfX(SmallVector<Value> &ins, SmallVector<AffineMap> &maps) {
    for (unsigned i : a.usedInputs) {
      ins.push_back(g->getOperand(i));
      maps.push_back(g.getIndexingMapsArray()[i]);
    }
  }

  /// Clones the computation of x into a new body whose first arguments are
  /// the inputs of `inputsOfX`.
  Value cloneX(OpBuilder &nb, ValueRange args) {
    IRMapping m;
    for (auto [k, i] : llvm::enumerate(a.usedInputs))
      m.map(g.getBody()->getArgument(i), args[k]);
    for (Operation &op : g.getBody()->without_terminator())
      if (a.slice.contains(&op))
        nb.clone(op, m);
    return m.lookupOrDefault(a.x);
  }

  /// A reduction over the original loops into a new row tensor of `elem`
  /// starting from `start`: acc' = combine(fold(x, k, row values), acc),
  /// where x is the original element, k its column number and the row
  /// values are read from `rows` (row tensors).
  Value reduce(Type elem, TypedAttr start, Combine combine, Fold fold,
               ArrayRef<Value> rows = {}) {
    unsigned loops = g.getNumLoops();
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    inputsOfX(ins, maps);
    AffineMap rowMap = AffineMap::get(loops, 0, rowDims, ctx);
    for (Value r : rows) {
      ins.push_back(r);
      maps.push_back(rowMap);
    }
    maps.push_back(rowMap);
    Value init = filled(elem, start);
    auto red = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
        g.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location, ValueRange args) {
          Value x = cloneX(nb, args);
          Value k = arith::IndexCastOp::create(
              nb, loc, colType, linalg::IndexOp::create(nb, loc, a.redDim));
          SmallVector<Value> rowValues(args.begin() + a.usedInputs.size(),
                                       args.begin() + a.usedInputs.size() +
                                           rows.size());
          linalg::YieldOp::create(
              nb, loc, combine(nb, fold(nb, x, k, rowValues), args.back()));
        });
    return red.getResult(0);
  }

  /// A tensor of the rows' shape filled with `value`.
  Value filled(Type elem, TypedAttr value) {
    Value empty = tensor::EmptyOp::create(b, loc, rowShape, elem);
    Value c = arith::ConstantOp::create(b, loc, value);
    return kfuse::fillGeneric(b, loc, c, empty).getResult(0);
  }

  /// A copy of `op`, the body's extremum or compare (of x and the
  /// accumulator, in either order), applied to `x` and `m`.
  Value applyTo(OpBuilder &nb, Operation *op, Value x, Value m) {
    IRMapping map;
    map.map(a.x, x);
    map.map(op->getOperand(0) == a.x ? op->getOperand(1) : op->getOperand(0), m);
    return nb.clone(*op, map)->getResult(0);
  }

  /// Whether `x` passes the original body's compare against `m`.
  Value passes(OpBuilder &nb, Value x, Value m) {
    return applyTo(nb, a.compare, x, m);
  }

  /// A row epilogue over `rows` (row tensors) and the initial value m0:
  /// `body(rows' values, m0's)` gives (take, column), and the result is the
  /// column (in the index result's type) where take, else the initial index.
  Value rowEpilogue(
      ArrayRef<Value> rows,
      function_ref<std::pair<Value, Value>(OpBuilder &, ValueRange, Value)>
          body) {
    unsigned loops = g.getNumLoops();
    llvm::SmallBitVector red(loops);
    red.set(a.redDim);
    unsigned valueInit = g.getNumDpsInputs() + a.valueResult;
    unsigned indexInit = g.getNumDpsInputs() + 1 - a.valueResult;
    // (m0 is read here and accumulated into by the extremum's reduction;
    // planning gives each use of a fill its own copy.)
    Value m0 = g->getOperand(valueInit), i0 = g->getOperand(indexInit);
    SmallVector<Value> ins(rows);
    ins.push_back(m0);
    SmallVector<AffineMap> maps(rows.size(),
                                b.getMultiDimIdentityMap(loops - 1));
    maps.push_back(compressDims(g.getIndexingMapsArray()[valueInit], red));
    maps.push_back(compressDims(g.getIndexingMapsArray()[indexInit], red));
    Type indexType = getElementTypeOrSelf(i0.getType());
    auto e = linalg::GenericOp::create(
        b, loc, TypeRange{i0.getType()}, ins, ValueRange{i0}, maps,
        SmallVector<utils::IteratorType>(loops - 1,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location, ValueRange args) {
          auto [take, col] =
              body(nb, args.take_front(rows.size()), args[rows.size()]);
          unsigned colBits = col.getType().getIntOrFloatBitWidth();
          if (isa<IndexType>(indexType))
            col = arith::IndexCastOp::create(nb, loc, indexType, col);
          else if (indexType.getIntOrFloatBitWidth() > colBits)
            col = arith::ExtSIOp::create(nb, loc, indexType, col);
          else if (indexType.getIntOrFloatBitWidth() < colBits)
            col = arith::TruncIOp::create(nb, loc, indexType, col);
          linalg::YieldOp::create(
              nb, loc,
              arith::SelectOp::create(nb, loc, take, col, args.back())
                  .getResult());
        });
    for (NamedAttribute attr : g->getDiscardableAttrs())
      e->setAttr(attr.getName(), attr.getValue());
    return e.getResult(0);
  }

  /// numpy's form: only where m0 is not NaN (its compare `ugt` alone would
  /// pass any element against a NaN).
  Value whereM0Ordered(OpBuilder &nb, Value take, Value m0) {
    if (!a.nanFirst)
      return take;
    return arith::AndIOp::create(
        nb, loc,
        arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::ORD, m0, m0),
        take);
  }

  /// The row epilogue: the column found where the extremum passes the
  /// original compare against the initial value, else the initial index.
  /// NaN first: the initial index if m0 is NaN, else the first NaN's column
  /// if there is one, else as above.
  Value epilogue(Value v, Value j, Value p, TypedAttr noColumn) {
    SmallVector<Value> rows{v, j};
    if (a.nanFirst)
      rows.push_back(p);
    return rowEpilogue(rows, [&](OpBuilder &nb, ValueRange r, Value m0) {
      Value found = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne,
                                          r[1], constant(nb, noColumn));
      Value take = arith::AndIOp::create(nb, loc, passes(nb, r[0], m0), found);
      Value col = r[1];
      if (a.nanFirst) {
        Value nan = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne,
                                          r[2], constant(nb, noColumn));
        col = arith::SelectOp::create(nb, loc, nan, r[2], col);
        take = arith::OrIOp::create(nb, loc, nan, take);
      }
      return std::make_pair(whereM0Ordered(nb, take, m0), col);
    });
  }

  /// The row epilogue of a keyed search: the key's column where a key was
  /// found and its element passes the original compare against the initial
  /// value (a NaN passes numpy's `ugt`), else the initial index.
  Value keyedEpilogue(Value key) {
    return rowEpilogue(key, [&](OpBuilder &nb, ValueRange r, Value m0) {
      Type i64 = nb.getI64Type();
      Value found = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne,
                                          r[0], constant(nb, noKey()));
      Value order = arith::TruncIOp::create(
          nb, loc, nb.getI32Type(),
          arith::ShRSIOp::create(
              nb, loc, r[0], arith::ConstantIntOp::create(nb, loc, i64, 32)));
      Value col = arith::TruncIOp::create(nb, loc, nb.getI32Type(), r[0]);
      col = a.strict ? arith::XOrIOp::create(nb, loc, col, i32(nb, -1))
                           .getResult()
                     : arith::SubIOp::create(nb, loc, col, i32(nb, 1))
                           .getResult();
      Value take = arith::AndIOp::create(
          nb, loc, passes(nb, elementOf(nb, order), m0), found);
      return std::make_pair(whereM0Ordered(nb, take, m0), col);
    });
  }

  /// The extremum alone, from the original initial value, with the original
  /// combining op (bit for bit what the original computed).
  Value extremumAlone() {
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    inputsOfX(ins, maps);
    unsigned valueInit = g.getNumDpsInputs() + a.valueResult;
    maps.push_back(g.getIndexingMapsArray()[valueInit]);
    Value m0 = g->getOperand(valueInit);
    auto red = linalg::GenericOp::create(
        b, loc, TypeRange{m0.getType()}, ins, ValueRange{m0}, maps,
        g.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location, ValueRange args) {
          linalg::YieldOp::create(
              nb, loc, applyTo(nb, a.extremum, cloneX(nb, args), args.back()));
        });
    for (NamedAttribute attr : g->getDiscardableAttrs())
      red->setAttr(attr.getName(), attr.getValue());
    return red.getResult(0);
  }
};

struct SplitArgReductionsPass
    : kfuse::impl::SplitArgReductionsBase<SplitArgReductionsPass> {
  void runOnOperation() override {
    SmallVector<ArgReduction> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (auto a = match(g))
        found.push_back(*a);
    });
    if (found.empty())
      return markAllAnalysesPreserved();
    for (ArgReduction &a : found)
      Splitter(a).run();
  }
};

} // namespace
