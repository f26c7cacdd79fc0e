//===- SplitLongRows.cpp - long or few rows as slices of several kernels --===//
//
// A reduction group whose rows are too long for one kernel to fill the GPU
// (x / ||x|| over 2^24 floats, a softmax over a few rows of 2^20), or whose
// inputs run along its rows with too few rows for a thread each (the
// statistics of an NHWC batch normalization), runs as slices of its rows: a
// partials kernel folds each slice, a finishing kernel combines a row's
// slices (or the partials kernel's last block of the row does), in waves
// where a reduction reads another's result, and a last kernel stores the
// group's full-space results. Each kernel is emitted by the row kernel
// emitter (emitSplitKernel); a ragged split's tail runs as the last blocks
// of its slices' kernel.
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
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>
#include <map>
#include <numeric>

using namespace mlir;
using namespace kfuse::row;
using kfuse::RowKernelOptions;

/// Moves the code of launch `from` (but its terminator) into block `to`,
/// inside launch `into`, before `to`'s terminator: its block id becomes
/// `block` (in x; y and z 0), its thread ids `into`'s, its grid `blocks`
/// blocks of `threads` threads (one-dimensional), its workgroup buffers
/// `into`'s. `from` is left empty.
static void moveLaunchCode(gpu::LaunchOp from, gpu::LaunchOp into, Block *to,
                           Value block, int64_t blocks, int64_t threads) {
  Location loc = from.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(to);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 ids = from.getBlockIds(), tids = from.getThreadIds(),
                  grid = from.getGridSize(), size = from.getBlockSize(),
                  intoTids = into.getThreadIds();
  ids.x.replaceAllUsesWith(block);
  ids.y.replaceAllUsesWith(zero);
  ids.z.replaceAllUsesWith(zero);
  tids.x.replaceAllUsesWith(intoTids.x);
  tids.y.replaceAllUsesWith(intoTids.y);
  tids.z.replaceAllUsesWith(intoTids.z);
  grid.x.replaceAllUsesWith(
      arith::ConstantIndexOp::create(b, loc, blocks).getResult());
  grid.y.replaceAllUsesWith(one);
  grid.z.replaceAllUsesWith(one);
  size.x.replaceAllUsesWith(
      arith::ConstantIndexOp::create(b, loc, threads).getResult());
  size.y.replaceAllUsesWith(one);
  size.z.replaceAllUsesWith(one);
  for (BlockArgument buffer : from.getWorkgroupAttributions())
    buffer.replaceAllUsesWith(
        into.addWorkgroupAttribution(buffer.getType(), loc));
  Operation *end = to->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(from.getBody().front()))
    if (!op.hasTrait<OpTrait::IsTerminator>())
      op.moveBefore(end);
}

/// Runs a ragged split's tail kernel `tail` (a block per row reducing the
/// row's last columns to one more partial; along rows a thread per row
/// over the last rows) as the last blocks of its
/// partials kernel `part`: part's grid grows by tail's, the blocks past
/// part's own running tail's code with block id b - part's grid. Both
/// have one-dimensional grids and blocks of the same size (splitLongRows
/// shapes the tail to the partials' block), no clusters and no dynamic
/// shared memory; `tail` comes first (what its code reads is defined
/// before it). One launch instead of two, and the tail's block runs beside
/// the slices' instead of before them. Returns the tail's blocks, or 0,
/// changing nothing, where the two kernels do not have those shapes.
static int64_t mergeTailBlocks(gpu::LaunchOp tail, gpu::LaunchOp part) {
  auto constant = [](Value v) -> int64_t {
    return getConstantIntValue(v).value_or(-1);
  };
  for (gpu::LaunchOp l : {tail, part})
    for (Value v : {l.getGridSizeY(), l.getGridSizeZ(), l.getBlockSizeY(),
                    l.getBlockSizeZ()})
      if (constant(v) != 1)
        return 0;
  int64_t partBlocks = constant(part.getGridSizeX()),
          tailBlocks = constant(tail.getGridSizeX()),
          threads = constant(part.getBlockSizeX());
  if (partBlocks < 1 || tailBlocks < 1 || threads < 1 ||
      constant(tail.getBlockSizeX()) != threads || tail.hasClusterSize() ||
      part.hasClusterSize() || tail.getDynamicSharedMemorySize() ||
      part.getDynamicSharedMemorySize() || tail.getAsyncToken() ||
      part.getAsyncToken() || tail.getNumPrivateAttributions() != 0 ||
      !tail.getBody().hasOneBlock() || !part.getBody().hasOneBlock() ||
      tail->getBlock() != part->getBlock() || !tail->isBeforeInBlock(part))
    return 0;
  Location loc = part.getLoc();
  Block &partBody = part.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(&partBody);
  // (part's own code, now under blockIdx < its grid, sees its grid)
  Value own = arith::ConstantIndexOp::create(kb, loc, partBlocks);
  part.getGridSize().x.replaceAllUsesWith(own);
  Value block = part.getBlockIds().x;
  auto dispatch = scf::IfOp::create(
      kb, loc,
      arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, block, own),
      /*withElse=*/true);
  Operation *thenYield = dispatch.thenBlock()->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(partBody)) {
    if (&op == dispatch.getOperation() || &op == own.getDefiningOp() ||
        op.isBeforeInBlock(dispatch) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    op.moveBefore(thenYield);
  }
  OpBuilder eb = OpBuilder::atBlockBegin(dispatch.elseBlock());
  moveLaunchCode(tail, part, dispatch.elseBlock(),
                 arith::SubIOp::create(eb, loc, block, own), tailBlocks,
                 threads);
  OpBuilder hb(part);
  part.getGridSizeXMutable().assign(
      arith::ConstantIndexOp::create(hb, loc, partBlocks + tailBlocks));
  tail.erase();
  return tailBlocks;
}

/// Runs a split row's finishing kernel `fin` inside its partials kernel
/// `part`, by the last block of each group of blocks to store its partials.
/// Trailing reductions (`alongRows` false): part has a block per row and
/// slice, the slice innermost (`slices` blocks a row), fin a block per row
/// (`numRows`), and a group is a row. Along rows: both run a thread per row
/// with the same block size t dividing the `numRows` rows, part over the
/// slices (outermost) times the rows, fin over the rows, so part's block b
/// takes fin's block b mod (numRows / t) for its slice: a group is a tile of
/// t rows. Every block, once its partials are stored, counts itself in its
/// group's counter (a `kfuse.counter` buffer of one u32 a group, zero when
/// the kernel starts; `atom.inc` wraps it back to zero with the group's
/// last block, so it is zero again when the kernel ends), with a gpu-scope
/// fence before (its partials visible first) and the last one a fence after
/// (the others' partials visible to it), and the block that counts last
/// runs `fin`'s code for the group (fin has part's threads, as
/// splitLongRows shapes it). One launch instead of two, and the finish
/// starts as the last partial is stored instead of after the partials grid
/// has drained. Returns false, changing nothing, where the two kernels do
/// not have those shapes. `tailBlocks` (a ragged split's tails merged into
/// part, see mergeTailBlocks: a block a group after the slices') count in
/// their groups too.
static bool finishInLastBlock(gpu::LaunchOp part, gpu::LaunchOp fin,
                              int64_t numRows, int64_t slices, bool alongRows,
                              int64_t tailBlocks = 0) {
  auto constant = [](Value v) -> int64_t {
    return getConstantIntValue(v).value_or(-1);
  };
  for (Value v : {part.getGridSizeY(), part.getGridSizeZ(),
                  part.getBlockSizeY(), part.getBlockSizeZ(),
                  fin.getGridSizeY(), fin.getGridSizeZ(), fin.getBlockSizeY(),
                  fin.getBlockSizeZ()})
    if (constant(v) != 1)
      return false;
  // (fin's barriers wait for every thread of the block)
  int64_t threads = constant(part.getBlockSizeX());
  if (threads < 1 || constant(fin.getBlockSizeX()) != threads ||
      (alongRows && numRows % threads != 0))
    return false;
  int64_t groups = alongRows ? numRows / threads : numRows;
  if (part.hasClusterSize() || fin.hasClusterSize() ||
      fin.getDynamicSharedMemorySize() || fin.getAsyncToken() ||
      part.getAsyncToken() || fin.getNumPrivateAttributions() != 0 ||
      !fin.getBody().hasOneBlock() ||
      (tailBlocks && tailBlocks != groups) ||
      constant(part.getGridSizeX()) != groups * slices + tailBlocks ||
      constant(fin.getGridSizeX()) != groups)
    return false;
  // The ops between the kernels (the finishing kernel's launch constants,
  // its buffers) move before the partials kernel: they must be free of
  // effects but allocations, and depend on nothing after it.
  Block *host = part->getBlock();
  if (fin->getBlock() != host || !part->isBeforeInBlock(fin))
    return false;
  SmallVector<Operation *> between;
  for (Operation *op = part->getNextNode(); op != fin; op = op->getNextNode()) {
    if (!isMemoryEffectFree(op) && !isa<memref::AllocOp>(op))
      return false;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == host && !def->isBeforeInBlock(part) &&
          !llvm::is_contained(between, def))
        return false;
    between.push_back(op);
  }
  for (Operation *op : between)
    op->moveBefore(part);

  MLIRContext *ctx = part.getContext();
  Location loc = part.getLoc();
  OpBuilder hb(part);
  auto counter = memref::AllocOp::create(
      hb, loc, MemRefType::get({groups}, hb.getI32Type()));
  counter->setAttr(kfuse::kCounterAttr, UnitAttr::get(ctx));
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value flag = part.addWorkgroupAttribution(
      MemRefType::get({1}, hb.getI32Type(), MemRefLayoutAttrInterface(),
                      workgroup),
      loc);
  Block &partBody = part.getBody().front();
  OpBuilder kb(partBody.getTerminator());
  auto cIdx = kfuse::indexConstants(kb, loc);
  Value tid = part.getThreadIds().x;
  Value block = part.getBlockIds().x;
  Value group =
      alongRows
          ? arith::RemUIOp::create(kb, loc, block, cIdx(groups)).getResult()
          : arith::DivUIOp::create(kb, loc, block, cIdx(slices)).getResult();
  if (tailBlocks) // (row b - groups * slices for a tail's block)
    group = arith::SelectOp::create(
        kb, loc,
        arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, block,
                              cIdx(groups * slices)),
        group, arith::SubIOp::create(kb, loc, block, cIdx(groups * slices)));
  // (every thread's stores of the block before thread 0's fence)
  gpu::BarrierOp::create(kb, loc);
  {
    auto first = scf::IfOp::create(kb, loc, isZero(kb, loc, tid),
                                   /*withElse=*/false);
    OpBuilder tb = first.getThenBodyBuilder();
    Value address = byteAddress(
        tb, loc, counter,
        arith::MulIOp::create(tb, loc, group,
                              arith::ConstantIndexOp::create(tb, loc, 4)));
    Value limit = arith::ConstantIntOp::create(
        tb, loc, tb.getI32Type(), slices + (tailBlocks ? 1 : 0) - 1);
    // (release: this block's partial before its count; the last block's
    // acquire: every other block's partial before its loads, which follow
    // thread 0's fence through the barrier below)
    Value last = ptx(tb, loc, tb.getI32Type(), ValueRange{address, limit},
                     "{ .reg .pred p; .reg .b32 c; .reg .b64 g; "
                     "cvta.to.global.u64 g, $1; fence.acq_rel.gpu; "
                     "atom.relaxed.gpu.global.inc.u32 c, [g], $2; "
                     "setp.eq.u32 p, c, $2; @p fence.acq_rel.gpu; "
                     "selp.u32 $0, 1, 0, p; }",
                     "=r,l,r");
    memref::StoreOp::create(tb, loc, last, flag,
                            ValueRange{arith::ConstantIndexOp::create(tb, loc, 0)});
  }
  gpu::BarrierOp::create(kb, loc);
  Value isLast = arith::CmpIOp::create(
      kb, loc, arith::CmpIPredicate::ne,
      memref::LoadOp::create(kb, loc, flag, ValueRange{cIdx(0)}),
      arith::ConstantIntOp::create(kb, loc, kb.getI32Type(), 0));
  auto finish = scf::IfOp::create(kb, loc, isLast, /*withElse=*/false);
  // fin's code for the group, its ids and sizes from part's.
  moveLaunchCode(fin, part, finish.thenBlock(), group, groups, threads);
  // (named for the group: the partials kernel now finishes it)
  if (auto name = fin.getFunctionAttr())
    part.setFunctionAttr(name);
  fin.erase();
  return true;
}

