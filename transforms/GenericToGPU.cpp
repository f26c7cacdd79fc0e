//===- GenericToGPU.cpp - elementwise kernels as vectorized gpu.launch ----===//
//
// Lowers each tagged elementwise linalg.generic on memrefs to one gpu.launch
// that follows the group's #fusion.strategy. Every operand is viewed as a
// flat 1-D memref; a thread handles `vector` consecutive elements of the
// flattened iteration space at a time, which (since the innermost extent is
// a multiple of `vector`) never crosses a row. Per operand the innermost
// loop dimension decides the access:
//   contiguous - the operand's last index is that dimension: one vector.load
//   splat      - the operand does not depend on it: one scalar load, broadcast
//   gather     - anything else: `vector` scalar loads
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/RowKernelEmitter.h"
#include "transforms/Utils.h"

#include "llvm/ADT/MapVector.h"

#include <functional>

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "fusion-generic-to-gpu"

namespace kfuse {
#define GEN_PASS_DEF_GENERICTOGPU
#define GEN_PASS_DEF_CLUSTERDIMS
#define GEN_PASS_DEF_ALIGNWORKGROUP
#define GEN_PASS_DEF_EXTERNDYNAMICSHARED
#define GEN_PASS_DEF_PROGRAMMATICLAUNCH
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

enum class Access { Contiguous, Splat, Gather };

struct Operand {
  Value flat;                   // 1-D view of the buffer
  AffineMap map;                // loop indices -> buffer indices
  SmallVector<int64_t> strides; // strides of the buffer (row-major unless
                                // a view: a slice of an argument)
  bool view = false;            // strided, not the identity layout
  Access access;
  Type elementType;
};

class KernelEmitter {
public:
  KernelEmitter(linalg::GenericOp op, fusion::StrategyAttr strategy)
      : op(op), strategy(strategy), width(strategy.getVector()) {}

  /// Emits the kernel: a launch of its own, in place of the op.
  LogicalResult emit();
  /// Emits the op's work at `kb`, inside a launch whose blocks
  /// [first, first + strategy's blocks) are its own (`blockId` the launch's
  /// block index, `threadId` the thread's in its block); erases nothing.
  LogicalResult emitBody(OpBuilder &kb, Value blockId, Value threadId,
                         int64_t first);
  fusion::StrategyAttr getStrategy() const { return strategy; }

private:
  linalg::GenericOp op;
  fusion::StrategyAttr strategy;
  int64_t width;
  SmallVector<int64_t> loops;
  SmallVector<Operand> operands; // inputs then outputs

