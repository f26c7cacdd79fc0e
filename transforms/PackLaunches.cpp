//===- PackLaunches.cpp - small independent kernels as one launch ---------===//
//
// fusion-pack-launches: launches too small to fill the GPU (an optimizer's
// norm of each parameter, a block each) that touch no buffer another of them
// writes run as one launch, each kernel over a range of blocks of its own.
// One launch instead of many: the GPU runs the blocks side by side instead
// of one tiny grid after another, and the host queues one launch. Kernels
// whose code differs only in the buffers they are passed (parameters of one
// size) run one copy of it, each block picking its kernel's buffers: LLVM
// compiles each code once.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <numeric>

#define DEBUG_TYPE "fusion-pack-launches"

namespace kfuse {
#define GEN_PASS_DEF_PACKLAUNCHES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// Static shared memory a launch may declare without opting in.
constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// Buffers a packed launch passes at most (8 bytes a pointer, well within
/// the 4 KB of kernel parameters a plain launch has).
constexpr int64_t kMaxBuffers = 256;
/// Kernels a pack holds at most (those that share another's code too).
constexpr int64_t kMaxMembers = 128;

/// Bytes an element of `type` takes (a vector's elements all; index 8, as
/// any other type).
static int64_t elementBytes(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() * elementBytes(vector.getElementType());
  return type.isIntOrFloat() ? (type.getIntOrFloatBitWidth() + 7) / 8 : 8;
}


/// The buffers an operation (a launch: what its code does to buffers defined
/// outside it) reads and writes, by the buffers they are views of.
struct Accesses {
  llvm::SmallPtrSet<Value, 8> reads, writes;

  /// Whether one writes what the other reads or writes (symmetric).
  bool conflictsWith(const Accesses &other) const {
    for (Value w : writes)
      if (other.reads.contains(w) || other.writes.contains(w))
        return true;
    for (Value r : reads)
      if (other.writes.contains(r))
        return true;
    return false;
  }
  void add(const Accesses &other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
  }
};

/// What `op`'s use of `operand` (a memref) does to it: read, write, both, or
/// nothing (views and sizes, followed through their users instead). An op
/// that says nothing of its effects on it (a pointer taken from it) counts
/// as writing it.
static void classifyUse(Operation *op, Value operand, Value root,
                        Accesses &acc) {
  if (isa<ViewLikeOpInterface, memref::DimOp>(op))
    return;
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface) {
    acc.writes.insert(root);
    return;
  }
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffectsOnValue(operand, effects);
  if (effects.empty()) {
    acc.writes.insert(root);
    return;
  }
  for (auto &e : effects) {
    if (isa<MemoryEffects::Read>(e.getEffect()))
      acc.reads.insert(root);
    else
      acc.writes.insert(root);
  }
}

/// The buffers defined outside `launch` that its code reads and writes.
static Accesses launchAccesses(gpu::LaunchOp launch) {
  Accesses acc;
  Region &body = launch.getBody();
  launch.getBody().walk([&](Operation *op) {
    for (Value v : op->getOperands()) {
      if (!isa<BaseMemRefType>(v.getType()))
        continue;
      Value root = kfuse::viewRoot(v);
      if (body.isAncestor(root.getParentRegion()))
        continue; // (a buffer of the kernel's own: a workgroup buffer)
      classifyUse(op, v, root, acc);
    }
  });
  return acc;
}

/// The buffers a host operation between two launches of a pack reads and
/// writes, or nullopt where it cannot tell (the pack then ends before it).
static std::optional<Accesses> hostAccesses(Operation *op) {
  Accesses acc;
  if (isMemoryEffectFree(op) || isa<memref::AllocOp, memref::AllocaOp>(op))
    return acc; // (a new buffer touches nothing that exists)
  if (auto launch = dyn_cast<gpu::LaunchOp>(op))
    return launchAccesses(launch);
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface || op->getNumRegions())
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  for (auto &e : effects) {
    Value v = e.getValue();
    if (!v)
      return std::nullopt; // (an effect on memory it does not name)
    if (isa<MemoryEffects::Read>(e.getEffect()))
      acc.reads.insert(kfuse::viewRoot(v));
    else
      acc.writes.insert(kfuse::viewRoot(v));
  }
  return acc;
}

