//===- Guards.cpp - gathers read in bounds, bad indices reported ----------===//
//
// fusion-guard-gathers (tensors, end of fusion-normalize): a tensor.extract
// in a generic body whose indices are not provably within their dimensions
// reads at a clamped index, and its value carries a fusion.guard saying
// where it is meaningful.
//
// fusion-lower-guards (after code generation): each guard becomes its value
// and, where its condition fails, a store of 1 into the first of its
// message's two words of @kfuse_status and an atomic exchange of the failing
// index into the second. The runtimes read that buffer after a call (see
// kfuse.runtime.plan, buffer kind "status").
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace kfuse {
#define GEN_PASS_DEF_GUARDGATHERS
#define GEN_PASS_DEF_LOWERGUARDS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kStatusName = "kfuse_status";
constexpr llvm::StringLiteral kGuardsAttr = "kfuse.guards";

unsigned bitsOf(Type t) {
  if (t.isIndex())
    return IndexType::kInternalStorageBitWidth;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth();
  return 0;
}

/// Integer ranges of the values of one generic body: loop indices within
/// their extents, constants, and what ops with InferIntRangeInterface make
/// of those; anything else (an input's elements) may be any value.
class BodyRanges {
public:
  explicit BodyRanges(linalg::GenericOp g) : loops(g.getStaticLoopRanges()) {}

  std::optional<ConstantIntRanges> of(Value v, int depth = 0) {
    unsigned bits = bitsOf(v.getType());
    if (bits == 0)
      return std::nullopt;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    ConstantIntRanges r = compute(v, bits, depth);
    memo.try_emplace(v, r);
    return r;
  }

private:
  SmallVector<int64_t> loops;
  DenseMap<Value, ConstantIntRanges> memo;

  ConstantIntRanges compute(Value v, unsigned bits, int depth) {
    ConstantIntRanges any = ConstantIntRanges::maxRange(bits);
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return ConstantIntRanges::constant(c.sextOrTrunc(bits));
    Operation *op = v.getDefiningOp();
    if (!op || depth > 64)
      return any;
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      int64_t n = index.getDim() < loops.size() ? loops[index.getDim()]
                                                : ShapedType::kDynamic;
      if (ShapedType::isDynamic(n) || n <= 0)
        return any;
      return ConstantIntRanges::fromSigned(APInt(bits, 0), APInt(bits, n - 1));
    }
    auto infer = dyn_cast<InferIntRangeInterface>(op);
    if (!infer)
      return any;
    SmallVector<ConstantIntRanges> args;
    for (Value operand : op->getOperands()) {
      std::optional<ConstantIntRanges> r = of(operand, depth + 1);
      if (!r)
        return any;
      args.push_back(*r);
    }
    std::optional<ConstantIntRanges> result;
    infer.inferResultRanges(args, [&](Value out, const ConstantIntRanges &r) {
      if (out == v)
        result = r;
    });
    return result ? *result : any;
  }
};