  Type vectorOf(Type scalar) const {
    return width == 1 ? scalar : VectorType::get({width}, scalar);
  }
  Value offsetOf(OpBuilder &b, Location loc, const Operand &operand,
                 ArrayRef<Value> indices, int64_t lane);
  Value load(OpBuilder &b, Location loc, const Operand &operand,
             ArrayRef<Value> indices);
  void store(OpBuilder &b, Location loc, const Operand &operand,
             ArrayRef<Value> indices, Value value);
  FailureOr<SmallVector<Value>> compute(OpBuilder &b, Location loc,
                                        ArrayRef<Value> inputs,
                                        ArrayRef<Value> indices);
  LogicalResult prepare(OpBuilder &b);
};

/// How an operand of memref type `type` read through `map` is accessed by
/// `width` consecutive iterations of the innermost loop.
static Access classify(AffineMap map, unsigned innermost, MemRefType type,
                       int64_t width) {
  // (a view, a slice of an argument: whole vectors only where it is
  // contiguous along its last dimension and each of its rows, its offset
  // included, starts on a boundary of the vector)
  if (!type.getLayout().isIdentity() && width > 1) {
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    bool aligned = succeeded(type.getStridesAndOffset(strides, offset)) &&
                   offset % width == 0 && !strides.empty() &&
                   strides.back() == 1;
    for (int64_t d = 0; aligned && d + 1 < type.getRank(); ++d)
      aligned = type.getDimSize(d) == 1 || strides[d] % width == 0;
    if (!aligned) {
      for (AffineExpr e : map.getResults())
        if (e.isFunctionOfDim(innermost))
          return Access::Gather;
      return Access::Splat;
    }
  }
  if (map.getNumDims() == 0)
    return Access::Splat;
  unsigned uses = 0;
  for (AffineExpr e : map.getResults())
    uses += e.isFunctionOfDim(innermost);
  if (uses == 0)
    return Access::Splat;
  if (uses == 1 && map.getNumResults() > 0) {
    AffineExpr lastExpr = map.getResults().back();
    auto last = dyn_cast<AffineDimExpr>(lastExpr);
    if (last && last.getPosition() == innermost)
      return Access::Contiguous;
    // A slice along the last dimension, d + c: still one aligned vector when
    // c and the rows of the buffer are multiples of the vector.
    if (auto sum = dyn_cast<AffineBinaryOpExpr>(lastExpr);
        sum && sum.getKind() == AffineExprKind::Add) {
      auto dim = dyn_cast<AffineDimExpr>(sum.getLHS());
      auto cst = dyn_cast<AffineConstantExpr>(sum.getRHS());
      if (dim && cst && dim.getPosition() == innermost &&
          cst.getValue() % width == 0 && type.getShape().back() % width == 0)
        return Access::Contiguous;
    }
  }
  return Access::Gather;
}

LogicalResult KernelEmitter::prepare(OpBuilder &b) {
  loops = op.getStaticLoopRanges();
  if (llvm::any_of(loops, ShapedType::isDynamic))
    return op.emitError("fusion-generic-to-gpu: dynamic loop ranges are not "
                        "supported");
  if (!loops.empty() && loops.back() % width != 0)
    return op.emitError() << "fusion-generic-to-gpu: innermost extent "
                          << loops.back() << " is not a multiple of the "
                          << "strategy's vector width " << width;
  unsigned innermost = loops.empty() ? 0 : loops.size() - 1;
  for (OpOperand &opOperand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(opOperand.get().getType());
    // (inputs may be views of static strides and offset: slices of the
    // program's arguments)
    bool isInput = opOperand.getOperandNumber() < op.getNumDpsInputs();
    if (!type || !type.hasStaticShape() ||
        !(type.getLayout().isIdentity() || (isInput && hasStaticStrides(type))))
      return op.emitError() << "fusion-generic-to-gpu: operand #"
                            << opOperand.getOperandNumber()
                            << " must be a memref of static shape with the "
                               "identity layout"
                            << (isInput ? " or static strides" : "")
                            << ", got " << opOperand.get().getType();
    Operand operand;
    operand.map = op.getMatchingIndexingMap(&opOperand);
    operand.elementType = type.getElementType();
    operand.access = classify(operand.map, innermost, type, width);
    bool isOutput = opOperand.getOperandNumber() >= op.getNumDpsInputs();
    if (isOutput && llvm::any_of(operand.map.getResults(), [](AffineExpr e) {
          return !isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return op.emitError()
             << "fusion-generic-to-gpu: output #"
             << opOperand.getOperandNumber() - op.getNumDpsInputs()
             << " is written through the indexing map "
             << AffineMapAttr::get(operand.map)
             << "; only loop indices and constants are supported as results";
    if (width > 1 && operand.elementType.isInteger(1))
      return op.emitError("fusion-generic-to-gpu: boolean operands need "
                          "vector width 1");
    int64_t stride = 1;
    operand.strides.assign(type.getRank(), 1);
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      operand.strides[d] = stride;
      stride *= type.getDimSize(d);
    }
    Location loc = op.getLoc();
    operand.view = !type.getLayout().isIdentity();
    if (operand.view) {
      // A view: its buffer from the view's offset to its last element, 1-D,
      // addressed through the view's strides.
      int64_t offset = 0;
      operand.strides.clear();
      (void)type.getStridesAndOffset(operand.strides, offset);
      int64_t span = 1;
      for (auto [n, st] : llvm::zip(type.getShape(), operand.strides))
        span += (n - 1) * st;
      operand.flat = memref::ReinterpretCastOp::create(
          b, loc,
          MemRefType::get({span}, type.getElementType(),
                          StridedLayoutAttr::get(b.getContext(), offset, {1}),
                          type.getMemorySpace()),
          opOperand.get(), offset, ArrayRef<int64_t>{span},
          ArrayRef<int64_t>{1});
    } else if (type.getRank() == 1) {
      operand.flat = opOperand.get();
    } else {
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < type.getRank(); ++d)
        all[0].push_back(d);
      if (type.getRank() == 0)
        operand.flat = memref::ExpandShapeOp::create(
            b, loc, MemRefType::get({1}, type.getElementType()),
            opOperand.get(), ArrayRef<ReassociationIndices>{});
      else
        operand.flat =
            memref::CollapseShapeOp::create(b, loc, opOperand.get(), all);
    }
    if (opOperand.getOperandNumber() >= op.getNumDpsInputs() &&
        operand.access == Access::Splat && !loops.empty())
      return op.emitError("fusion-generic-to-gpu: an output that does not "
                          "vary along the innermost loop is not supported");
    operands.push_back(operand);
  }
  return success();
}

Value KernelEmitter::offsetOf(OpBuilder &b, Location loc,
                              const Operand &operand, ArrayRef<Value> indices,
                              int64_t lane) {
  // `indices` ends with the linear element index: an operand laid out like
  // the iteration space is addressed by it directly.
  if (!operand.view && operand.map.isIdentity() &&
      operand.map.getNumResults() == loops.size()) {
    Value linear = indices.back();
    if (lane == 0)
      return linear;
    return arith::AddIOp::create(b, loc, linear,
                                 arith::ConstantIndexOp::create(b, loc, lane));
  }
  Value offset = arith::ConstantIndexOp::create(b, loc, 0);
  // The loop indices of this lane (the innermost one advanced by `lane`).
  SmallVector<Value> at(indices.take_front(loops.size()));
  if (lane != 0 && !at.empty())
    at.back() = arith::AddIOp::create(
        b, loc, at.back(), arith::ConstantIndexOp::create(b, loc, lane));
  for (auto [pos, expr] : llvm::enumerate(operand.map.getResults())) {
    Value index;
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      index = at[dim.getPosition()];
    else if (auto cst = dyn_cast<AffineConstantExpr>(expr))
      index = arith::ConstantIndexOp::create(b, loc, cst.getValue());
    else // a slice or strided view folded into the map: d * s + c
      index = affine::expandAffineExpr(b, loc, expr, at, {});
    Value term = arith::MulIOp::create(
        b, loc, index,
        arith::ConstantIndexOp::create(b, loc, operand.strides[pos]));
    offset = arith::AddIOp::create(b, loc, offset, term);
  }
  return offset;
}

Value KernelEmitter::load(OpBuilder &b, Location loc, const Operand &operand,
                          ArrayRef<Value> indices) {
  Type elem = operand.elementType;
  unsigned bytes = std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
  switch (operand.access) {
  case Access::Contiguous:
    if (width > 1) {
      Value offset = offsetOf(b, loc, operand, indices, 0);
      return vector::LoadOp::create(b, loc, cast<VectorType>(vectorOf(elem)),
                                    operand.flat, ValueRange{offset},
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(width * bytes));
    }
    [[fallthrough]];
  case Access::Splat: {
    Value offset = offsetOf(b, loc, operand, indices, 0);
    Value scalar =
        memref::LoadOp::create(b, loc, operand.flat, ValueRange{offset});
    if (width == 1)
      return scalar;
    return vector::BroadcastOp::create(b, loc, vectorOf(elem), scalar);
  }
  case Access::Gather: {
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane)
      lanes.push_back(memref::LoadOp::create(
          b, loc, operand.flat,
          ValueRange{offsetOf(b, loc, operand, indices, lane)}));
    if (width == 1)
      return lanes.front();
    return vector::FromElementsOp::create(
        b, loc, cast<VectorType>(vectorOf(elem)), lanes);
  }
  }
  llvm_unreachable("unknown access");
}

void KernelEmitter::store(OpBuilder &b, Location loc, const Operand &operand,
                          ArrayRef<Value> indices, Value value) {
  Type elem = operand.elementType;
  unsigned bytes = std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
  if (width == 1) {
    memref::StoreOp::create(b, loc, value, operand.flat,
                            ValueRange{offsetOf(b, loc, operand, indices, 0)});
    return;
  }
  if (operand.access == Access::Contiguous) {
    vector::StoreOp::create(b, loc, value, operand.flat,
                            ValueRange{offsetOf(b, loc, operand, indices, 0)},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(width * bytes));
    return;
  }
  for (int64_t lane = 0; lane < width; ++lane) {
    Value v = vector::ExtractOp::create(b, loc, value, lane);
    memref::StoreOp::create(
        b, loc, v, operand.flat,
        ValueRange{offsetOf(b, loc, operand, indices, lane)});
  }
}

FailureOr<SmallVector<Value>>
KernelEmitter::compute(OpBuilder &b, Location loc, ArrayRef<Value> blockValues,
                       ArrayRef<Value> indices) {
  Block *body = op.getBody();
  IRMapping mapping;
  for (auto [arg, v] : llvm::zip(body->getArguments(), blockValues))
    mapping.map(arg, v);
  Operation *failedOp = nullptr;
  auto results = cloneBodyOnVectors(
      b, loc, *body, mapping, width,
      [&](unsigned dim) {
        return std::make_pair(indices[dim], dim == loops.size() - 1);
      },
      &failedOp);
  if (failed(results))
    return failedOp->emitError()
           << "fusion-generic-to-gpu: cannot vectorize '" << failedOp->getName()
           << "' in the body of kernel '"
           << op->getAttrOfType<StringAttr>(kKernelAttr).getValue() << "'";
  return *results;
}

/// The name of the kernel of `op`'s group: all kernels of a program go into
/// one gpu.module (one PTX image), each named after its function and group.
static std::string kernelNameOf(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  return (func.getName() + "_" +
          op->getAttrOfType<StringAttr>(kKernelAttr).getValue())
      .str();
}

static gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, int64_t blocks,
                                  int64_t threads, StringRef kernelName) {
  auto cIdx = kfuse::indexConstants(b, loc);
  Value one = cIdx(1);
  return gpu::LaunchOp::create(
      b, loc, cIdx(blocks), one, one, cIdx(threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, /*workgroupAttributions=*/{},
      /*privateAttributions=*/{}, nullptr, nullptr, nullptr,
      FlatSymbolRefAttr::get(b.getContext(), "kfuse_kernels"),
      FlatSymbolRefAttr::get(b.getContext(), kernelName));
}

LogicalResult KernelEmitter::emit() {
  OpBuilder b(op);
  auto launch = createLaunch(b, op.getLoc(), strategy.getBlocks(),
                             strategy.getThreads(), kernelNameOf(op));
  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  if (failed(emitBody(kb, launch.getBlockIds().x, launch.getThreadIds().x,
                      /*first=*/0))) {
    launch.erase();
    return failure();
  }
  gpu::TerminatorOp::create(kb, op.getLoc());
  op.erase();
  return success();
}

LogicalResult KernelEmitter::emitBody(OpBuilder &kb, Value blockId,
                                      Value threadId, int64_t first) {
  Location loc = op.getLoc();
  loops = op.getStaticLoopRanges();
  int64_t numElements = 1;
  for (int64_t l : loops)
    numElements *= l;
  int64_t numVectors = numElements / width;
  int64_t threads = strategy.getThreads();
  int64_t blocks = strategy.getBlocks();
  int64_t unroll = strategy.getUnroll();
  int64_t stride = threads * blocks; // vectors per grid-wide step
  int64_t fullTrips = numVectors / (stride * unroll);

  auto cIdx = kfuse::indexConstants(loc);
  Value one = cIdx(kb, 1);
  // Views are taken inside the kernel so the host sees only whole buffers.
  if (failed(prepare(kb)))
    return failure();
  Value block = first == 0
                    ? blockId
                    : arith::SubIOp::create(kb, loc, blockId, cIdx(kb, first))
                          .getResult();
  Value tid = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, block, cIdx(kb, threads)),
      threadId);

  unsigned numInputs = op.getNumDpsInputs();
  Block *body = op.getBody();
  // One vector step: loads of every vector first, so they are in flight
  // together, then arithmetic, then stores.
  auto emitVectors = [&](OpBuilder &bb,
                         ArrayRef<Value> vectorIds) -> LogicalResult {
    SmallVector<SmallVector<Value>> indexSets;
    SmallVector<SmallVector<Value>> blockValues;
    for (Value vid : vectorIds) {
      Value linear = arith::MulIOp::create(bb, loc, vid, cIdx(bb, width));
      indexSets.push_back(kfuse::delinearize(bb, loc, linear, loops));
      indexSets.back().push_back(linear);
      SmallVector<Value> values;
      for (auto [i, operand] : llvm::enumerate(operands)) {
        bool needed = body->getArgument(i).use_empty() ? false : true;
        values.push_back(needed ? load(bb, loc, operand, indexSets.back())
                                : Value());
      }
      blockValues.push_back(values);
    }
    SmallVector<SmallVector<Value>> results;
    for (auto [values, indices] : llvm::zip(blockValues, indexSets)) {
      auto r = compute(bb, loc, values, indices);
      if (failed(r))
        return failure();
      results.push_back(*r);
    }
    for (auto [r, indices] : llvm::zip(results, indexSets))
      for (auto [k, v] : llvm::enumerate(r))
        store(bb, loc, operands[numInputs + k], indices, v);
    return success();
  };

  bool ok = true;
  if (fullTrips > 0) {
    auto loop =
        scf::ForOp::create(kb, loc, cIdx(kb, 0), cIdx(kb, fullTrips), one);
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value base = arith::AddIOp::create(
        lb, loc,
        arith::MulIOp::create(lb, loc, loop.getInductionVar(),
                              cIdx(lb, stride * unroll)),
        tid);
    SmallVector<Value> ids;
    for (int64_t k = 0; k < unroll; ++k)
      ids.push_back(
          k == 0 ? base
                 : arith::AddIOp::create(lb, loc, base, cIdx(lb, k * stride))
                       .getResult());
    ok &= succeeded(emitVectors(lb, ids));
  }
  int64_t done = fullTrips * stride * unroll;
  if (done < numVectors) {
    Value start = arith::AddIOp::create(kb, loc, tid, cIdx(kb, done));
    auto loop = scf::ForOp::create(kb, loc, start, cIdx(kb, numVectors),
                                   cIdx(kb, stride));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    ok &= succeeded(emitVectors(lb, {loop.getInductionVar()}));
  }
  return success(ok);
}