static std::optional<int64_t> constantOf(Value v) {
  return getConstantIntValue(v);
}

/// A launch that may join a pack: its grid and block one-dimensional and
/// constant, threads of at most `maxThreads` in all (half of what the
/// GPU's SMs hold: it leaves most of them idle), buffers of at most
/// `maxBytes` in
/// all, no clusters, dynamic shared memory,
/// async tokens or private buffers, one block of code, a kernel name with
/// no hints for it on the host function, and code that reads the block's
/// place only through the launch's own ids and sizes (no NVVM operations,
/// no gpu operations but barriers and shuffles, no inline assembly naming
/// special registers, barriers, mbarriers or clusters), with no fusion
/// guards.
struct Member {
  gpu::LaunchOp launch;
  int64_t blocks = 0, threads = 0;
  Accesses accesses;
  /// The first member of the pack whose code this one's is, up to the
  /// buffers it is passed (-1: none; this one's code is compiled), and
  /// those buffers: the first one's buffer -> this one's.
  int sameAs = -1;
  llvm::DenseMap<Value, Value> buffersFor;
  /// Workgroup buffers by type, in order of appearance.
  llvm::MapVector<Type, int64_t> shared;
  llvm::SetVector<Value> buffers; // (memrefs from outside it uses)
};

static std::optional<Member> candidate(gpu::LaunchOp launch, int64_t maxThreads,
                                       int64_t maxBytes, func::FuncOp host) {
  auto no = [&](const char *why) -> std::optional<Member> {
    LLVM_DEBUG(llvm::dbgs() << "not packed: " << launch.getFunction() << ": "
                            << why << "\n");
    return std::nullopt;
  };
  Member m;
  m.launch = launch;
  std::optional<int64_t> gx = constantOf(launch.getGridSizeX()),
                         bx = constantOf(launch.getBlockSizeX());
  if (!gx || !bx || *gx < 1 || *bx < 1 || *gx * *bx > maxThreads)
    return no("grid or block not constant, or too many threads");
  for (Value v : {launch.getGridSizeY(), launch.getGridSizeZ(),
                  launch.getBlockSizeY(), launch.getBlockSizeZ()})
    if (constantOf(v) != std::optional<int64_t>(1))
      return no("not one-dimensional");
  if (launch.hasClusterSize())
    return no("clusters");
  if (launch.getDynamicSharedMemorySize())
    return no("dynamic shared memory");
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return no("async");
  if (launch.getNumPrivateAttributions() != 0)
    return no("private buffers");
  if (!launch.getBody().hasOneBlock())
    return no("blocks of code");
  if (!launch.getFunction())
    return no("no kernel name");
  for (NamedAttribute a : launch->getDiscardableAttrs())
    if (a.getName() != gpu::LaunchOp::getNumWorkgroupAttributionsAttrName())
      return no("attributes");
  StringRef name = *launch.getFunction();
  for (StringRef hint : {"kfuse.min_blocks_per_sm", "kfuse.persistent"})
    if (auto dict = host->getAttrOfType<DictionaryAttr>(hint);
        dict && dict.get(name))
      return no("hints");
  bool plain = true;
  launch.getBody().walk([&](Operation *op) {
    StringRef ns = op->getName().getDialectNamespace();
    // (gpu ops other than these read the block's place or size themselves,
    // or synchronize in ways a narrower kernel's exited warps would change:
    // gpu.thread_id, gpu.block_dim, gpu.all_reduce)
    if (ns == "gpu" && !isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::TerminatorOp,
                            gpu::YieldOp>(op)) {
      plain = false;
      return WalkResult::interrupt();
    }
    if (ns == "nvvm" || ns == "fusion") {
      plain = false;
      return WalkResult::interrupt();
    }
    if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
      StringRef text = asmOp.getAsmString();
      for (StringRef word : {"ctaid", "ntid", "tid.", "cluster", "mbarrier",
                             "griddepcontrol", "bar."})
        if (text.contains(word)) {
          plain = false;
          return WalkResult::interrupt();
        }
    }
    for (Value v : op->getOperands())
      if (isa<BaseMemRefType>(v.getType()) &&
          !launch.getBody().isAncestor(v.getParentRegion()))
        m.buffers.insert(v);
    return WalkResult::advance();
  });
  if (!plain)
    return no("NVVM, fusion or special-register code");
  // (a kernel of few blocks may still move much, a grid-stride loop's each:
  // at most what the buffers it is passed hold)
  int64_t bytes = 0;
  for (Value v : m.buffers) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape())
      return no("a buffer of dynamic shape");
    bytes += type.getNumElements() * elementBytes(type.getElementType());
  }
  if (bytes > maxBytes)
    return no("too many bytes");
  m.blocks = *gx;
  m.threads = *bx;
  m.accesses = launchAccesses(launch);
  for (BlockArgument b : launch.getWorkgroupAttributions())
    ++m.shared[b.getType()];
  return m;
}