/// "file:line:col" of `loc` ("line L, column C" without a file name), or an
/// empty string.
std::string where(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      StringRef name = file.getFilename().strref();
      // (text parsed from a string has no file name: "-")
      text = (name.empty() || name == "-"
                  ? "line " + Twine(file.getLine()) + ", column " +
                        Twine(file.getColumn())
                  : name + ":" + Twine(file.getLine()) + ":" +
                        Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// What the gathered tensor is, for the message.
std::string describe(Value tensor) {
  std::string type;
  llvm::raw_string_ostream os(type);
  os << tensor.getType();
  if (auto arg = dyn_cast<BlockArgument>(tensor))
    if (isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      return "input #" + std::to_string(arg.getArgNumber()) + " (" + type +
             ")";
  if (Operation *def = tensor.getDefiningOp();
      def && def->hasTrait<OpTrait::ConstantLike>())
    return "a constant " + type;
  return "a " + type;
}

struct GuardGathersPass
    : kfuse::impl::GuardGathersBase<GuardGathersPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, tensor::ExtractOp>> extracts;
    getOperation().walk([&](linalg::GenericOp g) {
      for (auto extract : g.getBody()->getOps<tensor::ExtractOp>())
        extracts.push_back({g, extract});
    });
    if (extracts.empty())
      return markAllAnalysesPreserved();
    DenseMap<Operation *, std::unique_ptr<BodyRanges>> ranges;
    for (auto [g, extract] : extracts) {
      std::unique_ptr<BodyRanges> &r = ranges[g];
      if (!r)
        r = std::make_unique<BodyRanges>(g);
      guard(g, extract, *r);
    }
  }

  void guard(linalg::GenericOp g, tensor::ExtractOp extract,
             BodyRanges &ranges) {
    RankedTensorType type = extract.getTensor().getType();
    Location loc = extract.getLoc();
    OpBuilder b(extract);
    Value ok;
    SmallVector<Value> at(extract.getIndices());
    SmallVector<int64_t> outside; // (the dimensions checked)
    SmallVector<Value> checks;    // (whether each is in range)
    bool empty = false;
    for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
      int64_t n = type.getDimSize(d);
      if (n == 0) {
        empty = true;
        continue;
      }
      if (!ShapedType::isDynamic(n)) {
        std::optional<ConstantIntRanges> r = ranges.of(index);
        if (r && r->smin().sge(0) && r->smax().sle(n - 1))
          continue;
      }
      Value size;
      if (ShapedType::isDynamic(n)) {
        OpBuilder beforeGeneric(g); // (the size, outside the body)
        size = tensor::DimOp::create(beforeGeneric, loc, extract.getTensor(), d);
      } else {
        size = arith::ConstantIndexOp::create(b, loc, n);
      }
      Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       index, size);
      at[d] = arith::SelectOp::create(b, loc, in, index,
                                      arith::ConstantIndexOp::create(b, loc, 0));
      ok = ok ? arith::AndIOp::create(b, loc, ok, in).getResult() : in;
      outside.push_back(d);
      checks.push_back(in);
    }
    if (!empty && outside.empty())
      return;
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "index out of range in a gather from " << describe(extract.getTensor())
       << ": ";
    if (empty) {
      os << "it has no elements";
    } else {
      os << (outside.size() == 1 ? "dimension " : "dimensions ");
      llvm::interleave(
          outside, os,
          [&](int64_t d) {
            os << d << " (";
            if (type.isDynamicDim(d))
              os << "dynamic size";
            else
              os << "size " << type.getDimSize(d);
            os << ")";
          },
          ", ");
    }
    if (std::string place = where(loc); !place.empty())
      os << " (tensor.extract at " << place << ")";
    Value value;
    // The index to report: the first checked one out of range.
    Value bad;
    if (empty) {
      Type t = type.getElementType();
      value = arith::ConstantOp::create(b, loc, b.getZeroAttr(t));
      ok = arith::ConstantIntOp::create(b, loc, 0, 1);
    } else {
      value = tensor::ExtractOp::create(b, loc, extract.getTensor(), at);
      for (size_t i = outside.size(); i-- > 0;) {
        Value index = arith::IndexCastOp::create(
            b, loc, b.getI64Type(), extract.getIndices()[outside[i]]);
        bad = bad ? arith::SelectOp::create(b, loc, checks[i], bad, index)
                        .getResult()
                  : index;
      }
    }
    Value guarded = kfuse::fusion::GuardOp::create(
        b, loc, value.getType(), ok, value, message, bad);
    extract.getResult().replaceAllUsesWith(guarded);
    extract.erase();
  }
};