/// A multi-tensor kernel (independent elementwise generics over different
/// loops, one group: fusion-form-groups): one launch whose blocks are the
/// generics' blocks end to end, each generic's run by the blocks of its
/// range as its own kernel would (its strategy's vectors, unrolling and
/// grid-wide steps).
static LogicalResult
emitMultiTensorKernel(ArrayRef<linalg::GenericOp> generics) {
  SmallVector<linalg::GenericOp> ops(generics);
  SmallVector<KernelEmitter> members;
  for (linalg::GenericOp op : ops) {
    auto strategy = op->getAttrOfType<fusion::StrategyAttr>(kStrategyAttr);
    if (!strategy)
      return op.emitError("fusion-generic-to-gpu: kernel has no "
                          "#fusion.strategy (run fusion-select-strategy "
                          "first)");
    if (strategy.getThreads() !=
        ops.front()
            ->getAttrOfType<fusion::StrategyAttr>(kStrategyAttr)
            .getThreads())
      return op.emitError("fusion-generic-to-gpu: the generics of a "
                          "multi-tensor kernel must have blocks of as many "
                          "threads");
    members.emplace_back(op, strategy);
  }
  int64_t total = 0;
  for (KernelEmitter &m : members)
    total += m.getStrategy().getBlocks();
  if (total > (int64_t(1) << 31) - 1)
    return ops.front().emitError(
        "fusion-generic-to-gpu: a multi-tensor kernel of more blocks than a "
        "grid holds");
  // (at the last generic: every operand is defined by then)
  OpBuilder b(ops.back());
  Location loc = ops.front().getLoc();
  auto launch =
      createLaunch(b, loc, total, members.front().getStrategy().getThreads(),
                   kernelNameOf(ops.front()));
  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  Value bid = launch.getBlockIds().x;
  int64_t first = 0;
  for (KernelEmitter &m : members) {
    int64_t end = first + m.getStrategy().getBlocks();
    Value in = arith::CmpIOp::create(
        kb, loc, arith::CmpIPredicate::ult, bid,
        arith::ConstantIndexOp::create(kb, loc, end));
    if (first > 0)
      in = arith::AndIOp::create(
          kb, loc,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::uge, bid,
                                arith::ConstantIndexOp::create(kb, loc, first)),
          in);
    auto branch = scf::IfOp::create(kb, loc, in, /*withElseRegion=*/false);
    OpBuilder bb = OpBuilder::atBlockBegin(branch.thenBlock());
    if (failed(m.emitBody(bb, bid, launch.getThreadIds().x, first))) {
      launch.erase();
      return failure();
    }
    first = end;
  }
  gpu::TerminatorOp::create(kb, loc);
  for (linalg::GenericOp op : ops)
    op.erase();
  return success();
}