static int64_t bytesOf(Type type) {
  auto memref = cast<MemRefType>(type);
  if (!memref.hasStaticShape())
    return kStaticSharedBytes + 1;
  return memref.getNumElements() * elementBytes(memref.getElementType());
}

/// Whether launch `b`'s code is launch `a`'s but for the buffers defined
/// outside them (of the same types; scalars from outside the same value or
/// equal constants), with as many blocks of as many threads: then `a`'s
/// code serves both, given `b`'s buffers (`buffers`: a's -> b's).
static bool sameCode(Member &a, Member &b,
                     llvm::DenseMap<Value, Value> &buffers) {
  if (a.blocks != b.blocks || a.threads != b.threads)
    return false;
  Region &ra = a.launch.getBody(), &rb = b.launch.getBody();
  llvm::DenseMap<Value, Value> inside;
  auto mark = [&](Value l, Value r) { inside[l] = r; };
  auto check = [&](Value l, Value r) -> LogicalResult {
    if (auto it = inside.find(l); it != inside.end())
      return success(it->second == r);
    if (ra.isAncestor(l.getParentRegion()) ||
        rb.isAncestor(r.getParentRegion()) || l.getType() != r.getType())
      return failure();
    if (isa<BaseMemRefType>(l.getType())) {
      auto [it, fresh] = buffers.try_emplace(l, r);
      return success(fresh || it->second == r);
    }
    Attribute x, y;
    return success(l == r || (matchPattern(l, m_Constant(&x)) &&
                              matchPattern(r, m_Constant(&y)) && x == y));
  };
  buffers.clear();
  return OperationEquivalence::isRegionEquivalentTo(
      &ra, &rb, check, mark, OperationEquivalence::IgnoreLocations);
}

/// Launches gathered into one, in program order, with what they share.
struct Pack {
  std::vector<Member> members;
  Accesses accesses;
  int64_t threads = 0;
  llvm::MapVector<Type, int64_t> shared; // (the most any member needs)
  llvm::SetVector<Value> buffers;
  int64_t codes = 0; // (members whose code is compiled: sameAs < 0)

  /// Whether `m` may run beside the members: no buffer written by one and
  /// touched by another, blocks of the same size or narrower ones of whole
  /// warps (their extra threads exit), and the codes compiled, the kernels,
  /// the shared memory and the buffers passed within bounds. Notes in `m`
  /// the member whose code it can run (sameAs).
  bool admits(Member &m, int64_t maxCodes) {
    m.sameAs = -1;
    if (members.empty())
      return true;
    if (static_cast<int64_t>(members.size()) >= kMaxMembers ||
        m.accesses.conflictsWith(accesses))
      return false;
    for (auto [i, o] : llvm::enumerate(members))
      if (o.sameAs < 0 && sameCode(o, m, m.buffersFor)) {
        m.sameAs = static_cast<int>(i);
        break;
      }
    if (m.sameAs < 0 && codes >= maxCodes)
      return false;
    int64_t widest = std::max(threads, m.threads);
    if (m.threads != widest && m.threads % 32)
      return false;
    for (const Member &o : members)
      if (o.threads != widest && o.threads % 32)
        return false;
    llvm::MapVector<Type, int64_t> need = shared;
    for (auto [type, count] : m.shared)
      need[type] = std::max(need.lookup(type), count);
    int64_t bytes = 0;
    for (auto [type, count] : need)
      bytes += count * bytesOf(type);
    if (bytes > kStaticSharedBytes)
      return false;
    llvm::SetVector<Value> all = buffers;
    all.insert(m.buffers.begin(), m.buffers.end());
    return static_cast<int64_t>(all.size()) <= kMaxBuffers;
  }