bool kfuse::finishInLastBlockOf(gpu::LaunchOp part, gpu::LaunchOp fin) {
  std::optional<int64_t> blocks = getConstantIntValue(part.getGridSizeX());
  if (!blocks || *blocks < 1 || getConstantIntValue(fin.getGridSizeX()) != 1)
    return false;
  // (the kernel keeps its own name: it runs its rows and then the finish)
  auto name = part.getFunctionAttr();
  if (!finishInLastBlock(part, fin, /*numRows=*/1, /*slices=*/*blocks,
                         /*alongRows=*/false))
    return false;
  if (name)
    part.setFunctionAttr(name);
  return true;
}

/// The values of full-space generic `g` (over [rows..., columns...], its
/// first `rows` loops the rows) that depend on the row alone, hoisted out:
/// a generic over the rows computing every such value that the rest of the
/// body reads (a batch normalization's mean, sum / n, and its 1 / sqrt(var
/// + eps)) into a buffer of its own, and a copy of `g` reading those
/// buffers at its rows in place of computing them, both built at `b` (in
/// that order) and appended to `created`. Values of the row read as they
/// are (an input, a constant) stay. Returns the two, or nothing when no op
/// of the body is hoisted. (A kernel whose threads cross the rows at each
/// point, as a split's transposed store does, would otherwise compute them
/// at every point.)
static std::optional<std::pair<linalg::GenericOp, linalg::GenericOp>>
hoistRowValues(OpBuilder &b, linalg::GenericOp g, unsigned rows,
               SmallVectorImpl<Operation *> &created) {
  Block *body = g.getBody();
  MLIRContext *ctx = g.getContext();
  Location loc = g.getLoc();
  llvm::DenseSet<Value> ofRow;
  auto readsRow = [&](AffineMap map) {
    for (unsigned d = rows; d < map.getNumDims(); ++d)
      for (AffineExpr e : map.getResults())
        if (e.isFunctionOfDim(d))
          return false;
    return true;
  };
  SmallVector<BlockArgument> rowArgs;
  for (OpOperand *in : g.getDpsInputOperands())
    if (readsRow(g.getMatchingIndexingMap(in))) {
      ofRow.insert(body->getArgument(in->getOperandNumber()));
      rowArgs.push_back(body->getArgument(in->getOperandNumber()));
    }
  SmallVector<Operation *> hoisted;
  for (Operation &op : body->without_terminator()) {
    if (!isPure(&op) || op.getNumRegions() != 0 || isa<linalg::IndexOp>(op) ||
        op.getNumResults() != 1 || !isa<FloatType>(op.getResult(0).getType()))
      continue;
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          return ofRow.contains(v) || v.getParentBlock() != body;
        })) {
      ofRow.insert(op.getResult(0));
      hoisted.push_back(&op);
    }
  }
  // (the row generic reads the inputs its ops read)
  llvm::erase_if(rowArgs, [&](BlockArgument a) {
    return llvm::none_of(a.getUsers(), [&](Operation *user) {
      return llvm::is_contained(hoisted, user);
    });
  });
  // (what the rest reads: the hoisted values it cannot compute)
  SmallVector<Value> frontier;
  for (Operation *op : hoisted)
    if (llvm::any_of(op->getResult(0).getUsers(), [&](Operation *user) {
          return !llvm::is_contained(hoisted, user);
        }))
      frontier.push_back(op->getResult(0));
  if (frontier.empty())
    return std::nullopt;
  SmallVector<int64_t> rowShape(
      ArrayRef<int64_t>(g.getStaticLoopRanges()).take_front(rows));
  SmallVector<Value> ins, outs;
  SmallVector<AffineMap> maps;
  for (BlockArgument a : rowArgs) {
    ins.push_back(g->getOperand(a.getArgNumber()));
    maps.push_back(AffineMap::get(
        rows, 0, g.getIndexingMapsArray()[a.getArgNumber()].getResults(),
        ctx));
  }
  for (Value v : frontier) {
    auto alloc =
        memref::AllocOp::create(b, loc, MemRefType::get(rowShape, v.getType()));
    created.push_back(alloc);
    outs.push_back(alloc);
    maps.push_back(AffineMap::getMultiDimIdentityMap(rows, ctx));
  }
  auto rowOp = linalg::GenericOp::create(
      b, loc, TypeRange{}, ins, outs, maps,
      SmallVector<utils::IteratorType>(rows, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping m;
        for (auto [a, arg] : llvm::zip(rowArgs, args))
          m.map(a, arg);
        for (Operation *op : hoisted)
          nb.clone(*op, m);
        SmallVector<Value> results;
        for (Value v : frontier)
          results.push_back(m.lookup(v));
        linalg::YieldOp::create(nb, nl, results);
      });
  created.push_back(rowOp);
  // The copy of g: its inputs, then the hoisted values', then its inits.
  SmallVector<Value> newIns(g.getDpsInputs());
  SmallVector<AffineMap> newMaps;
  for (OpOperand *in : g.getDpsInputOperands())
    newMaps.push_back(g.getMatchingIndexingMap(in));
  SmallVector<AffineExpr> atRow;
  for (unsigned d = 0; d < rows; ++d)
    atRow.push_back(getAffineDimExpr(d, ctx));
  for (Value out : outs) {
    newIns.push_back(out);
    newMaps.push_back(AffineMap::get(g.getNumLoops(), 0, atRow, ctx));
  }
  for (OpOperand &init : g.getDpsInitsMutable())
    newMaps.push_back(g.getMatchingIndexingMap(&init));
  unsigned numIns = g.getNumDpsInputs();
  auto copy = linalg::GenericOp::create(
      b, loc, TypeRange{}, newIns, g.getDpsInits(), newMaps,
      g.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping m;
        for (unsigned i = 0; i < numIns; ++i)
          m.map(body->getArgument(i), args[i]);
        for (auto [k, v] : llvm::enumerate(frontier))
          m.map(v, args[numIns + k]);
        for (unsigned i = 0; i < g.getNumDpsInits(); ++i)
          m.map(body->getArgument(numIns + i),
                args[numIns + frontier.size() + i]);
        for (Operation &op : body->without_terminator())
          if (!llvm::is_contained(hoisted, &op))
            nb.clone(op, m);
        nb.clone(*body->getTerminator(), m);
      });
  for (NamedAttribute a : g->getDiscardableAttrs()) {
    copy->setAttr(a.getName(), a.getValue());
    rowOp->setAttr(a.getName(), a.getValue());
  }
  created.push_back(copy);
  return std::make_pair(rowOp, copy);
}

/// The narrowest and the widest element of the generics' memref operands,
/// in bytes ((1, 1) without any).
static std::pair<int64_t, int64_t>
elementBytes(ArrayRef<linalg::GenericOp> generics) {
  int64_t narrowest = 0, widest = 1;
  for (linalg::GenericOp g : generics)
    for (Value v : g->getOperands())
      if (auto m = dyn_cast<MemRefType>(v.getType())) {
        int64_t bytes = (m.getElementTypeBitWidth() + 7) / 8;
        narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
        widest = std::max(widest, bytes);
      }
  return {narrowest ? narrowest : 1, widest};
}

/// A sum of squares around a row value q the group computes, sum((e -
/// q)^2) (a variance around its mean; fast numerics), need not wait for q:
/// its partials kernel computes, for each slice of n points, the sum E_s
/// of e, and around q_s = E_s / n the sums V_s of (e - q_s)^2 and D_s of
/// e - q_s, in one pass (the row kernel folds the last two with the first:
/// D_s is what rounding leaves of sum(e) - n q_s, kept so the combination
/// is exact); the finishing kernel adds V_s + (q_s - q) (2 D_s + n (q_s -
/// q)) over the slices, which is sum((e - q)^2) over the slice for any
/// q_s. It joins the wave of e's inputs. Where an earlier sum of the wave
/// adds e too (the mean the variance is around), its partials are E_s.
struct SplitCentered {
  arith::SubFOp sub; // e - q in its body
  Center center;
  Value qBuffer;
};


/// Likewise a sum of exp(e - r) with r computed in its body from a max m
/// of e that the group computes (r = m: a softmax over a leading axis;
/// r = isinf(m) ? 0 : m: torch's logsumexp; fast numerics): its partials
/// kernel folds, beside the slice's max m_s (the max's own partial), the
/// sum s_s of exp(e - m_s); the finishing kernel adds s_s exp(m_s - r)
/// over the slices, which is sum(exp(e - r)) over the slice for any r
/// (exp(m_s - r) for a slice whose max is +inf, as exp(+inf - r) in the
/// two-pass sum; nothing for a slice that is all -inf, unless r is -inf
/// too: then NaN, as exp(-inf - -inf)). It joins the max's wave. Here e is
/// a group input the max reads at the same points.
struct SplitOnline {
  linalg::GenericOp max;
  arith::SubFOp sub; // e - r in the sum's body
  Center ref;        // r, from the row value its argument reads
};


/// Waves: a reduction's partials can be computed once every row value it
/// reads (through its full-space producers too) is in memory. avail(g) is
/// the wave whose finishing kernel writes g's row value; a row-space op
/// that reads no reduction runs in the first one. Reductions of one wave
/// share a partials kernel (the rows are read once per wave) and a
/// finishing kernel.
/// (avail and partialWave by generic; fullDeps: the full-space generics
/// each reduction's partials compute, by its index in `reductions`; waves:
/// how many.)
struct WavePlan {
  llvm::DenseMap<Operation *, unsigned> avail, partialWave;
  SmallVector<llvm::SetVector<Operation *>> fullDeps;
  unsigned waves = 0;
};