struct LowerGuardsPass : kfuse::impl::LowerGuardsBase<LowerGuardsPass> {
  using LowerGuardsBase::LowerGuardsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<kfuse::fusion::GuardOp> guards;
    module.walk([&](kfuse::fusion::GuardOp g) { guards.push_back(g); });
    if (guards.empty())
      return markAllAnalysesPreserved();
    llvm::MapVector<StringRef, int64_t> words;
    for (kfuse::fusion::GuardOp g : guards) {
      if (g->getParentOfType<gpu::GPUModuleOp>()) {
        g.emitError() << "fusion-lower-guards: a fusion.guard in an outlined "
                         "kernel (run the pass before gpu-kernel-outlining)";
        return signalPassFailure();
      }
      words.try_emplace(g.getMessage(), int64_t(words.size()));
    }
    if (SymbolTable::lookupSymbolIn(module, kStatusName)) {
      module.emitError() << "fusion-lower-guards: the module already has a "
                            "symbol named @"
                         << kStatusName;
      return signalPassFailure();
    }
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    Location loc = module.getLoc();
    // (two words a guard: whether it failed, and an index that did)
    auto type = MemRefType::get({2 * int64_t(words.size())}, mb.getI64Type());
    auto zeros = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), mb.getI64Type()),
        mb.getI64IntegerAttr(0).getValue());
    auto global = memref::GlobalOp::create(
        mb, loc, kStatusName, /*sym_visibility=*/StringAttr(), type, zeros,
        /*constant=*/false, /*alignment=*/IntegerAttr());
    SmallVector<Attribute> messages;
    for (auto &entry : words)
      messages.push_back(mb.getStringAttr(entry.first));
    global->setAttr(kGuardsAttr, mb.getArrayAttr(messages));

    // The buffer, taken once on the host: before the outermost launch
    // holding a guard, else at the start of its function.
    DenseMap<Operation *, Value> status;
    auto statusFor = [&](Operation *guard) -> Value {
      Operation *anchor = nullptr;
      for (Operation *p = guard->getParentOp(); p; p = p->getParentOp()) {
        if (isa<gpu::LaunchOp>(p))
          anchor = p;
        if (isa<FunctionOpInterface>(p)) {
          if (!anchor)
            anchor = p;
          break;
        }
      }
      if (!anchor)
        return Value();
      Value &s = status[anchor];
      if (!s) {
        OpBuilder hb(anchor);
        if (auto func = dyn_cast<FunctionOpInterface>(anchor))
          hb.setInsertionPointToStart(&func.getFunctionBody().front());
        s = memref::GetGlobalOp::create(hb, anchor->getLoc(), type,
                                        kStatusName);
      }
      return s;
    };
    for (kfuse::fusion::GuardOp g : guards) {
      Value buffer = statusFor(g);
      if (!buffer) {
        g.emitError() << "fusion-lower-guards: a fusion.guard outside any "
                         "function";
        return signalPassFailure();
      }
      OpBuilder b(g);
      Location l = g.getLoc();
      Value ok = g.getOk();
      if (isa<VectorType>(ok.getType()))
        ok = vector::ReductionOp::create(b, l, vector::CombiningKind::AND, ok);
      Value bad = arith::XOrIOp::create(b, l, ok,
                                        arith::ConstantIntOp::create(b, l, 1, 1));
      // (the store goes last in the block: a store before later loads
      // would keep LLVM from moving them, e.g. into the branch of the one
      // thread that uses a row value)
      if (Operation *end = g->getBlock()->getTerminator())
        b.setInsertionPoint(end);
      auto branch = scf::IfOp::create(b, l, bad, /*withElseRegion=*/false);
      OpBuilder tb = branch.getThenBodyBuilder();
      int64_t word = 2 * words[g.getMessage()];
      // (the flag: one aligned 64-bit store of 1)
      llvm::MaybeAlign eight(8);
      memref::StoreOp::create(
          tb, l, arith::ConstantIntOp::create(tb, l, 1, 64), buffer,
          ValueRange{arith::ConstantIndexOp::create(tb, l, word)},
          /*nontemporal=*/false, eight);
      // An index that failed (on vectors, each failing lane's in turn: the
      // last one stays); a guard without one leaves the word 0, an index
      // that cannot be out of range but in an empty dimension. Threads that
      // fail at once store different indices to one word: an atomic
      // exchange each, so that one of them stays, whole, and no store races
      // with another (the flag's stores all write 1).
      if (Value index = g.getIndex()) {
        Value at = arith::ConstantIndexOp::create(tb, l, word + 1);
        auto store = [&](OpBuilder &sb, Value v) {
          memref::AtomicRMWOp::create(sb, l, arith::AtomicRMWKind::assign, v,
                                      buffer, ValueRange{at});
        };
        auto vt = dyn_cast<VectorType>(index.getType());
        if (!vt) {
          store(tb, index);
        } else {
          Value okv = g.getOk();
          for (int64_t lane = 0; lane < vt.getNumElements(); ++lane) {
            Value laneOk = vector::ExtractOp::create(tb, l, okv, lane);
            Value laneBad = arith::XOrIOp::create(
                tb, l, laneOk, arith::ConstantIntOp::create(tb, l, 1, 1));
            auto laneIf =
                scf::IfOp::create(tb, l, laneBad, /*withElseRegion=*/false);
            OpBuilder lb = laneIf.getThenBodyBuilder();
            store(lb, vector::ExtractOp::create(lb, l, index, lane));
          }
        }
      }
      g.getResult().replaceAllUsesWith(g.getValue());
      g.erase();
    }
    if (!takeFunction.empty())
      addTakeFunction(module, type);
  }

  /// func @<take-function>(%out: memref<Nxi32>): out = status; status = 0.
  void addTakeFunction(ModuleOp module, MemRefType type) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto func = func::FuncOp::create(mb, loc, takeFunction,
                                     mb.getFunctionType({type}, {}));
    OpBuilder b = OpBuilder::atBlockBegin(func.addEntryBlock());
    Value status = memref::GetGlobalOp::create(b, loc, type, kStatusName);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      Value at = arith::ConstantIndexOp::create(b, loc, i);
      Value word = memref::LoadOp::create(b, loc, status, ValueRange{at});
      memref::StoreOp::create(b, loc, word, func.getArgument(0), ValueRange{at});
      memref::StoreOp::create(b, loc, zero, status, ValueRange{at});
    }
    func::ReturnOp::create(b, loc);
  }
};

} // namespace