  void add(Member m) {
    if (m.sameAs < 0)
      ++codes;
    accesses.add(m.accesses);
    threads = std::max(threads, m.threads);
    for (auto [type, count] : m.shared)
      shared[type] = std::max(shared.lookup(type), count);
    buffers.insert(m.buffers.begin(), m.buffers.end());
    members.push_back(std::move(m));
  }
};

/// Builds the packed launch where the first member is: block b runs the
/// member whose range holds it, with block id b - its first block, its own
/// grid and block sizes, and the workgroup buffers of the launch (shared
/// between members by type: a block runs one member). Members that run
/// another's code follow it, a range of blocks each, that code choosing
/// their buffers by block. Threads past a
/// narrower member's block size exit first (a barrier then waits only for
/// the threads that remain). Records the members on the host function
/// (`kfuse.packed`: the launch's kernel name to [name, blocks, threads] of
/// each member) and erases them.
class PackBuilder {
public:
  PackBuilder(Pack &pack, func::FuncOp host)
      : pack(pack), host(host), ctx(host.getContext()),
        loc(pack.members.front().launch.getLoc()),
        cIdx(kfuse::indexConstants(loc)), kb(ctx) {}

  void build() {
    createLaunch();
    int64_t start = 0;
    for (auto [r, m] : llvm::enumerate(pack.members)) {
      if (m.sameAs >= 0)
        continue; // (run by the code of the member it is the same as)
      // m's code and the members whose code is the same (blocks of theirs
      // follow m's), each running it on its own buffers
      SmallVector<Member *> runs = {&m};
      for (Member &o : pack.members)
        if (o.sameAs == static_cast<int>(r))
          runs.push_back(&o);
      int64_t end = start + m.blocks * static_cast<int64_t>(runs.size());
      emitCode(m, runs, start, end);
      start = end;
    }
    gpu::TerminatorOp::create(kb, loc);
    NamedAttrList packed;
    if (auto old = host->getAttrOfType<DictionaryAttr>("kfuse.packed"))
      packed.append(old.getValue());
    gpu::LaunchOp first = pack.members.front().launch;
    packed.set(first.getFunctionAttr().getAttr(), ArrayAttr::get(ctx, record));
    host->setAttr("kfuse.packed", packed.getDictionary(ctx));
    for (Member &m : pack.members)
      m.launch.erase();
  }

private:
  Pack &pack;
  func::FuncOp host;
  MLIRContext *ctx;
  Location loc;
  std::function<Value(OpBuilder &, int64_t)> cIdx;
  OpBuilder kb; // (at the end of the launch's body)
  gpu::LaunchOp launch;
  llvm::MapVector<Type, SmallVector<BlockArgument>> pool;
  llvm::DenseMap<int64_t, Value> constants;
  Value bid, tid;
  SmallVector<Attribute> record;

  /// The kernel's index constants, each once, first in its code.
  Value index(int64_t v) {
    Value &c = constants[v];
    if (!c) {
      OpBuilder head(constants[0].getDefiningOp());
      c = cIdx(head, v);
    }
    return c;
  }

  /// The launch, its workgroup buffers (the most each member needs, by
  /// type), and the builder at its body's end.
  void createLaunch() {
    gpu::LaunchOp first = pack.members.front().launch;
    OpBuilder b(first);
    int64_t total = 0;
    for (const Member &m : pack.members)
      total += m.blocks;
    Value one = cIdx(b, 1);
    launch = gpu::LaunchOp::create(
        b, loc, cIdx(b, total), one, one, cIdx(b, pack.threads), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, /*workgroupAttributions=*/{},
        /*privateAttributions=*/{}, nullptr, nullptr, nullptr,
        first.getModuleAttr(), first.getFunctionAttr());
    for (auto [type, count] : pack.shared)
      for (int64_t i = 0; i < count; ++i)
        pool[type].push_back(launch.addWorkgroupAttribution(type, loc));
    kb.setInsertionPointToEnd(&launch.getBody().front());
    constants[0] = cIdx(kb, 0);
    bid = launch.getBlockIds().x;
    tid = launch.getThreadIds().x;
  }