/// How splitLongRows slices the rows of a group: `slices` slices of each
/// row, a `ragged` split's tail beside them, and along rows `interleaved`
/// slices.
struct SliceChoice {
  int64_t slices;
  bool ragged, interleaved;
};

/// The slices of the rows of `numRows` rows of a group (its reductions'
/// `loops` and `iters`), split along loop `splitLoop`: std::nullopt where
/// the rows are too many, or too short, to split.
static std::optional<SliceChoice>
chooseSlices(ArrayRef<linalg::GenericOp> generics, ArrayRef<int64_t> loops,
             ArrayRef<utils::IteratorType> iters, unsigned splitLoop,
             int64_t numRows, bool alongRows, const RowKernelOptions &options) {
  int64_t smCount = options.smCount;
  int64_t targetBlocks = smCount * 8; // several blocks per SM
  int64_t cols = loops[splitLoop], slices = 1;
  bool ragged = false; // (slices that do not divide the row, and a tail)
  // Along rows, rows that do not fill whole warps (3, 24 or 100 channels)
  // take interleaved slices: slice s holds points s, s + count, s + 2
  // count, ... of its span, so that consecutive threads, (slice, row) with
  // the row fastest, read consecutive addresses whatever the row count.
  // Contiguous slices put a warp across the ends of several slices, far
  // apart: 3 channels of f32 asked for 3.5x their bytes in sectors, 5 of
  // f16 4.35x. (Rows of whole warps read alike either way and keep
  // contiguous slices; so do splits with more reduction loops inside the
  // split one, whose slices' points are not one row of memory each.)
  bool interleaved = false;
  // The most slices d dividing the loop that `fit` (monotonic: fewer
  // slices fit whenever more do) and that `take` accepts: any divisor, not
  // only powers of two, so that a loop of 50050000 takes 1001 slices, not 16
  // (the most a power of two dividing it gives), and one of 7 x 2^14 28, not
  // 16. (A prime length takes none: see `ragged` below.)
  auto mostSlices = [&](auto fit, auto take) {
    int64_t best = 1;
    for (int64_t d = 2; d <= cols && fit(d); ++d)
      if (cols % d == 0 && take(d))
        best = d;
    return best;
  };
  if (alongRows) {
    // slices: about 1024 threads per SM in all, each folding at least 16
    // points (the partials, 1/16 of the input at most, stay in L2 for the
    // finishing kernel).
    int64_t wanted = smCount * 1024, rest = 1;
    for (auto [range, it] : llvm::zip(loops, iters))
      if (it == utils::IteratorType::reduction)
        rest *= range;
    rest /= cols;
    // (rows this short take a thread a few trips: not worth two launches)
    if (numRows * 2 > wanted || cols * rest < 256)
      return std::nullopt;
    // (interleaved slices, see `interleaved` above: a count of slices whose
    // points fill whole 32-byte sectors, band by band, in the narrowest
    // element type, where one comes near the most that fit: 8 slices at a
    // time over 3 channels of f32, 16 over 5 of f16)
    interleaved = rest == 1 && numRows % 32 != 0;
    int64_t band =
        interleaved
            ? 32 / std::gcd<int64_t>(numRows * elementBytes(generics).first, 32)
            : 1;
    auto fit = [&](int64_t d) {
      return numRows * d <= wanted && cols / d * rest >= 16;
    };
    int64_t any = mostSlices(fit, [](int64_t) { return true; });
    int64_t whole = mostSlices(fit, [&](int64_t d) { return d % band == 0; });
    slices = whole * 2 > any ? whole : any;
    // Where no divisor comes near the slices that fit (a prime count of
    // rows: x[1000003, 16].sum(0) would run on 16 threads), cols /
    // ceil(cols / most) slices of cols / slices rows each (`len` below) and
    // a tail of the cols % slices rows they leave, fewer than the slices
    // (here a slice's start needs no alignment beyond the row's).
    int64_t most = std::min(wanted / numRows, cols / ((16 + rest - 1) / rest));
    // (interleaved: also where no divisor fills whole sectors, the most
    // slices of whole sectors and a tail)
    if (options.splitTail && (slices * 2 <= most || slices % band != 0)) {
      slices = cols / ((cols + most - 1) / most);
      if (slices >= 2 * band)
        slices = slices / band * band;
      ragged = cols % slices != 0;
    }
  } else {
    if (numRows >= targetBlocks / 2 || cols < (int64_t(1) << 16))
      return std::nullopt;
    // slices: about targetBlocks blocks in all, slices of at least 4096
    // columns, preferably as wide vectors as the unsplit row (a slice's
    // start as aligned as the row's: a row of 70000 takes 14 slices of
    // 5000, not 16 of 4375), unless that leaves half the slices or fewer
    // (8 x 12503: 8 slices, their chunks shifted, see `shifted`).
    auto fits = [&](int64_t d) {
      return d * numRows <= targetBlocks && cols / d >= 4096;
    };
    int64_t aligned = mostSlices(fits, [&](int64_t d) {
      return chunkWidthIn(cols / d) >= chunkWidthIn(cols);
    });
    int64_t any = mostSlices(fits, [](int64_t) { return true; });
    slices = aligned * 2 > any ? aligned : any;
    // Where no divisor comes near the slices that fit (a prime length, twice
    // one), equal slices of a multiple of 8 columns anyway, from the row's
    // start, and a tail of the rest (fewer than 8 columns a slice, plus
    // what the slices leave), reduced by a block of its own into one more
    // partial: a full reduction over 1000003 floats takes 244 slices of
    // 4096 and a tail of 579, not one block.
    // Likewise where the divisor taken starts its slices off the row's
    // alignment while the row itself is aligned: 366264 floats (8 x 45783)
    // in 72 slices of 5087 shifted their chunks and asked for 1.22x the
    // bytes in sectors; 89 slices of 4112 and a tail of 296 ask for each
    // sector once.
    int64_t most = std::min(targetBlocks / numRows, cols / 4096);
    bool offAligned = chunkWidthIn(cols / slices) < chunkWidthIn(cols);
    if (options.splitTail && (slices * 2 <= most || offAligned)) {
      slices = most;
      ragged = true;
    }
  }
  if (slices < 2)
    return std::nullopt;
  return SliceChoice{slices, ragged, interleaved};
}

namespace {
/// What a kernel of a split does (see splitLongRows).
enum class Role { Tail, Partials, Finish, Store, StoreTail };
/// A kernel of a split, decided before any is emitted: its generics, its
/// name and role, and how the row kernel emitter shapes it.
struct SplitKernel {
  SmallVector<linalg::GenericOp> gens;
  std::string name;
  Role role;
  /// A thread per row; a wave's finish run by its partials kernel's last
  /// block of each row (or tile of rows).
  bool perThread = false, lastBlock = false;
  /// The emitter's options (a tail and a last block's finish take their
  /// block size from the kernel they join, once it is emitted).
  RowKernelOptions options;
  /// A store's own space: its rows and columns (none: the generics').
  SmallVector<int64_t> rowSpace, colSpace;
  bool isTail() const { return role == Role::Tail || role == Role::StoreTail; }
};
} // namespace

/// Emits a split's kernels in order, but for each tail, which is emitted
/// just after the kernel of its slices (it precedes it), with its block
/// size, to run as its last blocks; then merges each tail into that kernel
/// and each last block's finish into its partials kernel. `numRows`,
/// `slices` and `alongRows`: the split's.
static LogicalResult emitSplitKernels(MutableArrayRef<SplitKernel> kernels,
                                      MLIRContext *ctx, int64_t numRows,
                                      int64_t slices, bool alongRows) {
  SmallVector<unsigned> emission;
  for (unsigned k = 0; k < kernels.size(); ++k)
    if (!kernels[k].isTail()) {
      emission.push_back(k);
      if (k > 0 && kernels[k - 1].isTail())
        emission.push_back(k - 1);
    }
  SmallVector<gpu::LaunchOp> launches(kernels.size());
  for (unsigned k : emission) {
    SplitKernel &kernel = kernels[k];
    SmallVector<linalg::GenericOp> &gens = kernel.gens;
    for (linalg::GenericOp g : gens)
      g->setAttr(kfuse::kKernelAttr, StringAttr::get(ctx, kernel.name));
    RowKernelOptions sliced = kernel.options;
    // (a finish the partials kernel's last block runs: with all its
    // threads, which its barriers wait for, and so that the partials'
    // registers bound the kernel's, not a warp loading every partial)
    if (kernel.lastBlock)
      if (auto threads = getConstantIntValue(launches[k - 1].getBlockSizeX()))
        sliced.exactThreads = *threads;
    if (kernel.isTail())
      if (auto threads = getConstantIntValue(launches[k + 1].getBlockSizeX()))
        sliced.exactThreads = *threads;
    // (other finishing kernels of a split along rows: tiles of rows, as
    // the partials are contiguous along them)
    bool tiles = alongRows && !kernel.perThread &&
                 kernel.role == Role::Finish && contiguousAlongRows(gens);
    std::optional<std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>> space;
    if (!kernel.rowSpace.empty())
      space = std::make_pair(ArrayRef<int64_t>(kernel.rowSpace),
                             ArrayRef<int64_t>(kernel.colSpace));
    FailureOr<gpu::LaunchOp> launch =
        emitSplitKernel(gens, kernel.name, sliced, kernel.perThread, tiles,
                        tiles && rowsFillThreads(gens, sliced.smCount), space);
    if (failed(launch))
      return failure();
    launches[k] = *launch;
  }
  // (a tail precedes the kernel of its slices, a finish follows it)
  SmallVector<int64_t> tailBlocks(kernels.size(), 0);
  for (unsigned k = 0; k + 1 < kernels.size(); ++k)
    if (kernels[k].isTail())
      tailBlocks[k + 1] = mergeTailBlocks(launches[k], launches[k + 1]);
  for (unsigned k = 1; k < launches.size(); ++k)
    if (kernels[k].lastBlock)
      finishInLastBlock(launches[k - 1], launches[k], numRows, slices,
                        alongRows, tailBlocks[k - 1]);
  return success();
}