namespace {
/// One ordered generic's launch (see emitOrderedGeneric): its loops, the
/// inputs it stages, and the kernel's values the loop nest is built from.
class OrderedKernel {
public:
  OrderedKernel(linalg::GenericOp g, StringRef kernelName)
      : g(g), kernelName(kernelName), loc(g.getLoc()), body(g.getBody()),
        numInputs(g.getNumDpsInputs()) {}
  LogicalResult
  emit(const llvm::SmallDenseMap<unsigned, linalg::GenericOp> &fills);

private:
  Value cIdx(OpBuilder &bb, int64_t v) {
    return kfuse::indexConstants(loc)(bb, v);
  }
  /// The inputs to stage (`staged`), the chunk of the innermost loop, the
  /// rows of it a warp stages, and the threads of a block.
  void chooseStaging();
  /// The indices `map` takes at loop indices `at` (indicesOf: the current
  /// point's, `dims`).
  SmallVector<Value> indicesAt(OpBuilder &bb, AffineMap map,
                               ArrayRef<Value> at);
  SmallVector<Value> indicesOf(OpBuilder &bb, AffineMap map) {
    return indicesAt(bb, map, dims);
  }
  /// The body at the current point, the accumulators `carried`.
  FailureOr<SmallVector<Value>> evaluate(OpBuilder &bb, ValueRange carried);
  /// The innermost reduction loop over staged inputs: chunks, each loaded by
  /// the warp into its buffers and walked there, then the rest of the loop
  /// (fewer columns than a chunk) as it is.
  FailureOr<SmallVector<Value>> stagedLoop(OpBuilder &bb, ValueRange carried);
  /// The reduction loops, outermost first, each carrying the accumulators.
  FailureOr<SmallVector<Value>> nest(OpBuilder &bb, unsigned level,
                                     ValueRange carried);

  linalg::GenericOp g;
  StringRef kernelName;
  Location loc;
  Block *body;
  unsigned numInputs;
  SmallVector<int64_t> loops, extents; // (extents: of the parallel loops)
  SmallVector<unsigned> parallel, reduced;
  int64_t total = 1; // (points: a thread each)
  struct Staged {
    OpOperand *operand;
    Type element;
    int64_t bytes;
    Value buffer = {};
  };
  SmallVector<Staged> staged;
  int64_t chunk = 0, rows = 32, threads = 0;
  /// (in the kernel) the thread, its block's first point, and each loop's
  /// index at the current point.
  Value tid, blockStart;
  SmallVector<Value> dims;
  /// The staged inputs' values at the current point, when loaded from
  /// their workgroup buffers.
  llvm::SmallDenseMap<OpOperand *, Value> given;
};
} // namespace

LogicalResult OrderedKernel::emit(
    const llvm::SmallDenseMap<unsigned, linalg::GenericOp> &fills) {
  loops = g.getStaticLoopRanges();
  if (llvm::any_of(loops, ShapedType::isDynamic))
    return g.emitError("fusion-generic-to-gpu: dynamic loop ranges are not "
                       "supported");
  for (auto [d, it] : llvm::enumerate(g.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallel : reduced).push_back(d);
  for (OpOperand &init : g.getDpsInitsMutable()) {
    AffineMap map = g.getMatchingIndexingMap(&init);
    for (unsigned d : reduced)
      if (map.isFunctionOfDim(d))
        return g.emitError() << "fusion-generic-to-gpu: output #"
                             << init.getOperandNumber() - g.getNumDpsInputs()
                             << " of kernel '" << kernelName
                             << "' is indexed by reduction loop d" << d;
  }
  for (Value v : g->getOperands())
    if (auto type = dyn_cast<MemRefType>(v.getType());
        !type || !type.hasStaticShape())
      return g.emitError() << "fusion-generic-to-gpu: operands must be "
                              "memrefs of static shape, got "
                           << v.getType();
  for (unsigned d : parallel) {
    extents.push_back(loops[d]);
    total *= loops[d];
  }
  OpBuilder b(g);
  if (total == 0) { // (no point: nothing to write)
    g.erase();
    return success();
  }
  chooseStaging();
  int64_t blocks = llvm::divideCeil(total, threads);
  if (blocks > (int64_t(1) << 31) - 1)
    return g.emitError("fusion-generic-to-gpu: an ordered kernel of more "
                       "blocks than a grid holds");
  gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads, kernelName);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  for (Staged &s : staged)
    s.buffer = launch.addWorkgroupAttribution(
        MemRefType::get({threads / 32, rows, chunk + 1}, s.element,
                        MemRefLayoutAttrInterface(), workgroup),
        loc);
  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  tid = launch.getThreadIds().x;
  blockStart =
      arith::MulIOp::create(kb, loc, launch.getBlockIds().x, cIdx(kb, threads));
  Value linear = arith::AddIOp::create(kb, loc, blockStart, tid);
  Value inRangeCond = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                            linear, cIdx(kb, total));
  Value point = linear;
  OpBuilder tb(gpu::TerminatorOp::create(kb, loc));
  if (staged.empty())
    tb = OpBuilder::atBlockBegin(
        scf::IfOp::create(tb, loc, inRangeCond, /*withElseRegion=*/false)
            .thenBlock());
  else
    point = arith::MinUIOp::create(tb, loc, linear, cIdx(tb, total - 1));
  dims.assign(loops.size(), Value());
  for (auto [d, v] :
       llvm::zip(parallel, kfuse::delinearize(tb, loc, point, extents)))
    dims[d] = v;
  // The accumulators: every output of a reduction, and the outputs an
  // elementwise body reads.
  SmallVector<Value> accs;
  for (OpOperand &init : g.getDpsInitsMutable()) {
    BlockArgument arg = body->getArgument(init.getOperandNumber());
    if (linalg::GenericOp fill =
            fills.lookup(init.getOperandNumber() - numInputs)) {
      // (the fill's body at the element's indices: its loops are the
      // buffer's dimensions)
      SmallVector<Value> at = indicesOf(tb, g.getMatchingIndexingMap(&init));
      IRMapping mapping;
      for (OpOperand *in : fill.getDpsInputOperands())
        mapping.map(fill.getBody()->getArgument(in->getOperandNumber()),
                    in->get());
      Operation *failedOp = nullptr;
      auto value = cloneBodyOnVectors(
          tb, loc, *fill.getBody(), mapping, /*width=*/1,
          [&](unsigned d) { return std::make_pair(at[d], false); }, &failedOp);
      if (failed(value)) {
        launch.erase();
        return failedOp->emitError()
               << "fusion-generic-to-gpu: cannot evaluate '"
               << failedOp->getName() << "' in the fill of kernel '"
               << kernelName << "'";
      }
      accs.push_back(value->front());
      continue;
    }
    accs.push_back(!reduced.empty() || !arg.use_empty()
                       ? memref::LoadOp::create(
                             tb, loc, init.get(),
                             indicesOf(tb, g.getMatchingIndexingMap(&init)))
                             .getResult()
                       : Value());
  }
  FailureOr<SmallVector<Value>> results = nest(tb, 0, accs);
  if (failed(results)) {
    launch.erase();
    return failure();
  }
  if (!staged.empty()) // (the clamped points store nothing)
    tb = OpBuilder::atBlockBegin(
        scf::IfOp::create(tb, loc, inRangeCond, /*withElseRegion=*/false)
            .thenBlock());
  for (auto [init, v] : llvm::zip(g.getDpsInitsMutable(), *results))
    memref::StoreOp::create(tb, loc, v, init.get(),
                            indicesOf(tb, g.getMatchingIndexingMap(&init)));
  g.erase();
  for (auto &entry : fills)
    entry.second->erase();
  return success();
}