  /// The branch of the blocks in [start, end); threads past `threads`
  /// exit first where the launch's blocks are wider.
  scf::IfOp blockRange(int64_t start, int64_t end, int64_t threads) {
    Value in = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, bid,
                                     index(end));
    if (start > 0)
      in = arith::AndIOp::create(
          kb, loc,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::uge, bid,
                                index(start)),
          in);
    auto branch = scf::IfOp::create(kb, loc, in, /*withElseRegion=*/false);
    if (threads < pack.threads) {
      OpBuilder mb = OpBuilder::atBlockBegin(branch.thenBlock());
      auto past = scf::IfOp::create(
          mb, loc,
          arith::CmpIOp::create(mb, loc, arith::CmpIPredicate::uge, tid,
                                index(threads)),
          /*withElseRegion=*/false);
      OpBuilder eb = OpBuilder::atBlockBegin(past.thenBlock());
      NVVM::Exit::create(eb, loc);
    }
    return branch;
  }

  /// Each buffer of m's code that differs between the runs: the one of the
  /// run `which` block serves, from one switch on the run (each case yields
  /// its run's buffers; the last run's in the default). The block's run is
  /// uniform: a few branches a thread, where a chain of selects per buffer
  /// took runs - 1 dependent selects each (63 a buffer for LAMB's 64
  /// vectors).
  SmallVector<std::pair<Value, Value>> chooseBuffers(OpBuilder &mb,
                                                     const Member &m,
                                                     ArrayRef<Member *> runs,
                                                     Value which) {
    SmallVector<std::pair<Value, Value>> chosen;
    SmallVector<Value> differing;
    SmallVector<SmallVector<Value>> ofRun(runs.size());
    for (Value buffer : m.buffers) {
      // (a buffer every run's code reads as the same value has no entry:
      // sameCode maps only the values that differ)
      SmallVector<Value> of = {buffer};
      for (Member *o : runs.drop_front()) {
        Value mapped = o->buffersFor.lookup(buffer);
        of.push_back(mapped ? mapped : buffer);
      }
      if (llvm::all_of(of, [&](Value v) { return v == buffer; }))
        continue;
      differing.push_back(buffer);
      for (auto [k, v] : llvm::enumerate(of))
        ofRun[k].push_back(v);
    }
    if (differing.empty())
      return chosen;
    SmallVector<int64_t> cases(runs.size() - 1);
    std::iota(cases.begin(), cases.end(), 0);
    auto pick = scf::IndexSwitchOp::create(
        mb, loc, ValueRange(differing).getTypes(), which, cases, cases.size());
    auto yieldIn = [&](Region &region, ValueRange values) {
      OpBuilder rb = OpBuilder::atBlockBegin(&region.emplaceBlock());
      scf::YieldOp::create(rb, loc, values);
    };
    for (auto [k, region] : llvm::enumerate(pick.getCaseRegions()))
      yieldIn(region, ofRun[k]);
    yieldIn(pick.getDefaultRegion(), ofRun.back());
    for (auto [buffer, v] : llvm::zip(differing, pick.getResults()))
      chosen.push_back({buffer, v});
    return chosen;
  }

  /// m's code in the blocks [start, end): its body moved into their branch,
  /// reading its block id, sizes and workgroup buffers from the launch's,
  /// and the buffers of the run each block serves.
  void emitCode(Member &m, ArrayRef<Member *> runs, int64_t start,
                int64_t end) {
    scf::IfOp branch = blockRange(start, end, m.threads);
    OpBuilder mb(branch.thenBlock()->getTerminator());
    Value own =
        start ? arith::SubIOp::create(mb, loc, bid, index(start)).getResult()
              : bid;
    // (which of the runs this block serves, and its block within it)
    SmallVector<std::pair<Value, Value>> chosen;
    if (runs.size() > 1) {
      Value which = m.blocks == 1
                        ? own
                        : arith::DivUIOp::create(mb, loc, own, index(m.blocks))
                              .getResult();
      own = m.blocks == 1
                ? index(0)
                : arith::RemUIOp::create(mb, loc, own, index(m.blocks))
                      .getResult();
      chosen = chooseBuffers(mb, m, runs, which);
    }
    gpu::LaunchOp from = m.launch;
    gpu::KernelDim3 ids = from.getBlockIds(), tids = from.getThreadIds(),
                    grid = from.getGridSize(), size = from.getBlockSize();
    Value zero = index(0);
    ids.x.replaceAllUsesWith(own);
    tids.x.replaceAllUsesWith(tid);
    for (Value v : {ids.y, ids.z, tids.y, tids.z})
      v.replaceAllUsesWith(zero);
    grid.x.replaceAllUsesWith(index(m.blocks));
    size.x.replaceAllUsesWith(index(m.threads));
    for (Value v : {grid.y, grid.z, size.y, size.z})
      v.replaceAllUsesWith(index(1));
    llvm::DenseMap<Type, unsigned> taken;
    for (BlockArgument buffer : from.getWorkgroupAttributions())
      buffer.replaceAllUsesWith(
          pool[buffer.getType()][taken[buffer.getType()]++]);
    Operation *yield = branch.thenBlock()->getTerminator();
    llvm::SmallPtrSet<Operation *, 32> moved;
    for (Operation &op : llvm::make_early_inc_range(from.getBody().front()))
      if (!op.hasTrait<OpTrait::IsTerminator>()) {
        op.moveBefore(yield);
        moved.insert(&op);
      }
    for (auto [buffer, pick] : chosen)
      buffer.replaceUsesWithIf(pick, [&](OpOperand &use) {
        Operation *top =
            branch.thenBlock()->findAncestorOpInBlock(*use.getOwner());
        return top && moved.contains(top);
      });
    for (Member *o : runs)
      record.push_back(ArrayAttr::get(
          ctx, {StringAttr::get(ctx, *o->launch.getFunction()),
                IntegerAttr::get(IntegerType::get(ctx, 64), o->blocks),
                IntegerAttr::get(IntegerType::get(ctx, 64), o->threads)}));
  }
};