namespace {
/// The slices' geometry: `count` slices of `len` columns from column
/// `start`, of `points` points each; a ragged split's tail is one more, of
/// the rest.
struct Slicing {
  int64_t count, len, start, points;
};

/// A store over pieces of the slices (see RowSplit::analyze): blocks of
/// this many threads, each with this many vectors.
constexpr int64_t kStoreThreads = 256, kStoreChunks = 2;

/// A group's split into slices (see splitLongRows). analyze() decides
/// whether and how the split applies and changes nothing; build() then
/// builds every kernel's generics (each wave's partials, its finish, the
/// stores), erases the group's and emits the kernels.
class RowSplit {
public:
  RowSplit(ArrayRef<linalg::GenericOp> generics, StringRef name,
           const RowKernelOptions &options, bool alongRows)
      : generics(generics), name(name), options(options), alongRows(alongRows),
        ctx(generics.front()->getContext()), loc(generics.front()->getLoc()),
        b(ctx) {}
  /// Whether the split applies: the slices, the kernels' waves, what the
  /// last kernel stores.
  bool analyze();
  /// analyze()'s steps: the group's reductions and rows (all of one shape,
  /// each with a combiner); the slices (`mainSlices`, `tailSlice`); the
  /// other generics over the full space or the rows; the full-space results
  /// a last kernel stores (`stored`, `storeEarly`); that kernel's shape
  /// (`storeTransposed`, `storePieces`, `storeSlices`); each reduction's
  /// wave and the values each kernel keeps to itself (`ofWave`,
  /// `privateFull`).
  bool findReductions();
  bool chooseSlicing();
  bool spacesFit();
  bool findStored();
  void chooseStoreShape();
  bool assignWaves();
  /// The points each row reduces (the reduction loops' ranges multiplied).
  int64_t pointsPerRow() const;
  /// The group's reductions and full-space generics, in program order.
  SmallVector<linalg::GenericOp> fullOrReductions();
  /// std::nullopt where building a kernel's generics fails (everything
  /// built erased, the group left as it was).
  std::optional<LogicalResult> build();

private:
  /// Each reduction's partials (a centered sum's: E_s, V_s, D_s).
  using PartialsOf = llvm::DenseMap<Operation *, SmallVector<Value, 3>>;
  using TermOf = llvm::function_ref<Value(OpBuilder &, Location, ValueRange,
                                          int64_t points)>;
  /// Loop d of the group in the split kernels' loops (the slice loop comes
  /// in at `at`).
  unsigned newDim(unsigned d) const { return d < at ? d : d + 1; }
  /// Every other generic runs over the full space or over the rows.
  bool isFull(linalg::GenericOp g) {
    return g.getNumReductionLoops() == 0 && g.getStaticLoopRanges() == loops;
  }
  /// The generic that last wrote `buffer` before `reader`, if in the group.
  linalg::GenericOp writerOf(Value buffer, linalg::GenericOp reader) {
    auto w = lastWriterBefore(generics, buffer, order[reader]);
    return w ? w->first : linalg::GenericOp();
  }
  /// The centred sums of squares and online sums of exponentials that
  /// fold in one pass over a slice (`centered`, `onlineSums`), and the
  /// waves (`plan`).
  void findCenteredSums();
  void findOnlineSums();
  void planWaves();
  /// Re-expresses a full-space generic over the split loops (slicing
  /// `sl`): every operand indexed by the split loop is viewed with that
  /// dimension split. A reduction's init is `partialInit`. (`stores`:
  /// whether the copy's kernel stores its results; see privateFull.)
  FailureOr<linalg::GenericOp> split(OpBuilder &b, linalg::GenericOp g,
                                     bool isReduction, Value partialInit,
                                     const Slicing &sl, bool stores);
  /// A copy of centered sum `v` (before splitting) that adds e instead of
  /// (e - q)^2 (`sums` null), or (e - E_s / n)^2 (`squares`) or e - E_s / n
  /// with the slice's sum E_s read from `sums`; q is not read.
  linalg::GenericOp centeredVariant(OpBuilder &b, linalg::GenericOp v,
                                    SplitCentered c, Value sums, bool squares,
                                    int64_t points);
  /// Erases everything built, in reverse.
  std::optional<LogicalResult> abandon();
  /// Split copies of the group's full-space generics that `keep` selects,
  /// in program order, each intermediate written through its own view (one
  /// set of views per kernel), appended to `into`.
  /// (`stores`: the copies whose results this kernel stores)
  LogicalResult
  splitFullSpace(SmallVectorImpl<linalg::GenericOp> &into,
                 llvm::function_ref<bool(linalg::GenericOp)> keep,
                 llvm::function_ref<bool(linalg::GenericOp)> stores,
                 const Slicing &sl);
  /// Wave w's partials over slicing `sl` into `into`: their buffers, filled
  /// with the combiners' neutral elements, the full-space ops the wave's
  /// reductions read, and the reductions over the slices.
  LogicalResult buildPartials(unsigned w, const Slicing &sl,
                              PartialsOf &partials,
                              SmallVectorImpl<linalg::GenericOp> &into);
  /// The last kernel: the stored results over (slice, rows...,
  /// columns...), after the last finishing kernel (and a ragged split's
  /// tail of them).
  LogicalResult buildStores();
  /// `o`'s map in `red` with the rows renamed, over (rows..., slice), or
  /// `overRows`: the rows alone.
  AffineMap renamedMap(linalg::GenericOp red, OpOperand *o,
                       bool overRows = false);
  /// The finish of reduction `red`, appended to `into`: a generic over
  /// (rows..., slice) that combines termOf(values, n) into red's init, the
  /// values those of `partials` at the slice and of `rowIns` (operands of
  /// red: row values, read through red's maps with the rows renamed), n the
  /// points of a slice; where the split is ragged, then a row-space generic
  /// that combines into it termOf of the tail's partials (`tailPartials`,
  /// one for each of `partials`) and n the tail's points.
  void finishOverSlices(OpBuilder &fb, SmallVectorImpl<linalg::GenericOp> &into,
                        linalg::GenericOp red, ArrayRef<Value> partials,
                        ArrayRef<Value> tailPartials,
                        ArrayRef<OpOperand *> rowIns, TermOf termOf);
  /// A centered sum's finish: init + sum over the slices of V_s + (q_s - q)
  /// (2 D_s + n (q_s - q)), q_s = E_s / n, q read at the row.
  void finishCentered(OpBuilder &fb, SmallVectorImpl<linalg::GenericOp> &into,
                      linalg::GenericOp v, SplitCentered c);
  /// An online sum's finish: init + sum over the slices of s_s exp(m_s -
  /// r), m_s the slices' maxima, r read at the row.
  void finishOnline(OpBuilder &fb, SmallVectorImpl<linalg::GenericOp> &into,
                    linalg::GenericOp s, SplitOnline o);
  /// How the row kernel emitter shapes each of `kernels`.
  void planKernels();

  ArrayRef<linalg::GenericOp> generics;
  StringRef name;
  const RowKernelOptions &options;
  bool alongRows;
  MLIRContext *ctx;

  // What analyze() finds (see there).
  SmallVector<linalg::GenericOp> reductions;
  SmallVector<int64_t> loops, rowLoops;
  SmallVector<utils::IteratorType> iters;
  unsigned rows = 0, splitLoop = 0, at = 0;
  int64_t numRows = 1, slices = 1;
  bool ragged = false, interleaved = false;
  Slicing mainSlices{}, tailSlice{}, storeSlices{};
  llvm::DenseMap<Operation *, unsigned> order; // (a generic's in the group)
  llvm::SetVector<Operation *> stored;
  bool storeEarly = false, storeTransposed = false, storePieces = false;
  llvm::DenseMap<Operation *, SplitCentered> centered;
  llvm::DenseMap<Operation *, SplitOnline> onlineSums;
  WavePlan plan;
  unsigned waves = 0;
  llvm::DenseSet<Value> privateFull;
  SmallVector<SmallVector<linalg::GenericOp>> ofWave; // (each wave's sums)

  // What build() builds (see there).
  Location loc;
  unsigned splitRank = 0; // (the split kernels' loops)
  /// Loop d of the group as the split kernels' loop newDim(d); the
  /// partials' indices in a split generic; their reads in a finish, and
  /// the reductions' loops there.
  SmallVector<AffineExpr> moved, partialIdx, partialRead, renamed;
  /// Full-space intermediates -> their split views (one kernel's).
  IRMapping buffers;
  /// Everything built, in order: a failure erases it all, in reverse
  /// (nothing of the group is changed until every kernel's generics are
  /// built).
  SmallVector<Operation *> created;
  /// Partials a split generic reads as such (a slice's sum, at its slice).
  llvm::DenseSet<Value> readAsPartial;
  /// The split view of each group input, one for all (an online sum sees
  /// that it reads what its max reads). (by input and the slices' first
  /// column and width: a ragged split's tail has its own, and so has a
  /// store over pieces of the slices)
  llvm::DenseMap<std::tuple<Value, int64_t, int64_t>, Value> inputViews;
  AffineMap partialPlaceholder, atSlice, atTail;
  /// The copies of sums the partials kernels split (centered and online).
  SmallVector<Operation *> variants;
  Operation *anchor = nullptr;
  OpBuilder b;
  /// Each wave's partials kernel's generics and its tail's; where each
  /// wave's finish goes.
  SmallVector<SmallVector<linalg::GenericOp>> partialKernels, tailKernels;
  SmallVector<Operation *> boundary;
  /// Each reduction's partials, and its tail's (a ragged split's).
  PartialsOf partialsOf, tailPartialsOf;
  SmallVector<linalg::GenericOp> storing, storingTail, rowValues;
  SmallVector<SplitKernel, 4> kernels;
};
} // namespace

/// The centred sums of squares among the reductions (see SplitCentered).
void RowSplit::findCenteredSums() {
  for (linalg::GenericOp red : reductions) {
    bool squares = false;
    Value d = centeredValue(red, squares);
    auto sub =
        d && squares ? d.getDefiningOp<arith::SubFOp>() : arith::SubFOp();
    std::optional<Center> c = sub ? matchCenter(sub, red) : std::nullopt;
    if (!c)
      continue;
    Value qBuffer = red.getDpsInputOperand(c->r.getArgNumber())->get();
    linalg::GenericOp w = writerOf(qBuffer, red);
    if (w && !isFull(w))
      centered[red] = {sub, *c, qBuffer};
  }
}

/// The online sums of exponentials among the reductions but the centered
/// ones (see SplitOnline).
void RowSplit::findOnlineSums() {
  for (linalg::GenericOp red : reductions) {
    Value term = sumTerm(red);
    auto exp = term ? term.getDefiningOp<math::ExpOp>() : math::ExpOp();
    if (centered.contains(red) || !exp || !term.hasOneUse())
      continue;
    auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
    if (!sub || !sub->hasOneUse())
      continue;
    std::optional<Center> ref = rowFunction(sub.getRhs(), red, sub);
    auto e = dyn_cast<BlockArgument>(sub.getLhs());
    if (!ref || !e || e.getOwner() != red.getBody() || e == ref->r ||
        e.getArgNumber() >= red.getNumDpsInputs())
      continue;
    BlockArgument m = ref->r;
    linalg::GenericOp max =
        writerOf(red.getDpsInputOperand(m.getArgNumber())->get(), red);
    std::optional<Combiner> mc =
        max ? findCombiner(max) : std::optional<Combiner>();
    if (!max || !llvm::is_contained(reductions, max) || !mc ||
        !isa<arith::MaximumFOp, arith::MaxNumFOp>(mc->op))
      continue;
    auto maxTerm = dyn_cast<BlockArgument>(mc->termOf(max));
    if (!maxTerm || maxTerm.getOwner() != max.getBody() ||
        maxTerm.getArgNumber() >= max.getNumDpsInputs())
      continue;
    OpOperand *eIn = red.getDpsInputOperand(e.getArgNumber());
    OpOperand *mIn = max.getDpsInputOperand(maxTerm.getArgNumber());
    Type type = sub.getType();
    if (eIn->get() != mIn->get() || writerOf(eIn->get(), red) ||
        red.getMatchingIndexingMap(eIn) != max.getMatchingIndexingMap(mIn) ||
        cast<MemRefType>(red.getDpsInits()[0].getType()).getElementType() !=
            type ||
        cast<MemRefType>(max.getDpsInits()[0].getType()).getElementType() !=
            type)
      continue;
    onlineSums[red] = {max, sub, *ref};
  }
}