void OrderedKernel::chooseStaging() {
  // The inputs to stage (see above), the chunk of the innermost loop, and
  // the rows of it a warp stages: 32 (a thread's each), or 1 (one thread).
  rows = total == 1 ? 1 : 32;
  if (!reduced.empty()) {
    unsigned inner = reduced.back();
    llvm::SmallPtrSet<Value, 4> written;
    for (OpOperand &init : g.getDpsInitsMutable())
      written.insert(kfuse::viewRoot(init.get()));
    for (OpOperand *in : g.getDpsInputOperands()) {
      auto type = dyn_cast<MemRefType>(in->get().getType());
      if (!type || type.getRank() == 0 ||
          body->getArgument(in->getOperandNumber()).use_empty() ||
          written.contains(kfuse::viewRoot(in->get())))
        continue;
      AffineMap map = g.getMatchingIndexingMap(in);
      auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
      if (!last || last.getPosition() != inner)
        continue;
      // (neighbouring threads read different rows of it)
      bool apart = false, innerElsewhere = false;
      for (AffineExpr e : map.getResults().drop_back()) {
        innerElsewhere |= e.isFunctionOfDim(inner);
        apart |= !parallel.empty() && e.isFunctionOfDim(parallel.back());
      }
      SmallVector<int64_t> strides;
      int64_t offset;
      Type element = type.getElementType();
      unsigned bits =
          element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
      if (innerElsewhere || (!apart && rows != 1) ||
          (bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
          failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        continue;
      staged.push_back({in, element, bits / 8});
      chunk = std::max<int64_t>(chunk, 32 / (bits / 8));
    }
    if (rows == 1) // (a multiple of 32, 256 at most)
      chunk = std::min<int64_t>(256, loops[inner] / 32 * 32);
    if (chunk == 0 || loops[inner] < chunk)
      staged.clear();
  }
  threads = total >= 256 ? 256 : llvm::alignTo(total, 32);
  if (!staged.empty()) {
    // (a workgroup buffer of its rows of a chunk, padded by one element
    // against bank conflicts, for each staged input and warp: at most 40 KiB
    // a block, below the 48 KiB of static shared memory a kernel may have;
    // inputs that need more for a single warp are read directly)
    int64_t perWarp = 0;
    for (Staged &s : staged)
      perWarp += rows * (chunk + 1) * s.bytes;
    if (perWarp > (40 << 10))
      staged.clear();
    else
      threads =
          std::min(threads, 32 * std::min<int64_t>((40 << 10) / perWarp, 8));
  }
}

SmallVector<Value> OrderedKernel::indicesAt(OpBuilder &bb, AffineMap map,
                                            ArrayRef<Value> at) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(affine::expandAffineExpr(bb, loc, e, at, {}));
  return indices;
}

FailureOr<SmallVector<Value>> OrderedKernel::evaluate(OpBuilder &bb,
                                                      ValueRange carried) {
  IRMapping mapping;
  for (OpOperand *in : g.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(in->getOperandNumber());
    if (arg.use_empty())
      continue;
    if (Value v = given.lookup(in)) {
      mapping.map(arg, v);
      continue;
    }
    mapping.map(arg, isa<MemRefType>(in->get().getType())
                         ? memref::LoadOp::create(
                               bb, loc, in->get(),
                               indicesOf(bb, g.getMatchingIndexingMap(in)))
                               .getResult()
                         : in->get());
  }
  for (auto [k, acc] : llvm::enumerate(carried))
    if (acc)
      mapping.map(body->getArgument(numInputs + k), acc);
  Operation *failedOp = nullptr;
  auto results = cloneBodyOnVectors(
      bb, loc, *body, mapping, /*width=*/1,
      [&](unsigned d) { return std::make_pair(dims[d], false); }, &failedOp);
  if (failed(results))
    return failedOp->emitError()
           << "fusion-generic-to-gpu: cannot evaluate '" << failedOp->getName()
           << "' in the body of kernel '" << kernelName << "'";
  return *results;
}

FailureOr<SmallVector<Value>> OrderedKernel::stagedLoop(OpBuilder &bb,
                                                        ValueRange carried) {
  unsigned inner = reduced.back();
  int64_t extent = loops[inner], whole = extent / chunk * chunk;
  Value lane = arith::RemUIOp::create(bb, loc, tid, cIdx(bb, 32));
  Value warp = arith::DivUIOp::create(bb, loc, tid, cIdx(bb, 32));
  Value warpStart = arith::AddIOp::create(
      bb, loc, blockStart, arith::MulIOp::create(bb, loc, warp, cIdx(bb, 32)));
  // (the row of the buffers a thread walks)
  Value mine = rows == 1 ? cIdx(bb, 0) : lane;
  auto chunks = scf::ForOp::create(bb, loc, cIdx(bb, 0), cIdx(bb, whole),
                                   cIdx(bb, chunk), carried);
  OpBuilder cb = OpBuilder::atBlockBegin(chunks.getBody());
  Value start = chunks.getInductionVar();
  // (load k of lane l: element f = 32 k + l of the warp's rows of the
  // chunk, row f / chunk, column f % chunk)
  auto loads = scf::ForOp::create(cb, loc, cIdx(cb, 0),
                                  cIdx(cb, rows * chunk / 32), cIdx(cb, 1));
  {
    OpBuilder lb = OpBuilder::atBlockTerminator(loads.getBody());
    Value f = arith::AddIOp::create(
        lb, loc,
        arith::MulIOp::create(lb, loc, loads.getInductionVar(), cIdx(lb, 32)),
        lane);
    Value row = arith::DivUIOp::create(lb, loc, f, cIdx(lb, chunk));
    Value column = arith::RemUIOp::create(lb, loc, f, cIdx(lb, chunk));
    Value other = arith::MinUIOp::create(
        lb, loc, arith::AddIOp::create(lb, loc, warpStart, row),
        cIdx(lb, total - 1));
    SmallVector<Value> at(dims);
    for (auto [d, v] :
         llvm::zip(parallel, kfuse::delinearize(lb, loc, other, extents)))
      at[d] = v;
    at[inner] = arith::AddIOp::create(lb, loc, start, column);
    for (Staged &s : staged) {
      Value v = memref::LoadOp::create(
          lb, loc, s.operand->get(),
          indicesAt(lb, g.getMatchingIndexingMap(s.operand), at));
      memref::StoreOp::create(lb, loc, v, s.buffer,
                              ValueRange{warp, row, column});
    }
  }
  gpu::BarrierOp::create(cb, loc);
  auto walk = scf::ForOp::create(cb, loc, cIdx(cb, 0), cIdx(cb, chunk),
                                 cIdx(cb, 1), chunks.getRegionIterArgs());
  {
    OpBuilder wb = OpBuilder::atBlockBegin(walk.getBody());
    Value step = walk.getInductionVar();
    dims[inner] = arith::AddIOp::create(wb, loc, start, step);
    for (Staged &s : staged)
      given[s.operand] = memref::LoadOp::create(wb, loc, s.buffer,
                                                ValueRange{warp, mine, step});
    FailureOr<SmallVector<Value>> results =
        evaluate(wb, walk.getRegionIterArgs());
    given.clear();
    if (failed(results))
      return failure();
    scf::YieldOp::create(wb, loc, *results);
  }
  // (the next chunk's loads wait until every lane has walked this one)
  gpu::BarrierOp::create(cb, loc);
  scf::YieldOp::create(cb, loc, walk.getResults());
  if (whole == extent)
    return SmallVector<Value>(chunks.getResults());
  auto rest = scf::ForOp::create(bb, loc, cIdx(bb, whole), cIdx(bb, extent),
                                 cIdx(bb, 1), chunks.getResults());
  OpBuilder rb = OpBuilder::atBlockBegin(rest.getBody());
  dims[inner] = rest.getInductionVar();
  FailureOr<SmallVector<Value>> results =
      evaluate(rb, rest.getRegionIterArgs());
  if (failed(results))
    return failure();
  scf::YieldOp::create(rb, loc, *results);
  return SmallVector<Value>(rest.getResults());
}

FailureOr<SmallVector<Value>> OrderedKernel::nest(OpBuilder &bb, unsigned level,
                                                  ValueRange carried) {
  if (level == reduced.size())
    return evaluate(bb, carried);
  if (level + 1 == reduced.size() && !staged.empty())
    return stagedLoop(bb, carried);
  auto loop =
      scf::ForOp::create(bb, loc, cIdx(bb, 0), cIdx(bb, loops[reduced[level]]),
                         cIdx(bb, 1), carried);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  dims[reduced[level]] = loop.getInductionVar();
  FailureOr<SmallVector<Value>> inner =
      nest(lb, level + 1, loop.getRegionIterArgs());
  if (failed(inner))
    return failure();
  scf::YieldOp::create(lb, loc, *inner);
  return SmallVector<Value>(loop.getResults());
}

/// One generic of an ordered kernel (see emitOrderedKernel) as a launch of
/// its own, in its place: a thread per point of its parallel loops, which
/// loads the point's outputs as accumulators, runs its reduction loops
/// nested in loop order (as the CPU target's loops do), and stores them.
/// An output with a fill in `fills` (its only initialization, see
/// onlyInitializes) starts at the fill's value instead, and the fill is
/// erased.
///
/// An input read along the innermost reduction loop (its last index that
/// loop, contiguous in memory) and at a different place by neighbouring
/// threads (x[row, j] with a thread per row) would have every lane of a
/// warp load from a sector of its own at each step. Such inputs are staged
/// instead: the innermost loop runs in chunks of as many elements as 32
/// bytes of the staged input with the narrowest elements hold (whole
/// sectors of every staged row), each warp loads the chunk of its 32 points
/// together (32 elements a load, of 32 / chunk rows) into a workgroup buffer
/// of its own, and each thread then walks its row there, in the same order.
/// Every thread of the block runs the loops then (the barriers between
/// chunks want them all): a thread past the last point computes the last
/// point again and stores nothing. A reduction to a single element (one thread
/// walks everything) is staged likewise, its warp loading the next 256 elements
/// of each staged input together, 32 consecutive ones a load.
static LogicalResult emitOrderedGeneric(
    linalg::GenericOp g, StringRef kernelName,
    const llvm::SmallDenseMap<unsigned, linalg::GenericOp> &fills) {
  return OrderedKernel(g, kernelName).emit(fills);
}

/// True when `fill`, a fill of a whole buffer, only initializes the
/// accumulators of output #k of reduction `g`, later in the same block: `g`
/// writes every element of that buffer (fusion-check-generics) and nothing
/// between the two touches it, so `g` may start from the fill's values
/// without it.
static bool onlyInitializes(linalg::GenericOp fill, linalg::GenericOp g,
                            unsigned k) {
  // (a fill: every loop parallel, no buffer read, the output not read)
  Block *body = fill.getBody();
  if (fill.getNumLoops() != fill.getNumParallelLoops() ||
      llvm::any_of(fill.getDpsInputs(),
                   [](Value v) { return isa<ShapedType>(v.getType()); }) ||
      !body->getArguments().back().use_empty() ||
      llvm::any_of(body->without_terminator(),
                   [](Operation &op) { return !isMemoryEffectFree(&op); }) ||
      fill.getNumDpsInits() != 1 || g.getNumReductionLoops() == 0 ||
      k >= g.getNumDpsInits() || fill->getBlock() != g->getBlock() ||
      !fill->isBeforeInBlock(g) ||
      fill.getDpsInitOperand(0)->get() != g.getDpsInitOperand(k)->get() ||
      !fill.getMatchingIndexingMap(fill.getDpsInitOperand(0)).isIdentity())
    return false;
  Value buffer = kfuse::viewRoot(fill.getDpsInitOperand(0)->get());
  auto touches = [&](Operation *op) {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return kfuse::viewRoot(v) == buffer; });
  };
  // (g reads it only as that accumulator)
  for (OpOperand &operand : g->getOpOperands())
    if (&operand != g.getDpsInitOperand(k) &&
        kfuse::viewRoot(operand.get()) == buffer)
      return false;
  for (Operation *op = fill->getNextNode(); op != g; op = op->getNextNode()) {
    if (isMemoryEffectFree(op) ||
        hasSingleEffect<MemoryEffects::Allocate>(op))
      continue;
    if (!isa<linalg::GenericOp>(op) || touches(op))
      return false;
  }
  return true;
}