/// Whether `v` is available before `pos` once the host operations that
/// compute it move there: defined before it, or by pure operations and
/// allocations (nothing in memory changes) whose operands are.
static bool canHoistAbove(Value v, Operation *pos) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != pos->getBlock() || def->isBeforeInBlock(pos))
    return true;
  if (def == pos || def->getNumRegions() ||
      !(isMemoryEffectFree(def) || isa<memref::AllocOp, memref::AllocaOp>(def)))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return canHoistAbove(o, pos); });
}

static void hoistAbove(Value v, Operation *pos) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != pos->getBlock() || def->isBeforeInBlock(pos))
    return;
  for (Value o : def->getOperands())
    hoistAbove(o, pos);
  def->moveBefore(pos);
}

/// The values a launch uses from outside it: its sizes and what its code
/// reads from above.
static SmallVector<Value> usedFromOutside(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used(launch->getOperands().begin(),
                              launch->getOperands().end());
  Region &body = launch.getBody();
  body.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!body.isAncestor(v.getParentRegion()))
        used.insert(v);
  });
  return used.takeVector();
}

/// Packs the candidate launches of `block`, each into the earliest pack
/// it may join: one it does not depend on (or write what it reads), where
/// nothing between the pack's place (its first member's) and the launch
/// touches what the launch writes or writes what it reads, and whose
/// values the launch uses can move up there. A pack's kernels run where
/// its first one was: later members move up past what lies between
/// (members of later packs included), allocations and pure operations they
/// need with them. An optimizer's step whose parameters each take a
/// partials kernel and a store kernel packs into two launches, not
/// alternating pairs. Returns whether it made a pack (nothing else changes
/// the block).
static bool packBlock(Block &block, int64_t sms, int64_t maxBytes,
                      int64_t maxCodes, func::FuncOp host) {
  SmallVector<Operation *> ops = llvm::to_vector(
      llvm::map_range(block, [](Operation &op) { return &op; }));
  std::vector<Pack> packs;
  std::vector<unsigned> placeOf;               // (each pack's first member)
  llvm::DenseMap<Operation *, int> packOf;     // (members -> their pack)
  llvm::DenseMap<Operation *, std::optional<Accesses>> known;
  auto accessesOf = [&](Operation *op) -> const std::optional<Accesses> & {
    auto it = known.find(op);
    if (it == known.end())
      it = known.try_emplace(op, hostAccesses(op)).first;
    return it->second;
  };
  // (whether an op touches no buffer that exists, asked of each op once:
  // the ops between a pack and a launch are looked at again for each
  // later launch, and asking it of a launch walks the kernel's code)
  llvm::DenseMap<Operation *, bool> touchesNothing;
  auto touchesNothingOf = [&](Operation *op) {
    auto [it, added] = touchesNothing.try_emplace(op, false);
    if (added)
      it->second =
          isMemoryEffectFree(op) || isa<memref::AllocOp, memref::AllocaOp>(op);
    return it->second;
  };
  for (auto [at, op] : llvm::enumerate(ops)) {
    auto launch = dyn_cast<gpu::LaunchOp>(op);
    if (!launch)
      continue;
    std::optional<Member> m = candidate(launch, sms * 1024, maxBytes, host);
    if (!m)
      continue;
    SmallVector<Value> used = usedFromOutside(launch);
    // (the packs from the latest place back: what the launch would move up
    // past grows with each, so the first pack it cannot pass stops the
    // search; the earliest pack before it that admits the launch is taken)
    int joined = -1;
    int64_t k = static_cast<int64_t>(at) - 1;
    for (int p = static_cast<int>(packs.size()) - 1; p >= 0; --p) {
      unsigned place = placeOf[p];
      // (what lies between the pack's place and the launch: ops that stay
      // where they are, and later packs, at their places, whose members
      // move there)
      bool clear = true;
      for (; k > static_cast<int64_t>(place) && clear; --k) {
        Operation *y = ops[k];
        if (auto q = packOf.find(y); q != packOf.end()) {
          if (placeOf[q->second] == static_cast<unsigned>(k))
            clear = !m->accesses.conflictsWith(packs[q->second].accesses);
          continue;
        }
        if (touchesNothingOf(y))
          continue;
        const std::optional<Accesses> &acc = accessesOf(y);
        clear = acc && !acc->conflictsWith(m->accesses);
      }
      if (!clear)
        break;
      if (packs[p].admits(*m, maxCodes) &&
          llvm::all_of(used,
                       [&](Value v) { return canHoistAbove(v, ops[place]); }))
        joined = p;
    }
    // (admits notes in the launch the member whose code it runs: for the
    // pack taken)
    if (joined >= 0)
      packs[joined].admits(*m, maxCodes);
    if (joined < 0) {
      m->sameAs = -1;
      joined = static_cast<int>(packs.size());
      packs.emplace_back();
      placeOf.push_back(at);
    } else {
      for (Value v : used)
        hoistAbove(v, ops[placeOf[joined]]);
    }
    LLVM_DEBUG(llvm::dbgs() << launch.getFunction() << " -> pack " << joined
                            << "\n");
    packOf[op] = joined;
    packs[joined].add(std::move(*m));
  }
  bool packed = false;
  for (Pack &pack : packs)
    if (pack.members.size() > 1) {
      PackBuilder(pack, host).build();
      packed = true;
    }
  return packed;
}

struct PackLaunchesPass
    : kfuse::impl::PackLaunchesBase<PackLaunchesPass> {
  using PackLaunchesBase::PackLaunchesBase;

  void runOnOperation() override {
    func::FuncOp host = getOperation();
    if (maxLaunches < 2 || maxBytes < 0) {
      host.emitError() << "fusion-pack-launches: max-launches must be >= 2 "
                          "and max-bytes >= 0, got "
                       << static_cast<int64_t>(maxLaunches) << " and "
                       << static_cast<int64_t>(maxBytes);
      return signalPassFailure();
    }
    FailureOr<int64_t> sms =
        kfuse::resolveSmCount(host, "fusion-pack-launches", chip, smCount);
    if (failed(sms))
      return signalPassFailure();
    bool changed = false;
    for (Block &block : host.getBody())
      changed |= packBlock(block, *sms, maxBytes, maxLaunches, host);
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