/// The waves of the split group (see WavePlan). An online sum whose max's
/// partials come in a wave before its own inputs' is dropped from
/// `onlineSums` (two passes then).
void RowSplit::planWaves() {
  plan.fullDeps.resize(reductions.size());
  llvm::DenseMap<Operation *, unsigned> &avail = plan.avail,
                                        &partialWave = plan.partialWave;
  SmallVector<llvm::SetVector<Operation *>> &fullDeps = plan.fullDeps;
  unsigned &waves = plan.waves;
  for (linalg::GenericOp g : generics) {
    if (isFull(g))
      continue;
    if (g.getNumReductionLoops() == 0) {
      unsigned a = 1;
      for (Value v : g->getOperands())
        if (linalg::GenericOp w = isa<MemRefType>(v.getType())
                                      ? writerOf(v, g)
                                      : linalg::GenericOp())
          a = std::max(a, avail.lookup(w));
      avail[g] = a;
      continue;
    }
    unsigned i = llvm::find(reductions, g) - reductions.begin();
    unsigned after = 0; // the latest wave whose results it reads
    auto c = centered.find(g);
    auto o = onlineSums.find(g);
    SmallVector<linalg::GenericOp> worklist{g};
    while (!worklist.empty()) {
      linalg::GenericOp r = worklist.pop_back_val();
      for (OpOperand *inOp : r.getDpsInputOperands()) {
        Value in = inOp->get();
        if (!isa<MemRefType>(in.getType()) ||
            (r == g && c != centered.end() &&
             inOp->getOperandNumber() == c->second.center.r.getArgNumber()) ||
            (r == g && o != onlineSums.end() &&
             inOp->getOperandNumber() == o->second.ref.r.getArgNumber()))
          continue; // (a centered sum's partials do not read q, an online
                    // sum's not m)
        linalg::GenericOp w = writerOf(in, r);
        if (!w)
          continue; // a group input
        if (isFull(w)) {
          if (fullDeps[i].insert(w))
            worklist.push_back(w);
        } else {
          after = std::max(after, avail.lookup(w));
        }
      }
    }
    // (an online sum's partials are computed beside its max's)
    if (o != onlineSums.end() &&
        partialWave.lookup(o->second.max) != after + 1) {
      after = std::max(after, avail.lookup(o->second.max));
      onlineSums.erase(o);
      o = onlineSums.end();
    }
    unsigned wave = after + 1;
    // (a centered sum finishes once q is ready, an online sum once m is)
    if (c != centered.end())
      wave = std::max(wave, avail.lookup(writerOf(c->second.qBuffer, g)));
    if (o != onlineSums.end())
      wave = std::max(wave, avail.lookup(o->second.max));
    // (its init, combined into in the finishing kernel, must be ready then)
    if (linalg::GenericOp w = writerOf(g.getDpsInits()[0], g))
      wave = std::max(wave, avail.lookup(w));
    avail[g] = wave;
    partialWave[g] =
        c != centered.end() || o != onlineSums.end() ? after + 1 : wave;
    waves = std::max(waves, wave);
  }
}

bool RowSplit::analyze() {
  if (!findReductions() || !chooseSlicing() || !spacesFit() || !findStored())
    return false;
  chooseStoreShape();
  // Centred sums of squares and online sums of exponentials fold in one
  // pass over a slice (fast numerics; see SplitCentered, SplitOnline).
  if (options.online) {
    findCenteredSums();
    findOnlineSums();
  }
  // Waves (see planWaves).
  planWaves();
  waves = plan.waves;
  return assignWaves();
}

int64_t RowSplit::pointsPerRow() const {
  int64_t perRow = 1;
  for (auto [range, it] : llvm::zip(loops, iters))
    if (it == utils::IteratorType::reduction)
      perRow *= range;
  return perRow;
}

SmallVector<linalg::GenericOp> RowSplit::fullOrReductions() {
  SmallVector<linalg::GenericOp> ops;
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0 || isFull(g))
      ops.push_back(g);
  return ops;
}

bool RowSplit::findReductions() {
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0)
      reductions.push_back(g);
  if (reductions.empty())
    return false;
  loops = reductions[0].getStaticLoopRanges();
  iters = reductions[0].getIteratorTypesArray();
  for (linalg::GenericOp red : reductions)
    if ((!alongRows &&
         (red.getNumReductionLoops() != 1 || !kfuse::reductionsTrail(red))) ||
        contractionIn(red, generics) || red.getStaticLoopRanges() != loops ||
        red.getIteratorTypesArray() != iters || !findCombiner(red))
      return false;
  rows = reductions[0].getNumParallelLoops();
  rowLoops = kfuse::parallelExtents(reductions[0]);
  numRows = 1;
  for (int64_t r : rowLoops)
    numRows *= r;
  return true;
}

bool RowSplit::chooseSlicing() {
  // The loop split into slices: the reduction loop (rows), the first one
  // (along rows). In the split kernels the slice loop comes in at `at` (after
  // the rows; first along rows) and the loops from `at` on move up one.
  splitLoop = llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  at = alongRows ? 0 : splitLoop;
  int64_t cols = loops[splitLoop];
  std::optional<SliceChoice> choice = chooseSlices(
      generics, loops, iters, splitLoop, numRows, alongRows, options);
  if (!choice)
    return false;
  slices = choice->slices;
  ragged = choice->ragged;
  interleaved = choice->interleaved;
  int64_t len = ragged && !alongRows ? cols / slices / 8 * 8 : cols / slices;
  // Points each row reduces, and each slice of it (and the tail).
  int64_t perRow = pointsPerRow();
  int64_t perSlice = perRow / cols * len;
  mainSlices = {slices, len, 0, perSlice};
  tailSlice = {1, cols - slices * len, slices * len,
               perRow / cols * (cols - slices * len)};

  return true;
}

bool RowSplit::spacesFit() {
  // (full-space ops of a group whose reductions do not trail run over a
  // space the row kernel does not know)
  if (!kfuse::reductionsTrail(reductions[0]) &&
      llvm::any_of(generics, [&](linalg::GenericOp g) { return isFull(g); }))
    return false;
  for (linalg::GenericOp g : generics) {
    order[g] = order.size();
    if (g.getNumReductionLoops() == 0 && !isFull(g) &&
        g.getStaticLoopRanges() != rowLoops)
      return false;
  }
  return true;
}

bool RowSplit::findStored() {
  // Full-space values never leave the group or reach a row-space op: each
  // partials kernel recomputes what it needs from the group's inputs.
  SmallVector<linalg::GenericOp> fullOrReduction = fullOrReductions();
  int64_t perRow = pointsPerRow();
  int64_t smCount = options.smCount, maxCluster = options.maxCluster;
  // Full-space results that leave the group (x - mean beside the variance
  // of an NHWC tensor, a softmax over a few rows of 2^20) are computed by a
  // last kernel, after every row value is in memory, over the same slices:
  // `stored`, with the full-space ops they read. The rows are then read
  // twice, so with trailing reductions only where one kernel would keep an
  // eighth of the SMs busy at most (x / |x| over 2^20: one block): a block
  // per row, or a cluster of `maxCluster` where the row fits their
  // registers (as RowKernel::emit shapes them). (A model, not yet timed: an
  // SM streams about 1/8 of the device's bandwidth at most, and two more
  // launches cost microseconds.)
  int64_t widestBytes = elementBytes(fullOrReduction).second;
  int64_t unsplitBlocks =
      numRows * (maxCluster > 1 && perRow * widestBytes <=
                                       maxCluster *
                                           clusterBlockThreads(
                                               maxCluster, options.occupancy) *
                                           kClusterRoom * 16
                     ? maxCluster
                     : 1);
  for (linalg::GenericOp g : generics)
    if (isFull(g))
      for (Value init : g.getDpsInits())
        if (!isPrivateTo(init, fullOrReduction)) {
          if (!alongRows && unsplitBlocks * 8 > smCount)
            return false;
          stored.insert(g);
        }
  // (rows a tile of rows holds in registers read x once, unsplit: 4096
  // scalars a row in 128 threads; the split reads it twice)
  if (!stored.empty() && perRow <= 4096)
    return false;
  for (unsigned i = 0; i < stored.size(); ++i)
    for (Value in : cast<linalg::GenericOp>(stored[i]).getDpsInputs())
      if (auto w = lastWriterBefore(
              generics, in, llvm::find(generics, stored[i]) - generics.begin());
          w && isFull(w->first))
        stored.insert(w->first);
  // Stored results that read no row value (dx = dy * gelu'(x) beside its
  // bias gradient dx.sum(0)) need not wait for the rows: the first wave's
  // partials kernels store them as they compute them, and no kernel reads
  // the rows again. (`stored` holds every full-space writer of what a
  // stored op reads, so each reading only inputs and full-space values is
  // enough.)
  storeEarly = !stored.empty() && llvm::all_of(stored, [&](Operation *op) {
    auto g = cast<linalg::GenericOp>(op);
    return llvm::all_of(g.getDpsInputs(), [&](Value in) {
      auto w = lastWriterBefore(generics, in,
                                llvm::find(generics, g) - generics.begin());
      return !w || isFull(w->first);
    });
  });
  return true;
}