/// An ordered kernel: a group with a reduction the row kernels cannot split
/// across threads, its body not `acc = acc op f(inputs)` with an
/// associative op (`acc = x - acc`, a Horner step `acc = acc * t + x`).
/// Each generic runs as a launch of its own, in program order: those
/// reductions with a thread per element they write and their loops in
/// order (the results the CPU target gives), elementwise ops likewise, and
/// the group's reductions that do combine associatively as row kernels of
/// their own, with their fills (a sum of many elements in order would lose
/// the accuracy a tree of partials keeps). The group's intermediates go
/// through memory.
static LogicalResult emitOrderedKernel(ArrayRef<linalg::GenericOp> generics,
                                       StringRef group,
                                       const RowKernelOptions &rowOptions) {
  // Each fill that only starts a later reduction's accumulators is that
  // reduction's start, not a launch.
  llvm::DenseMap<Operation *, llvm::SmallDenseMap<unsigned, linalg::GenericOp>>
      fillsOf;
  llvm::SmallPtrSet<Operation *, 4> folded;
  for (auto [i, fill] : llvm::enumerate(generics))
    for (linalg::GenericOp g : generics.drop_front(i + 1)) {
      std::optional<unsigned> output;
      for (unsigned k = 0; k < g.getNumDpsInits() && !output; ++k)
        if (!fillsOf[g].count(k) && onlyInitializes(fill, g, k))
          output = k;
      if (output) {
        fillsOf[g][*output] = fill;
        folded.insert(fill);
        break;
      }
    }
  unsigned launches = 0;
  for (linalg::GenericOp g : generics) {
    if (folded.contains(g))
      continue;
    if (g.getNumReductionLoops() > 0 && reducesInParallel(g)) {
      SmallVector<linalg::GenericOp> kernel;
      for (auto &entry : fillsOf[g])
        kernel.push_back(entry.second);
      llvm::sort(kernel, [](linalg::GenericOp a, linalg::GenericOp b) {
        return a->isBeforeInBlock(b);
      });
      kernel.push_back(g);
      if (failed(emitRowKernel(
              kernel, (group + "_rows" + Twine(launches++)).str(),
              rowOptions)))
        return failure();
      continue;
    }
    std::string name =
        (kernelNameOf(g) + "_ordered" + Twine(launches++)).str();
    if (failed(emitOrderedGeneric(g, name, fillsOf[g])))
      return failure();
  }
  return success();
}