void RowSplit::chooseStoreShape() {
  // Along rows the stored results are elementwise over the full space, so
  // their kernel need not follow the slices: it runs over (positions,
  // rows), the reductions' loops as its rows and the group's rows as its
  // columns (x[n, h, w, c] of a batch normalization read and y stored as
  // vectors along c, the statistics read at the column). Rows narrower
  // than a warp's vectors take a group of lanes each, several a warp (see
  // RowKernel::emit): consecutive positions are consecutive in memory, so
  // a warp's request still moves 512 bytes (64 channels: 16 lanes a
  // position), where the slices' store (a thread per slice and row, the
  // option off) moves scalars, each thread over its slice's positions one
  // after another.
  bool storeOwnShape = options.transposeStore && !stored.empty() && !storeEarly;
  storeTransposed = alongRows && storeOwnShape;
  // Along a row's columns the stored results' kernel need not follow the
  // slices either: it only reads the finished row values. Its blocks take
  // a slice's columns in pieces of 256 threads x 2 vectors (2048 floats,
  // 4096 halves), not the whole slice of 8 vectors a thread: x / ||x||
  // over 2^24 floats stores in 8192 blocks, not 1024 of 512 threads that
  // an SM holds 3 of, so its last blocks, which run while the others have
  // ended, are short. (The option off: over the partials' slices.)
  storePieces = !alongRows && storeOwnShape;
  storeSlices = mainSlices;
  int64_t len = mainSlices.len, perSlice = mainSlices.points;
  if (storePieces) {
    // (16-byte vectors of the narrowest element type, as the kernel's)
    int64_t vector = 16 / elementBytes(generics).first;
    int64_t width = std::min(chunkWidthIn(len), vector);
    for (int64_t k = len / (kStoreThreads * kStoreChunks * vector); k > 1; --k)
      if (len % k == 0 && chunkWidthIn(len / k) >= width) {
        storeSlices = {slices * k, len / k, 0, perSlice / k};
        break;
      }
  }
}

bool RowSplit::assignWaves() {
  SmallVector<linalg::GenericOp> fullOrReduction = fullOrReductions();
  int64_t smCount = options.smCount, maxCluster = options.maxCluster;
  // Full-space values that only full-space ops and reductions of the group
  // read (h of a stack of normalizations over the same rows, read by the
  // next layer's statistics and by its h): each kernel that computes one
  // writes its copy to a buffer of its own (see `split`), which no other
  // kernel's copy sees, so the value stays in the kernel's registers. So do
  // the copies of a result that leaves the group in every kernel but the
  // one that stores it (the storing kernel, or the first wave's partials
  // where it reads no row value): otherwise each kernel would see the
  // others' copies read its buffer and store it, a result possibly in a
  // wave before the row values it reads.
  for (linalg::GenericOp g : generics)
    if (isFull(g))
      for (Value init : g.getDpsInits())
        if (isPrivateTo(init, fullOrReduction))
          privateFull.insert(init);
  ofWave.resize(waves + 1);
  for (linalg::GenericOp red : reductions)
    ofWave[plan.partialWave[red]].push_back(red);
  for (unsigned w = 1; w <= waves; ++w)
    if (ofWave[w].empty())
      return false; // (row-space work before any reduction's results)
  // Several waves read the rows several times: worth it only while one
  // kernel would leave most SMs idle. (A thread per row reads them once per
  // reduction anyway.)
  if (!alongRows && waves > 1 &&
      numRows * std::max<int64_t>(1, maxCluster) >= smCount)
    return false;
  return true;
}

std::optional<LogicalResult> RowSplit::build() {
  loc = reductions[0].getLoc();
  // The split kernels' loops: old loop d is newDim(d), the split loop
  // becomes the column within a slice.
  splitRank = loops.size() + 1;
  for (unsigned d = 0; d < loops.size(); ++d)
    moved.push_back(getAffineDimExpr(newDim(d), ctx));
  // The partials' indices (rows..., slice) or, along rows, (slice, rows...).
  for (unsigned d = 0; d < loops.size(); ++d)
    if (iters[d] == utils::IteratorType::parallel)
      partialIdx.push_back(moved[d]);
  partialIdx.insert(alongRows ? partialIdx.begin() : partialIdx.end(),
                    getAffineDimExpr(at, ctx));
  // How a copy of a reduction reads partials in place of a row value (split
  // reads them at the slice; this map only gives the rank).
  partialPlaceholder = [&] {
    SmallVector<AffineExpr> idx;
    for (auto [d, it] : llvm::enumerate(iters))
      if (it == utils::IteratorType::parallel)
        idx.push_back(getAffineDimExpr(d, ctx));
    idx.insert(alongRows ? idx.begin() : idx.end(),
               getAffineConstantExpr(0, ctx));
    return AffineMap::get(loops.size(), 0, idx, ctx);
  }();
  // The finishing kernels' combines run over (rows..., slice): the rows in
  // their order, then the slice as the reduction loop; the partials are
  // read through (rows..., slice) or, along rows, (slice, rows...), and
  // the reductions' inits through their maps with every row loop renamed.
  for (unsigned d = 0; d < rows; ++d)
    partialRead.push_back(getAffineDimExpr(d, ctx));
  partialRead.insert(alongRows ? partialRead.begin() : partialRead.end(),
                     getAffineDimExpr(rows, ctx));
  for (unsigned d = 0, r = 0; d < loops.size(); ++d)
    renamed.push_back(iters[d] == utils::IteratorType::parallel
                          ? getAffineDimExpr(r++, ctx)
                          : getAffineConstantExpr(0, ctx));
  // The kernels go after the group, in order: partials of wave 1, its
  // finishing kernel, partials of wave 2, ... First every partials kernel
  // (building them may fail: then everything built is erased and the group
  // is left as it was).
  anchor = generics.back()->getNextNode();
  b.setInsertionPoint(anchor);
  partialKernels.resize(waves + 1);
  tailKernels.resize(waves + 1);
  boundary.assign(waves + 1, anchor);
  for (unsigned w = 1; w <= waves; ++w) {
    size_t start = created.size();
    // (a ragged split's tail first: the partials kernel's last block,
    // finishing the wave, then finds the tail's partial in memory)
    if ((ragged &&
         failed(buildPartials(w, tailSlice, tailPartialsOf, tailKernels[w]))) ||
        failed(buildPartials(w, mainSlices, partialsOf, partialKernels[w])))
      return abandon();
    if (w > 1)
      boundary[w - 1] = created[start];
  }
  if (failed(buildStores()))
    return abandon();
  atSlice = AffineMap::get(rows + 1, 0, partialRead, ctx);
  SmallVector<AffineExpr> tailRead(partialRead);
  for (AffineExpr &e : tailRead)
    if (e == getAffineDimExpr(rows, ctx))
      e = getAffineConstantExpr(0, ctx);
  atTail = AffineMap::get(rows, 0, tailRead, ctx);
  // Then each finishing kernel, before the next wave's partials: the
  // combines of the wave's partials into the reductions' inits and the
  // row-space ops of the wave, in program order.
  for (unsigned w = 1; w <= waves; ++w) {
    OpBuilder fb(boundary[w]);
    SmallVector<linalg::GenericOp> second;
    for (linalg::GenericOp g : generics) {
      if (isFull(g) || plan.avail.lookup(g) != w)
        continue;
      if (g.getNumReductionLoops() == 0) {
        g->moveBefore(boundary[w]);
        second.push_back(g);
        continue;
      }
      if (auto c = centered.find(g); c != centered.end()) {
        finishCentered(fb, second, g, c->second);
        continue;
      }
      if (auto o = onlineSums.find(g); o != onlineSums.end()) {
        finishOnline(fb, second, g, o->second);
        continue;
      }
      finishOverSlices(fb, second, g, {partialsOf[g][0]},
                       ragged ? SmallVector<Value>{tailPartialsOf[g][0]}
                              : SmallVector<Value>(),
                       {}, [](OpBuilder &, Location, ValueRange args, int64_t) {
                         return args[0];
                       });
    }
    if (w == waves)
      second.append(rowValues);
    std::string suffix = w == 1 ? "" : std::to_string(w);
    if (ragged)
      kernels.push_back(
          {tailKernels[w], (name + "_tail" + suffix).str(), Role::Tail});
    kernels.push_back({partialKernels[w], (name + "_partial" + suffix).str(),
                       Role::Partials});
    kernels.push_back({second,
                       w == waves
                           ? name.str()
                           : (name + "_combine" + std::to_string(w)).str(),
                       Role::Finish});
  }
  if (!storingTail.empty())
    kernels.push_back(
        {storingTail, (name + "_store_tail").str(), Role::StoreTail});
  if (!storing.empty())
    kernels.push_back({storing, (name + "_store").str(), Role::Store});
  SmallVector<linalg::GenericOp> originals(reductions);
  for (linalg::GenericOp g : generics)
    if (isFull(g))
      originals.push_back(g);
  for (linalg::GenericOp g : originals)
    g.erase();
  for (Operation *variant : variants)
    variant->erase();
  planKernels();
  return emitSplitKernels(kernels, ctx, numRows, slices, alongRows);
}

// (`stores`: whether a full-space copy's kernel stores its results; see
// privateFull)
FailureOr<linalg::GenericOp> RowSplit::split(OpBuilder &b, linalg::GenericOp g,
                                             bool isReduction,
                                             Value partialInit,
                                             const Slicing &sl, bool stores) {
  SmallVector<Value> ins, outs;
  SmallVector<AffineMap> maps;
  for (OpOperand &o : g->getOpOperands()) {
    AffineMap map = g.getMatchingIndexingMap(&o);
    bool isInit = g.isDpsInit(&o);
    if ((isInit && isReduction) || readAsPartial.contains(o.get())) {
      (isInit ? outs : ins).push_back(isInit ? partialInit : o.get());
      maps.push_back(AffineMap::get(splitRank, 0, partialIdx, ctx));
      continue;
    }
    Value v = buffers.lookupOrDefault(o.get());
    SmallVector<AffineExpr> r;
    int splitDim = -1;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (dim && dim.getPosition() == splitLoop) {
        splitDim = i;
        AffineExpr slice = getAffineDimExpr(at, ctx),
                   inSlice = getAffineDimExpr(newDim(splitLoop), ctx);
        r.push_back(interleaved ? inSlice : slice);
        r.push_back(interleaved ? slice : inSlice);
      } else if (e.isFunctionOfDim(splitLoop)) {
        return failure();
      } else {
        r.push_back(e.replaceDims(moved));
      }
    }
    if (Value view = inputViews.lookup({o.get(), sl.start, sl.len});
        view && splitDim >= 0 && !isInit)
      v = view;
    // (the shape of `type` with dimension splitDim split in the slices,
    // and which of its dimensions each of `type`'s becomes)
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> assoc;
    auto splitShape = [&](MemRefType type) {
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d == splitDim) {
          assoc.push_back({int64_t(shape.size()), int64_t(shape.size()) + 1});
          shape.push_back(interleaved ? sl.len : sl.count);
          shape.push_back(interleaved ? sl.count : sl.len);
        } else {
          assoc.push_back({int64_t(shape.size())});
          shape.push_back(type.getDimSize(d));
        }
      }
    };
    if (isInit && splitDim >= 0 && (!stores || privateFull.contains(o.get()))) {
      // (a private intermediate, or a copy that does not store: a buffer
      // of this kernel's own, already in the split shape)
      auto type = cast<MemRefType>(v.getType());
      splitShape(type);
      v = memref::AllocOp::create(
          b, loc, MemRefType::get(shape, type.getElementType()));
      created.push_back(v.getDefiningOp());
      buffers.map(o.get(), v);
    } else if (splitDim >= 0 && v == o.get()) {
      // (a view of static strides too, a slice of an argument: the
      // slices' views compose with it)
      auto type = cast<MemRefType>(v.getType());
      if (!type.getLayout().isIdentity() &&
          !kfuse::hasStaticStrides(type, /*unitInnermost=*/true))
        return failure();
      // (a ragged split's slices, or its tail, are a subview of the
      // row's columns first: strided, its start the view's offset)
      if (ragged) {
        SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
            strides(type.getRank(), 1);
        offsets[splitDim] = sl.start;
        sizes[splitDim] = sl.count * sl.len;
        v = memref::SubViewOp::create(b, loc, v, offsets, sizes, strides);
        created.push_back(v.getDefiningOp());
      }
      splitShape(type);
      FailureOr<MemRefType> splitType =
          memref::ExpandShapeOp::computeExpandedType(
              cast<MemRefType>(v.getType()), shape, assoc);
      if (failed(splitType))
        return failure();
      v = memref::ExpandShapeOp::create(b, loc, *splitType, v, assoc);
      created.push_back(v.getDefiningOp());
      if (isInit)
        buffers.map(o.get(), v);
      else if (!lastWriterBefore(generics, o.get(), generics.size()))
        inputViews[{o.get(), sl.start, sl.len}] = v;
    }
    (isInit ? outs : ins).push_back(v);
    maps.push_back(AffineMap::get(splitRank, 0, r, ctx));
  }
  SmallVector<utils::IteratorType> newIters(g.getIteratorTypesArray());
  newIters.insert(newIters.begin() + at, utils::IteratorType::parallel);
  auto ng =
      linalg::GenericOp::create(b, loc, TypeRange{}, ins, outs, maps, newIters);
  IRMapping m;
  g.getRegion().cloneInto(&ng.getRegion(), m);
  // linalg.index of the split loop becomes slice * len + column
  // (interleaved: column * count + slice); the others follow their loops.
  SmallVector<linalg::IndexOp> indices;
  ng.getBody()->walk([&](linalg::IndexOp i) { indices.push_back(i); });
  for (linalg::IndexOp i : indices) {
    OpBuilder ib(i);
    Value index;
    if (i.getDim() == splitLoop) {
      Value s = linalg::IndexOp::create(ib, loc, at);
      Value c = linalg::IndexOp::create(ib, loc, newDim(splitLoop));
      if (interleaved)
        std::swap(s, c);
      index = arith::AddIOp::create(
          ib, loc,
          arith::MulIOp::create(ib, loc, s,
                                arith::ConstantIndexOp::create(
                                    ib, loc, interleaved ? sl.count : sl.len)),
          c);
      if (sl.start)
        index = arith::AddIOp::create(
            ib, loc, index, arith::ConstantIndexOp::create(ib, loc, sl.start));
    } else if (newDim(i.getDim()) != i.getDim()) {
      index = linalg::IndexOp::create(ib, loc, newDim(i.getDim()));
    } else {
      continue;
    }
    i.replaceAllUsesWith(index);
    i.erase();
  }
  for (NamedAttribute a : g->getDiscardableAttrs())
    ng->setAttr(a.getName(), a.getValue());
  return ng;
}

linalg::GenericOp RowSplit::centeredVariant(OpBuilder &b, linalg::GenericOp v,
                                            SplitCentered c, Value sums,
                                            bool squares, int64_t points) {
  unsigned qArg = c.center.r.getArgNumber();
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  inputsBut(v, qArg, ins, maps);
  if (sums) {
    ins.push_back(sums);
    maps.push_back(partialPlaceholder);
  }
  maps.push_back(v.getMatchingIndexingMap(v.getDpsInitOperand(0)));
  Value term = sumTerm(v);
  Operation *square = term.getDefiningOp();
  auto variant = linalg::GenericOp::create(
      b, loc, TypeRange{}, ins, v.getDpsInits(), maps,
      v.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping m;
        Block *body = v.getBody();
        unsigned k = 0;
        for (unsigned a = 0; a < v.getNumDpsInputs(); ++a)
          if (a != qArg)
            m.map(body->getArgument(a), args[k++]);
        Value sum = sums ? args[k++] : Value();
        m.map(body->getArguments().back(), args.back());
        for (Operation &op : body->without_terminator()) {
          if (llvm::is_contained(c.center.ops, &op))
            continue;
          if (!sums && (&op == c.sub || &op == square)) {
            // (the sum adds e itself)
            if (&op == square)
              m.map(term, m.lookupOrDefault(c.sub.getLhs()));
            continue;
          }
          if (sums && &op == c.sub)
            m.map(c.sub.getRhs(),
                  arith::DivFOp::create(
                      nb, nl, sum,
                      floatConstant(nb, nl, sum.getType(), double(points))));
          if (sums && !squares && &op == square) {
            m.map(term, m.lookup(c.sub.getResult()));
            continue;
          }
          nb.clone(op, m);
        }
        nb.clone(*body->getTerminator(), m);
      });
  for (NamedAttribute a : v->getDiscardableAttrs())
    variant->setAttr(a.getName(), a.getValue());
  variants.push_back(variant);
  return variant;
}

std::optional<LogicalResult> RowSplit::abandon() {
  for (Operation *op : llvm::reverse(created))
    op->erase();
  return std::nullopt;
}

LogicalResult
RowSplit::splitFullSpace(SmallVectorImpl<linalg::GenericOp> &into,
                         llvm::function_ref<bool(linalg::GenericOp)> keep,
                         llvm::function_ref<bool(linalg::GenericOp)> stores,
                         const Slicing &sl) {
  buffers.clear();
  for (linalg::GenericOp g : generics) {
    if (!isFull(g) || !keep(g))
      continue;
    auto ng = split(b, g, false, Value(), sl, stores(g));
    if (failed(ng))
      return failure();
    created.push_back(*ng);
    into.push_back(*ng);
  }
  return success();
}

LogicalResult
RowSplit::buildPartials(unsigned w, const Slicing &sl, PartialsOf &partials,
                        SmallVectorImpl<linalg::GenericOp> &into) {
  SmallVector<int64_t> shape(rowLoops);
  shape.insert(alongRows ? shape.begin() : shape.end(), sl.count);
  // A centered sum whose e an earlier plain sum of the wave adds (the
  // variance's mean): that sum's partials are its E_s.
  llvm::DenseMap<Operation *, linalg::GenericOp> sumOfE;
  for (auto [i, red] : llvm::enumerate(ofWave[w])) {
    auto c = centered.find(red);
    if (c == centered.end())
      continue;
    Type accType =
        cast<MemRefType>(red.getDpsInits()[0].getType()).getElementType();
    for (linalg::GenericOp s : ArrayRef(ofWave[w]).take_front(i)) {
      SameMemo memo;
      Value term = sumTerm(s);
      if (term && !centered.contains(s) && !onlineSums.contains(s) &&
          cast<MemRefType>(s.getDpsInits()[0].getType()).getElementType() ==
              accType &&
          s.getMatchingIndexingMap(s.getDpsInitOperand(0)) ==
              red.getMatchingIndexingMap(red.getDpsInitOperand(0)) &&
          sameTermIn(generics, order, term, s, c->second.sub.getLhs(), red,
                     memo)) {
        sumOfE[red] = s;
        break;
      }
    }
  }
  for (linalg::GenericOp red : ofWave[w]) {
    Combiner comb = *findCombiner(red);
    Type accType =
        cast<MemRefType>(red.getDpsInits()[0].getType()).getElementType();
    // The partials start from the combiner's neutral element (a centered
    // sum has three: the slices' sums E_s, V_s and D_s; E_s is its
    // partner's, where it has one).
    bool shared = sumOfE.contains(red);
    if (shared)
      partials[red].push_back(partials[sumOfE[red]][0]);
    for (unsigned k = shared; k < (centered.contains(red) ? 3 : 1); ++k) {
      auto alloc =
          memref::AllocOp::create(b, loc, MemRefType::get(shape, accType));
      created.push_back(alloc);
      partials[red].push_back(alloc);
      Value neutralValue =
          arith::ConstantOp::create(b, loc, neutral(b, comb.kind, accType));
      created.push_back(neutralValue.getDefiningOp());
      auto fill = kfuse::fillGeneric(b, loc, neutralValue, alloc);
      created.push_back(fill);
      into.push_back(fill);
    }
  }
  auto storesHere = [&](linalg::GenericOp g) {
    return storeEarly && w == 1 && stored.contains(g);
  };
  if (failed(splitFullSpace(
          into,
          [&](linalg::GenericOp g) {
            return storesHere(g) ||
                   llvm::any_of(ofWave[w], [&](linalg::GenericOp red) {
                     return plan
                         .fullDeps[llvm::find(reductions, red) -
                                   reductions.begin()]
                         .contains(g);
                   });
          },
          storesHere, sl)))
    return failure();
  for (linalg::GenericOp red : ofWave[w]) {
    SmallVector<std::pair<linalg::GenericOp, Value>> parts;
    if (auto c = centered.find(red); c != centered.end()) {
      // Sums of e, then of (e - E_s / n)^2 and e - E_s / n: copies of
      // the sum to split.
      ArrayRef<Value> p = partials[red];
      readAsPartial.insert(p[0]);
      if (!sumOfE.contains(red))
        parts.push_back(
            {centeredVariant(b, red, c->second, Value(), true, sl.points),
             p[0]});
      parts.push_back(
          {centeredVariant(b, red, c->second, p[0], true, sl.points), p[1]});
      parts.push_back(
          {centeredVariant(b, red, c->second, p[0], false, sl.points), p[2]});
      for (auto [variant, partial] : parts)
        created.push_back(variant);
    } else if (auto o = onlineSums.find(red); o != onlineSums.end()) {
      // The sum of exp(e - m_s), m_s the slice's max: a copy of the sum
      // reading the max's partials in place of m.
      Value maxPartials = partials[o->second.max][0];
      readAsPartial.insert(maxPartials);
      IRMapping cloned;
      auto variant =
          cast<linalg::GenericOp>(b.clone(*red.getOperation(), cloned));
      unsigned mArg = o->second.ref.r.getArgNumber();
      variant->setOperand(mArg, maxPartials);
      SmallVector<AffineMap> maps = variant.getIndexingMapsArray();
      maps[mArg] = partialPlaceholder;
      variant.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
      if (!o->second.ref.ops.empty()) {
        // (exp(e - m_s), not exp(e - r(m_s)): r applies in the finish)
        cloned.lookup(o->second.sub.getResult())
            .getDefiningOp()
            ->setOperand(1, variant.getBody()->getArgument(mArg));
        for (Operation *op : llvm::reverse(o->second.ref.ops))
          cloned.lookup(op->getResult(0)).getDefiningOp()->erase();
      }
      created.push_back(variant);
      variants.push_back(variant);
      parts = {{variant, partials[red][0]}};
    } else {
      parts = {{red, partials[red][0]}};
    }
    for (auto [g, partial] : parts) {
      auto nred = split(b, g, true, partial, sl, /*stores=*/true);
      if (failed(nred))
        return failure();
      created.push_back(*nred);
      into.push_back(*nred);
    }
  }
  return success();
}