/// Whether a reduction group's generics finish what `rows` stored: none
/// has parallel loops (a full reduction to a scalar, and arithmetic on
/// scalars), and one reads a buffer `rows` uses (the mean of a row
/// kernel's losses). Such a group may run in the last block of `rows`
/// (finishInLastBlockOf).
static bool finishesRows(ArrayRef<linalg::GenericOp> generics,
                         gpu::LaunchOp rows) {
  if (llvm::any_of(generics, [](linalg::GenericOp g) {
        return g.getNumParallelLoops() != 0;
      }))
    return false;
  llvm::SmallPtrSet<Value, 8> used;
  rows.getBody().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (isa<MemRefType>(v.getType()) &&
          !rows->isProperAncestor(v.getParentBlock()->getParentOp()))
        used.insert(kfuse::viewRoot(v));
  });
  return llvm::any_of(generics, [&](linalg::GenericOp g) {
    return llvm::any_of(g.getDpsInputs(), [&](Value in) {
      return isa<MemRefType>(in.getType()) && used.contains(kfuse::viewRoot(in));
    });
  });
}

/// The gpu.launch ops of `f` that are not in `known` (the host's: kernel
/// code is not walked, which would make emitting K kernels quadratic in
/// their size).
static SmallVector<gpu::LaunchOp>
launchesBut(Operation *f, const llvm::SmallPtrSetImpl<Operation *> &known) {
  SmallVector<gpu::LaunchOp> found;
  f->walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto l = dyn_cast<gpu::LaunchOp>(op);
    if (!l)
      return WalkResult::advance();
    if (!known.contains(l))
      found.push_back(l);
    return WalkResult::skip();
  });
  return found;
}

struct GenericToGPUPass : kfuse::impl::GenericToGPUBase<GenericToGPUPass> {
  using GenericToGPUBase::GenericToGPUBase;

  /// The row emitters' options from the pass's, each checked; an option out
  /// of range is an error on the function that names it.
  FailureOr<RowKernelOptions> rowKernelOptions() {
    auto refuse = [&](StringRef option, auto got, StringRef expected) {
      getOperation().emitError() << "fusion-generic-to-gpu: " << option
                                 << " must be " << expected << ", got " << got;
      return failure();
    };
    auto powerOfTwoTo32 = [](int64_t v) {
      return v >= 0 && v <= 32 && (v & (v - 1)) == 0;
    };
    std::string exchange = rowExchange, shift = rowShift;
    if (exchange != "barrier" && exchange != "async")
      return refuse("row-exchange", "'" + exchange + "'",
                    "'barrier' or 'async'");
    FailureOr<int64_t> sms =
        resolveSmCount(getOperation(), "fusion-generic-to-gpu", chip, smCount);
    if (failed(sms))
      return failure();
    if (rowFold < 0)
      return refuse("row-fold", static_cast<int64_t>(rowFold), ">= 0");
    if (rowSmem < 0)
      return refuse("row-smem", static_cast<int64_t>(rowSmem), ">= 0");
    if (rowOccupancy != 1 && rowOccupancy != 2 && rowOccupancy != 4)
      return refuse("row-occupancy", static_cast<int64_t>(rowOccupancy),
                    "1, 2 or 4");
    if (rowPrefetch < 0)
      return refuse("row-prefetch", static_cast<int64_t>(rowPrefetch), ">= 0");
    std::optional<unsigned> sm = chipVersion(chip.getValue());
    if (rowPrefetch > 0 && (!sm || *sm < 90)) {
      getOperation().emitError()
          << "fusion-generic-to-gpu: row-prefetch needs sm_90 or later "
             "(cp.async.bulk.prefetch), chip is "
          << chip.getValue();
      return failure();
    }
    if (rowPersist < -1 || (rowPersist != 0 && rowCluster <= 1))
      return refuse("row-persist", static_cast<int64_t>(rowPersist),
                    "0, or -1 or > 0 with row-cluster above 1");
    if (shift != "auto" && shift != "true" && shift != "false")
      return refuse("row-shift", "'" + shift + "'", "auto, true or false");
    if (!powerOfTwoTo32(rowPack))
      return refuse("row-pack", static_cast<int64_t>(rowPack),
                    "0 or a power of two up to 32");
    if (!powerOfTwoTo32(rowTile))
      return refuse("row-tile", static_cast<int64_t>(rowTile),
                    "0 or a power of two up to 32");
    if (rowTrip < 0 || rowTrip > 32)
      return refuse("row-trip", static_cast<int64_t>(rowTrip), "0 to 32");
    RowKernelOptions o;
    o.threads = rowThreads;
    o.chunksPerThread = rowChunks;
    o.foldRows = rowFold;
    o.sharedRowBytes = rowSmem;
    o.maxCluster = rowCluster;
    o.occupancy = rowOccupancy;
    o.prefetchRows = rowPrefetch;
    o.persistClusters = rowPersist;
    o.online = rowOnline;
    o.asyncExchange = exchange == "async";
    o.jointExchange = rowJoint;
    o.shiftChunks = shift != "false";
    o.shiftStreams = shift == "true";
    o.lastBlockFinish = rowLastBlock;
    o.splitTail = rowSplitTail;
    o.transposeStore = rowStoreTransposed;
    o.packRows = rowPack;
    o.tileRows = rowTile;
    o.tripChunks = rowTrip;
    o.peelTrips = rowPeel;
    o.smCount = *sms;
    return o;
  }