LogicalResult RowSplit::buildStores() {
  if (stored.empty() || storeEarly)
    return success();
  size_t start = created.size();
  auto isStored = [&](linalg::GenericOp g) { return stored.contains(g); };
  if (storeTransposed) {
    // (copies of the stored ops, their loops interchanged: the
    // reductions' loops first, then the rows')
    SmallVector<unsigned> interchange;
    for (unsigned d = rows; d < loops.size(); ++d)
      interchange.push_back(d);
    for (unsigned d = 0; d < rows; ++d)
      interchange.push_back(d);
    IRRewriter rewriter(ctx);
    for (linalg::GenericOp g : generics) {
      if (!isStored(g))
        continue;
      // (the values of the row computed once a row, by the last
      // finishing kernel)
      linalg::GenericOp copy;
      if (auto hoisted = hoistRowValues(b, g, rows, created)) {
        rowValues.push_back(hoisted->first);
        copy = hoisted->second;
      } else {
        copy = cast<linalg::GenericOp>(b.clone(*g.getOperation()));
        created.push_back(copy);
      }
      rewriter.setInsertionPoint(copy);
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, copy, interchange);
      if (failed(interchanged))
        return failure();
      storing.push_back(*interchanged);
    }
  } else if ((ragged && failed(splitFullSpace(storingTail, isStored, isStored,
                                              tailSlice))) ||
             failed(splitFullSpace(storing, isStored, isStored, storeSlices))) {
    return failure();
  }
  boundary[waves] = created[start];
  return success();
}

AffineMap RowSplit::renamedMap(linalg::GenericOp red, OpOperand *o,
                               bool overRows) {
  return red.getMatchingIndexingMap(o).replaceDimsAndSymbols(
      renamed, {}, overRows ? rows : rows + 1, 0);
}

void RowSplit::finishOverSlices(OpBuilder &fb,
                                SmallVectorImpl<linalg::GenericOp> &into,
                                linalg::GenericOp red, ArrayRef<Value> partials,
                                ArrayRef<Value> tailPartials,
                                ArrayRef<OpOperand *> rowIns, TermOf termOf) {
  Combiner comb = *findCombiner(red);
  Value init = red.getDpsInits()[0];
  auto tag = [&](linalg::GenericOp g) {
    for (NamedAttribute a : red->getDiscardableAttrs())
      g->setAttr(a.getName(), a.getValue());
    into.push_back(g);
  };
  SmallVector<utils::IteratorType> overSlices(rows,
                                              utils::IteratorType::parallel);
  overSlices.push_back(utils::IteratorType::reduction);
  SmallVector<Value> ins(partials);
  SmallVector<AffineMap> maps(partials.size(), atSlice);
  for (OpOperand *o : rowIns) {
    ins.push_back(o->get());
    maps.push_back(renamedMap(red, o));
  }
  maps.push_back(renamedMap(red, red.getDpsInitOperand(0)));
  tag(linalg::GenericOp::create(
      fb, loc, TypeRange{}, ins, ValueRange{init}, maps, overSlices,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value term = termOf(nb, nl, args.drop_back(), mainSlices.points);
        linalg::YieldOp::create(nb, nl,
                                comb.combine(nb, red, args.back(), term));
      }));
  if (!ragged)
    return;
  ins.assign(tailPartials.begin(), tailPartials.end());
  maps.assign(tailPartials.size(), atTail);
  for (OpOperand *o : rowIns) {
    ins.push_back(o->get());
    maps.push_back(renamedMap(red, o, true));
  }
  ins.push_back(init);
  maps.push_back(renamedMap(red, red.getDpsInitOperand(0), true));
  maps.push_back(maps.back());
  tag(linalg::GenericOp::create(
      fb, loc, TypeRange{}, ins, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rows, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value term = termOf(nb, nl, args.drop_back(2), tailSlice.points);
        linalg::YieldOp::create(
            nb, nl, comb.combine(nb, red, args[args.size() - 2], term));
      }));
}

void RowSplit::finishCentered(OpBuilder &fb,
                              SmallVectorImpl<linalg::GenericOp> &into,
                              linalg::GenericOp v, SplitCentered c) {
  Type type = cast<MemRefType>(v.getDpsInits()[0].getType()).getElementType();
  auto parts = [&](PartialsOf &p, linalg::GenericOp v) {
    return p.contains(v) ? SmallVector<Value>{p[v][1], p[v][2], p[v][0]}
                         : SmallVector<Value>();
  };
  finishOverSlices(
      fb, into, v, parts(partialsOf, v), parts(tailPartialsOf, v),
      {v.getDpsInputOperand(c.center.r.getArgNumber())},
      [&](OpBuilder &nb, Location nl, ValueRange args,
          int64_t points) -> Value {
        Value q = c.center.of(nb, nl, args[3]);
        Value n = floatConstant(nb, nl, type, double(points));
        Value dq = arith::SubFOp::create(
            nb, nl, arith::DivFOp::create(nb, nl, args[2], n), q);
        Value twice = arith::AddFOp::create(nb, nl, args[1], args[1]);
        return arith::AddFOp::create(
            nb, nl, args[0],
            arith::MulFOp::create(
                nb, nl, dq,
                arith::AddFOp::create(nb, nl, twice,
                                      arith::MulFOp::create(nb, nl, n, dq))));
      });
}

void RowSplit::finishOnline(OpBuilder &fb,
                            SmallVectorImpl<linalg::GenericOp> &into,
                            linalg::GenericOp s, SplitOnline o) {
  auto parts = [&](PartialsOf &p) {
    return p.contains(s) ? SmallVector<Value>{p[s][0], p[o.max][0]}
                         : SmallVector<Value>();
  };
  finishOverSlices(
      fb, into, s, parts(partialsOf), parts(tailPartialsOf),
      {s.getDpsInputOperand(o.ref.r.getArgNumber())},
      [&](OpBuilder &nb, Location nl, ValueRange args, int64_t) -> Value {
        // (r from the row's value)
        return onlineSum(nb, nl, args[0], args[1], o.ref.of(nb, nl, args[2]));
      });
}

void RowSplit::planKernels() {
  // Each wave's kernels (its tail's, its partials', its finish's), decided
  // before any kernel is emitted (which erases its generics):
  // - a thread per row: along rows the partials and storing kernels (that
  //   is what the split is for), and the finishes where a thread has all its
  //   row's slices in flight at once (32: a block per row would read each
  //   slice's partials with a stride, a sector per value), else as they would;
  // - a wave finished in its partials kernel's last block of each row, or
  //   along rows of each tile of rows where the finish runs a thread per
  //   row: a tile's last block then loads every slice's partials of its
  //   rows, not of all rows (a batch norm's 256 channels over 512 slices
  //   keep a finishing kernel of tiles); the next wave's partials kernel,
  //   which reads the finish's row values, starts after the kernel.
  for (SplitKernel &kernel : kernels) {
    kernel.perThread = alongRows &&
                       !(storeTransposed && kernel.role == Role::Store) &&
                       (kernel.role != Role::Finish || slices <= 32 ||
                        (contiguousAlongRows(kernel.gens) &&
                         rowsFillThreads(kernel.gens, options.smCount)));
    kernel.lastBlock = options.lastBlockFinish && kernel.role == Role::Finish &&
                       (!alongRows || kernel.perThread);
    RowKernelOptions &sliced = kernel.options;
    sliced = options;
    sliced.chunksPerThread = 8;
    // (a store over pieces of slices: 2 vectors a thread, 256 threads)
    if (kernel.role == Role::Store && storePieces)
      sliced.chunksPerThread = kStoreChunks;
    // (the merges of tails and finishes into partials kernels take a
    // block as a slice)
    sliced.packRows = 1;
    sliced.maxCluster = 0;
    sliced.asyncExchange = false;
    if (storeTransposed && kernel.role == Role::Store) {
      // (over the positions, then the rows, block per run of positions)
      sliced.packRows = options.packRows;
      kernel.rowSpace.assign(loops.begin() + rows, loops.end());
      kernel.colSpace.assign(loops.begin(), loops.begin() + rows);
    } else if (kernel.role == Role::Store || kernel.role == Role::StoreTail) {
      // (the stored results over the split loops: the rows and the slice,
      // then the columns; along rows a thread per slice and row, else a
      // block per row and slice)
      const Slicing &sl = kernel.role == Role::Store ? storeSlices : tailSlice;
      for (unsigned d = 0; d <= loops.size(); ++d) {
        if (d == at)
          kernel.rowSpace.push_back(sl.count);
        if (d == loops.size())
          break;
        (iters[d] == utils::IteratorType::parallel ? kernel.rowSpace
                                                   : kernel.colSpace)
            .push_back(d == splitLoop ? sl.len : loops[d]);
      }
    }
  }
}

/// Few, very long rows (a full reduction such as an L2 norm or a variance, or
/// a handful of rows) leave most SMs idle with one block per row. Such a
/// group is split into waves of reductions: a reduction joins the first wave
/// after every row value it reads is computed. Each wave is two kernels: a
/// partials kernel that views every row as `slices` rows of `len` columns
/// (memref.expand_shape, no copy) and reduces each slice of each of the
/// wave's reductions to a partial, with copies of the full-space ops they
/// read; and a finishing kernel that combines the partials of each row and
/// runs the row-space ops whose inputs are then ready (the next wave's
/// partials kernel may read them). Applies when every reduction runs over
/// the same loops with one trailing reduction loop and full-space values
/// stay inside the group. Several waves read the rows several times, so they
/// are taken only while one kernel would leave most SMs idle: fewer blocks
/// (one per row, or a cluster of `maxCluster` per row) than `smCount`.
///
/// `alongRows` (inputs contiguous along the rows, see contiguousAlongRows):
/// the kernels run a thread per row, and too few rows to fill the GPU with
/// threads are split the same way, on the first reduction loop, with the
/// slice as the outermost loop: consecutive threads then still read
/// consecutive rows (x[4096, 256].sum(0): 256 slices of 16 rows, 65536
/// threads, then a kernel folding the 256 partials of each column).
/// Full-space results that leave the group (NHWC batch normalization's
/// output beside its statistics, x / |x|, a softmax over a few rows of
/// 2^20) are stored by a last kernel over the same slices once every row
/// value is in memory: along rows a thread per slice and row, only where a
/// tile of rows could not hold a row in registers (more than 4096 points),
/// which would read the input once; with trailing reductions a block per
/// row and slice, only where one kernel would keep an eighth of the SMs
/// busy at most. Returns std::nullopt when it does not apply.
std::optional<LogicalResult>
kfuse::row::splitLongRows(ArrayRef<linalg::GenericOp> generics, StringRef name,
                          const RowKernelOptions &options, bool alongRows) {
  RowSplit split(generics, name, options, alongRows);
  if (!split.analyze())
    return std::nullopt;
  return split.build();
}