  void runOnOperation() override {
    // Generics of one group share their fusion.kernel name, in program order.
    llvm::MapVector<StringAttr, SmallVector<linalg::GenericOp>> kernels;
    WalkResult walk = getOperation().walk([&](linalg::GenericOp op) {
      auto name = op->getAttrOfType<StringAttr>(kKernelAttr);
      if (!name) {
        op.emitError("fusion-generic-to-gpu: linalg.generic outside any "
                     "fusion group (run fusion-inline-groups first)");
        return WalkResult::interrupt();
      }
      if (!op.hasPureBufferSemantics()) {
        op.emitError("fusion-generic-to-gpu: expects a bufferized generic");
        return WalkResult::interrupt();
      }
      kernels[name].push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    FailureOr<RowKernelOptions> validated = rowKernelOptions();
    if (failed(validated))
      return signalPassFailure();
    RowKernelOptions rowOptions = *validated;
    // The only launch of the group before, if it had one: a full
    // reduction of what it stored (a loss's mean) may run in its last
    // block, in a block of its threads.
    gpu::LaunchOp previous;
    for (auto &[name, generics] : kernels) {
      if (!llvm::all_of(generics, reducesInParallel)) {
        if (failed(emitOrderedKernel(generics, name.getValue(), rowOptions)))
          return signalPassFailure();
        previous = gpu::LaunchOp();
        continue;
      }
      bool rows = llvm::any_of(generics, [](linalg::GenericOp g) {
        return g.getNumReductionLoops() > 0;
      });
      if (rows) {
        RowKernelOptions options = rowOptions;
        int64_t previousThreads =
            previous ? getConstantIntValue(previous.getBlockSizeX())
                           .value_or(0)
                     : 0;
        // (not after clusters: their blocks' last block cannot run it)
        bool finish = rowLastBlock && previousThreads > 0 &&
                      !previous.hasClusterSize() &&
                      finishesRows(generics, previous);
        if (finish)
          options.exactThreads = previousThreads;
        llvm::SmallPtrSet<Operation *, 8> before;
        for (gpu::LaunchOp l : launchesBut(getOperation(), before))
          before.insert(l);
        if (failed(emitRowKernel(generics, name.getValue(), options)))
          return signalPassFailure();
        SmallVector<gpu::LaunchOp> emitted =
            launchesBut(getOperation(), before);
        if (finish && emitted.size() == 1 &&
            getConstantIntValue(emitted[0].getBlockSizeX()) ==
                std::optional<int64_t>(previousThreads) &&
            finishInLastBlockOf(previous, emitted[0]))
          continue; // (the merged launch is still `previous`)
        previous = emitted.size() == 1 ? emitted[0] : gpu::LaunchOp();
        continue;
      }
      previous = gpu::LaunchOp();
      if (generics.size() > 1) {
        if (failed(emitMultiTensorKernel(generics)))
          return signalPassFailure();
        continue;
      }
      linalg::GenericOp op = generics.front();
      auto strategy = op->getAttrOfType<fusion::StrategyAttr>(kStrategyAttr);
      if (!strategy) {
        op.emitError("fusion-generic-to-gpu: kernel has no #fusion.strategy "
                     "(run fusion-select-strategy first)");
        return signalPassFailure();
      }
      if (failed(KernelEmitter(op, strategy).emit()))
        return signalPassFailure();
    }
  }
};

} // namespace

namespace {
struct AlignWorkgroupPass
    : kfuse::impl::AlignWorkgroupBase<AlignWorkgroupPass> {
  void runOnOperation() override {
    StringRef align = LLVM::LLVMDialect::getAlignAttrName();
    auto sixteen = IntegerAttr::get(IntegerType::get(&getContext(), 64), 16);
    bool changed = false;
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i)
        if (!func.getWorkgroupAttributionAttr(i, align)) {
          func.setWorkgroupAttributionAttr(i, align, sixteen);
          changed = true;
        }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

struct ExternDynamicSharedPass
    : kfuse::impl::ExternDynamicSharedBase<ExternDynamicSharedPass> {
  void runOnOperation() override {
    bool changed = false;
    getOperation().walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() == 3 && array && array.getNumElements() == 0 &&
          global.getLinkage() != LLVM::Linkage::External) {
        global.setLinkage(LLVM::Linkage::External);
        changed = true;
      }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

struct ProgrammaticLaunchPass
    : kfuse::impl::ProgrammaticLaunchBase<ProgrammaticLaunchPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernelOf = [&](gpu::LaunchFuncOp launch) {
      return SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
    };
    bool changed = false;
    WalkResult walk = module.walk([&](func::FuncOp host) {
      for (Block &block : host.getBody()) {
        gpu::LaunchFuncOp prev;
        for (Operation &op : block) {
          auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
          if (!launch) {
            // (host ops that queue nothing on the stream keep two launches
            // adjacent; a copy, or anything else, sits between them)
            if (!isa<arith::ConstantOp, memref::AllocOp, memref::DeallocOp,
                     memref::GetGlobalOp, memref::ExpandShapeOp,
                     memref::CollapseShapeOp, memref::CastOp,
                     memref::ReshapeOp>(op))
              prev = {};
            continue;
          }
          gpu::GPUFuncOp kernel = kernelOf(launch);
          if (!kernel) {
            launch.emitError("fusion-programmatic-launch: kernel not found");
            return WalkResult::interrupt();
          }
          if (prev) {
            changed = true;
            launch->setAttr("kfuse.programmatic", UnitAttr::get(&getContext()));
            kfuse::addGridControl(kernel, NVVM::GridDepActionKind::wait);
            kfuse::addGridControl(kernelOf(prev),
                                  NVVM::GridDepActionKind::launch_dependents);
          }
          prev = launch;
        }
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!changed)
      markAllAnalysesPreserved();
  }
};

struct ClusterDimsPass : kfuse::impl::ClusterDimsBase<ClusterDimsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool changed = false;
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      if (!launch.hasClusterSize())
        return WalkResult::advance();
      changed = true;
      SmallVector<int32_t> dims;
      for (Value v : {launch.getClusterSizeX(), launch.getClusterSizeY(),
                      launch.getClusterSizeZ()}) {
        APInt c;
        if (!matchPattern(v, m_ConstantInt(&c))) {
          launch.emitError("fusion-cluster-dims: cluster size is not a "
                           "constant");
          return WalkResult::interrupt();
        }
        dims.push_back(c.getSExtValue());
      }
      auto func = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!func) {
        launch.emitError("fusion-cluster-dims: kernel not found");
        return WalkResult::interrupt();
      }
      auto attr = DenseI32ArrayAttr::get(&getContext(), dims);
      if (auto old = func->getAttrOfType<DenseI32ArrayAttr>("nvvm.cluster_dim");
          old && old != attr) {
        launch.emitError("fusion-cluster-dims: kernel launched with two "
                         "cluster sizes");
        return WalkResult::interrupt();
      }
      func->setAttr("nvvm.cluster_dim", attr);
      // (blocks under 1024 threads share an SM: 64 registers a thread)
      APInt threads(64, 1);
      for (Value v : {launch.getBlockSizeX(), launch.getBlockSizeY(),
                      launch.getBlockSizeZ()}) {
        APInt d;
        if (!matchPattern(v, m_ConstantInt(&d)))
          return WalkResult::advance();
        threads *= d.sextOrTrunc(64);
      }
      int64_t perSm = 1024 / std::max<int64_t>(1, threads.getSExtValue());
      if (perSm > 1)
        raiseMinBlocks(func, perSm);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Row kernels' occupancy (row-occupancy), recorded on the host function
    // by kernel name, for the kernels its launches outlined; and, for those
    // launches, persistent kernels' most clusters (row-persist) and packed
    // launches' kernels (fusion-pack-launches), under the same names.
    constexpr llvm::StringLiteral kLaunchAttrs[] = {"kfuse.persistent",
                                                    "kfuse.packed"};
    walk = module.walk([&](func::FuncOp host) {
      auto hints =
          host->getAttrOfType<DictionaryAttr>("kfuse.min_blocks_per_sm");
      SmallVector<std::pair<StringRef, DictionaryAttr>> perLaunch;
      for (StringRef name : kLaunchAttrs)
        if (auto dict = host->getAttrOfType<DictionaryAttr>(name))
          perLaunch.push_back({name, dict});
      if (!hints && perLaunch.empty())
        return WalkResult::advance();
      changed = true;
      WalkResult inner = host.walk([&](gpu::LaunchFuncOp launch) {
        for (auto [name, dict] : perLaunch)
          if (Attribute value = dict.get(launch.getKernelName()))
            launch->setAttr(name, value);
        auto blocks =
            hints ? hints.getAs<IntegerAttr>(launch.getKernelName()) : nullptr;
        if (!blocks)
          return WalkResult::advance();
        auto func = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            launch, launch.getKernel());
        if (!func) {
          launch.emitError("fusion-cluster-dims: kernel not found");
          return WalkResult::interrupt();
        }
        raiseMinBlocks(func, blocks.getInt());
        return WalkResult::advance();
      });
      host->removeAttr("kfuse.min_blocks_per_sm");
      for (StringRef name : kLaunchAttrs)
        host->removeAttr(name);
      return inner;
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Sets nvvm.minctasm on `func` to `blocks`, unless it asks more already.
  void raiseMinBlocks(gpu::GPUFuncOp func, int64_t blocks) {
    if (auto old = func->getAttrOfType<IntegerAttr>("nvvm.minctasm");
        old && old.getInt() >= blocks)
      return;
    func->setAttr("nvvm.minctasm",
                  IntegerAttr::get(IntegerType::get(&getContext(), 32), blocks));
  }
};
} // namespace
