//===- FormFusionGroups.cpp - plan which elementwise ops share a kernel ---===//
//
// Clusters elementwise linalg.generic ops into fusion.group regions. See the
// pass description in Passes.td for the rules and the cost model; this file
// keeps the cost model's arithmetic next to the sentences that report it.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fusion-form-groups"

namespace kfuse {
#define GEN_PASS_DEF_FORMFUSIONGROUPS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

enum class RecomputePolicy { Auto, Never, Always };

struct Cluster {
  llvm::SetVector<Operation *> ops; // in block order once finalized
  std::string name;
  SmallVector<std::string> decisions;
};

/// Who reads one result of a producer: groups other than its own
/// (`readers`), ops in no group (which need it written: `mustWrite`, the
/// first described in `writtenFor`), and its own group (`usedInside`).
struct ResultReaders {
  llvm::SetVector<unsigned> readers;
  bool mustWrite = false, usedInside = false;
  std::string writtenFor;
};

/// Ops in `block` reached from the results of `op` (mapped to their ancestor
/// in `block`).
static SmallVector<Operation *> usersInBlock(Block *block, Operation *op) {
  SmallVector<Operation *> users;
  for (Operation *user : op->getUsers())
    if (Operation *anc = block->findAncestorOpInBlock(*user))
      users.push_back(anc);
  return users;
}

/// True if an op in `targets` is reachable from `sources` along def-use
/// edges through at least one op outside `sources`. A group runs as a unit,
/// so reaching any member of a cluster (`membersOf`) reaches the results of
/// all its members.
static bool reachesThroughOutside(
    Block *block, const llvm::DenseSet<Operation *> &sources,
    const llvm::DenseSet<Operation *> &targets,
    llvm::function_ref<SmallVector<Operation *>(Operation *)> membersOf) {
  SmallVector<Operation *> worklist;
  llvm::DenseSet<Operation *> visited;
  for (Operation *s : sources)
    for (Operation *u : usersInBlock(block, s))
      if (!sources.contains(u))
        worklist.push_back(u);
  while (!worklist.empty()) {
    Operation *x = worklist.pop_back_val();
    if (targets.contains(x))
      return true;
    for (Operation *m : membersOf(x)) {
      if (sources.contains(m) || !visited.insert(m).second)
        continue;
      if (targets.contains(m))
        return true;
      for (Operation *u : usersInBlock(block, m)) {
        if (targets.contains(u))
          return true;
        if (!sources.contains(u) && !visited.contains(u))
          worklist.push_back(u);
      }
    }
  }
  return false;
}

/// The report's sentence for an unfused edge: "operand #N <why>".
static std::string edgeReason(OpOperand &use, llvm::StringRef why) {
  return "operand #" + std::to_string(use.getOperandNumber()) + " " + why.str();
}

/// Static loop ranges of an elementwise generic: its iteration space.
/// The most iteration spaces one multi-tensor launch covers (each is a
/// branch every block tests its index against).
constexpr size_t kMaxLaunchSpaces = 16;

/// While the grouping phases run (the IR unchanged), what is asked of each
/// op, computed once:
/// - its ranges: getStaticLoopRanges composes and inverts the op's maps at
///   every call, and the pairwise searches of horizontal and multi-tensor
///   fusion asked for them millions of times (an optimizer's update of 200
///   parameters took 83 s to plan on a 2-core host);
/// - its kind, as rowCompatible asks (see OpFact): every merge check walks
///   the whole merged group (a stack of 200 normalizations over the same
///   rows, one group of 2000 ops, spent most of its 5.4 s of planning
///   recomputing these).
struct OpCache {
  llvm::DenseMap<Operation *, SmallVector<int64_t>> domains;
  llvm::DenseMap<Operation *, unsigned> facts;
};
static thread_local OpCache *opCache = nullptr;

static SmallVector<int64_t> domainOf(Operation *op) {
  if (!opCache)
    return cast<linalg::GenericOp>(op).getStaticLoopRanges();
  auto [it, inserted] = opCache->domains.try_emplace(op);
  if (inserted)
    it->second = cast<linalg::GenericOp>(op).getStaticLoopRanges();
  return it->second;
}

enum class OpFact : unsigned {
  RowReduction,
  Contraction,
  Elementwise,
  ColumnReduction,
  AlongRows
};
static bool fact(Operation *op, OpFact f) {
  static bool (*const compute[])(Operation *) = {
      isRowReductionGeneric, isContractionGeneric, isElementwiseGeneric,
      isColumnReduction, isReductionAlongRows};
  unsigned i = unsigned(f);
  if (!opCache)
    return compute[i](op);
  // (two bits a fact: asked, and the answer)
  unsigned asked = 1u << (2 * i), yes = 1u << (2 * i + 1);
  unsigned &bits = opCache->facts[op];
  if (!(bits & asked))
    bits |= asked | (compute[i](op) ? yes : 0);
  return bits & yes;
}
static bool rowReduction(Operation *op) {
  return fact(op, OpFact::RowReduction);
}
static bool contraction(Operation *op) { return fact(op, OpFact::Contraction); }
static bool elementwise(Operation *op) { return fact(op, OpFact::Elementwise); }
static bool columnReduction(Operation *op) {
  return fact(op, OpFact::ColumnReduction);
}
static bool alongRowsReduction(Operation *op) {
  return fact(op, OpFact::AlongRows);
}

/// The fusible ops partitioned into clusters (union-find), with what the
/// merge checks ask of a cluster kept up to date as clusters unite, so that
/// a check need not walk the clusters it merges: a chain of thousands of
/// ops re-walked its whole group at every edge (6000 generics: 2.6 s of
/// planning on a 2-core host).
static llvm::SetVector<Value> valuesFromOutside(Operation *op);
static bool isClonedIntoGroups(Operation *op);

/// Whether a user of `result` lies outside the ops `inside` accepts (users
/// mapped to their ancestor in `block`; one in no op of it is outside): the
/// result is then written by its group.
static bool readOutside(Block *block, Value result,
                        llvm::function_ref<bool(Operation *)> inside) {
  return llvm::any_of(result.getUsers(), [&](Operation *user) {
    Operation *u = block->findAncestorOpInBlock(*user);
    return !u || !inside(u);
  });
}

class ClusterSet {
public:
  /// `maxBuffers`: the most buffers one group's kernel is passed (the
  /// pass's max-buffers: by default 512, 8 bytes each, the 4 KB of kernel
  /// parameters every launch may take; sm_70 and later take 32764 bytes
  /// with CUDA 12.1, but the parameters are copied with each launch).
  ClusterSet(Block *block, ArrayRef<Operation *> ops, unsigned maxBuffers)
      : block(block), maxBuffers(maxBuffers) {
    for (Operation *op : ops) {
      classes.insert(op);
      Summary &s = summaries[op];
      s.rowReductions = isRowReductionGeneric(op);
      s.contractions = isContractionGeneric(op);
      auto g = cast<linalg::GenericOp>(op);
      s.notElementwise = g.getNumLoops() != g.getNumParallelLoops();
      s.spaces.push_back(domainOf(op));
      if (!usersInBlock(block, op).empty())
        s.exposed.push_back(op);
      for (Value v : valuesFromOutside(op))
        if (!isClonedIntoGroups(v.getDefiningOp()))
          s.reads.insert(v);
      s.writes = llvm::count_if(op->getResults(),
                                [](Value r) { return !r.use_empty(); });
    }
  }

  bool contains(Operation *op) const { return classes.contains(op); }
  bool together(Operation *a, Operation *b) const {
    return classes.isEquivalent(a, b);
  }
  /// Whether `op` is a member of `of`'s cluster.
  bool inClusterOf(Operation *op, Operation *of) const {
    Operation *l = leader(of);
    return inOneOf(op, l, l);
  }
  /// How many ops `op`'s cluster has.
  unsigned size(Operation *op) const { return summary(op).size; }
  Operation *leader(Operation *op) const { return classes.getLeaderValue(op); }
  /// The ops of `op`'s cluster ({op} for an op outside every cluster).
  SmallVector<Operation *> members(Operation *op) const {
    if (!classes.contains(op))
      return {op};
    return llvm::to_vector(classes.members(op));
  }
  /// Members of `op`'s cluster with a user outside it: a path out of the
  /// cluster starts at one of them, and only their results are visible
  /// outside it.
  ArrayRef<Operation *> exposed(Operation *op) const {
    return summary(op).exposed;
  }
  /// Whether a group merging the clusters of `a` and `b` has a row
  /// reduction or a contraction: without either, rowCompatible has nothing
  /// to say about it.
  bool reducesOrContracts(Operation *a, Operation *b) const {
    return summary(a).rowReductions + summary(b).rowReductions > 0 ||
           contracts(a, b);
  }
  /// Whether the cluster of `a` or `b` has a contraction.
  bool contracts(Operation *a, Operation *b) const {
    return summary(a).contractions + summary(b).contractions > 0;
  }
  /// Whether the clusters of `a` and `b` are all elementwise generics.
  bool allElementwise(Operation *a, Operation *b) const {
    return summary(a).notElementwise + summary(b).notElementwise == 0;
  }
  /// The iteration spaces of the ops of the clusters of `a` and `b` (past
  /// kMaxLaunchSpaces, one more at most).
  SmallVector<SmallVector<int64_t>> spaces(Operation *a, Operation *b) const {
    SmallVector<SmallVector<int64_t>> all(summary(a).spaces.begin(),
                                          summary(a).spaces.end());
    addSpaces(all, summary(b).spaces);
    return all;
  }
  /// Whether an exposed member of `side`'s cluster has a user outside the
  /// clusters of `side` and `other` together.
  bool usedOutside(Operation *side, Operation *other) const {
    Operation *ls = leader(side), *lo = leader(other);
    return llvm::any_of(exposed(side), [&](Operation *m) {
      return llvm::any_of(usersInBlock(block, m),
                          [&](Operation *u) { return !inOneOf(u, ls, lo); });
    });
  }
  /// The ops of the clusters of `a` and `b`.
  llvm::DenseSet<Operation *> merged(Operation *a, Operation *b) const {
    llvm::DenseSet<Operation *> ops;
    for (Operation *m : llvm::concat<Operation *>(members(a), members(b)))
      ops.insert(m);
    return ops;
  }
  /// Whether merging the clusters of `a` and `b` would make a cycle: a path
  /// from the merged group through an op outside it back into it. A group
  /// runs as a unit, so reaching any member of a cluster reaches the
  /// results of all its members. `horizon` (may be null): every op after it
  /// is a cluster of its own and no member is after it, so a path that
  /// passes it cannot come back (def-use edges run forward in the block).
  bool mergeMakesCycle(Operation *a, Operation *b,
                       Operation *horizon = nullptr) const {
    Operation *la = leader(a), *lb = leader(b);
    SmallVector<Operation *> worklist;
    for (Operation *l : {la, lb})
      for (Operation *m : exposed(l))
        for (Operation *u : usersInBlock(block, m))
          if (!inOneOf(u, la, lb))
            worklist.push_back(u);
    llvm::DenseSet<Operation *> visited; // (leaders, and ops outside clusters)
    while (!worklist.empty()) {
      Operation *x = worklist.pop_back_val();
      if (horizon && horizon->isBeforeInBlock(x))
        continue;
      bool clustered = classes.contains(x);
      Operation *key = clustered ? leader(x) : x;
      if (!visited.insert(key).second)
        continue;
      for (Operation *m : clustered ? exposed(x) : ArrayRef<Operation *>(x))
        for (Operation *u : usersInBlock(block, m)) {
          if (inOneOf(u, la, lb))
            return true;
          worklist.push_back(u);
        }
    }
    return false;
  }

  /// Whether a result of `from`'s cluster is read in `to`'s.
  bool feeds(Operation *from, Operation *to) const {
    Operation *lt = leader(to);
    return llvm::any_of(exposed(from), [&](Operation *m) {
      return llvm::any_of(usersInBlock(block, m),
                          [&](Operation *u) { return inOneOf(u, lt, lt); });
    });
  }

  /// Whether a group merging the clusters of `a` and `b` passes its kernel
  /// at most maxBuffers buffers: the tensors it reads from outside
  /// (those cloned into groups aside) and the results it writes (read
  /// outside it). The clusters' own counts bound the merged group's from
  /// above (a tensor both read, a result only the other reads); only near
  /// the limit are the merged group's counted: from the smaller cluster
  /// where neither reads the other, else over both.
  bool buffersFit(Operation *a, Operation *b) const {
    const Summary &sa = summary(a), &sb = summary(b);
    if (sa.reads.size() + sb.reads.size() + sa.writes + sb.writes <= maxBuffers)
      return true;
    Operation *la = leader(a), *lb = leader(b);
    // Clusters that read nothing of each other (the independent groups a
    // multi-tensor launch gathers): the merged group reads what either
    // reads and writes what each writes, counted from the smaller side (a
    // full launch was tried against every later parameter, its reads
    // gathered anew each time).
    const Summary *small = &sa, *large = &sb;
    Operation *ls = la, *ll = lb;
    if (small->reads.size() + small->exposed.size() >
        large->reads.size() + large->exposed.size()) {
      std::swap(small, large);
      std::swap(ls, ll);
    }
    // (whether the large one feeds the small one, from the small one's
    // reads: feeds() would walk the large one's results)
    bool independent = la != lb &&
                       llvm::none_of(small->reads,
                                     [&](Value v) {
                                       Operation *def = v.getDefiningOp();
                                       return def && inOneOf(def, ll, ll);
                                     }) &&
                       !feeds(ls, ll);
    if (independent) {
      unsigned reads =
          large->reads.size() + llvm::count_if(small->reads, [&](Value v) {
            return !large->reads.contains(v);
          });
      return reads + sa.writes + sb.writes <= maxBuffers;
    }
    llvm::DenseSet<Value> reads;
    for (Value v : llvm::concat<const Value>(sa.reads, sb.reads)) {
      Operation *def = v.getDefiningOp();
      if (!(def && inOneOf(def, la, lb)))
        reads.insert(v);
    }
    return reads.size() + writesOf(la, lb) <= maxBuffers;
  }

  /// Calls `tryMerge(a, b)` for each op `a` of `ops` and the first op `b`
  /// after it of each other cluster, in order; `tryMerge` returns whether
  /// it merged them. What the searches test depends on the two clusters
  /// only, so each later cluster is tried once against `a`'s, until `a`'s
  /// grows. (The ops' clusters are kept in an array, as numbers: a chain
  /// planned as one cluster asked for their leaders N^2 / 2 times.)
  /// Nor is a later op of a cluster tried, while no merge has happened
  /// anywhere since its cluster's last search, against the ops past that
  /// search's last merge: the clusters there were all tried then, in the
  /// state they are in now (an op past it searches nothing). (An
  /// optimizer's step over 800 parameters: 20000 ops, 1600 clusters; each
  /// op searched every later one. Over 600: each op of a full multi-tensor
  /// group searched to the end again, the clusters before its last merge
  /// having been tried against a smaller group.)
  void
  forLaterPairs(ArrayRef<Operation *> ops,
                llvm::function_ref<bool(Operation *, Operation *)> tryMerge) {
    // Each position's cluster by number, kept as the clusters merge: the
    // smaller side's positions take the larger's number (refreshing every
    // position's leader after each merge was N a merge, and an optimizer's
    // step merges as many times as it has parameters).
    SmallVector<unsigned> cluster(ops.size());
    SmallVector<SmallVector<unsigned, 4>> positions;
    auto number = [&] {
      llvm::DenseMap<Operation *, unsigned> numberOf;
      positions.clear();
      for (auto [p, op] : llvm::enumerate(ops)) {
        auto [it, added] = numberOf.try_emplace(leader(op), positions.size());
        if (added)
          positions.emplace_back();
        cluster[p] = it->second;
        positions[it->second].push_back(p);
      }
    };
    number();
    unsigned numberedAt = unions;
    // (a cluster's number -> the merges counted when its last search ended,
    // and the position after which that search tried every cluster in that
    // state)
    llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> searched;
    for (unsigned i = 0; i < ops.size(); ++i) {
      // (while no merge happens, the clusters past the last search's last
      // merge were all tried then, against this cluster as it is now)
      unsigned end = ops.size();
      if (auto it = searched.find(cluster[i]);
          it != searched.end() && it->second.first == unions)
        end = std::min(end, it->second.second + 1);
      llvm::DenseSet<unsigned> tried;
      unsigned fresh = i;
      for (unsigned j = i + 1; j < end; ++j) {
        if (cluster[j] == cluster[i] || !tried.insert(cluster[j]).second)
          continue;
        bool merged = tryMerge(ops[i], ops[j]);
        if (unions != numberedAt) {
          if (merged && unions == numberedAt + 1) {
            unsigned keep = cluster[i], gone = cluster[j];
            if (positions[keep].size() < positions[gone].size())
              std::swap(keep, gone);
            for (unsigned p : positions[gone])
              cluster[p] = keep;
            positions[keep].append(positions[gone]);
            positions[gone].clear();
          } else {
            number(); // (not the one merge of these two: numbered anew)
          }
          numberedAt = unions;
        }
        if (merged) {
          tried.clear();
          fresh = j;
          end = ops.size();
        }
      }
      searched[cluster[i]] = {unions, fresh};
    }
  }

  void unite(Operation *a, Operation *b) {
    Operation *la = leader(a), *lb = leader(b);
    if (la == lb)
      return;
    ++unions;
    Summary sa = std::move(summaries[la]), sb = std::move(summaries[lb]);
    summaries.erase(la);
    summaries.erase(lb);
    classes.unionSets(la, lb);
    Operation *l = leader(la);
    Summary &s = summaries[l];
    s.size = sa.size + sb.size;
    s.rowReductions = sa.rowReductions + sb.rowReductions;
    s.contractions = sa.contractions + sb.contractions;
    s.notElementwise = sa.notElementwise + sb.notElementwise;
    s.spaces = std::move(sa.spaces);
    addSpaces(s.spaces, sb.spaces);
    for (Operation *m : llvm::concat<Operation *>(sa.exposed, sb.exposed))
      if (llvm::any_of(usersInBlock(block, m),
                       [&](Operation *u) { return !inOneOf(u, l, l); }))
        s.exposed.push_back(m);
    // (a value one side read from the other is the group's own now)
    s.reads = std::move(sa.reads);
    for (Value v : sb.reads)
      s.reads.insert(v);
    s.reads.remove_if([&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && inOneOf(def, l, l);
    });
    s.writes = writesOf(l, l);
  }

private:
  struct Summary {
    unsigned size = 1, rowReductions = 0, contractions = 0, notElementwise = 0;
    SmallVector<Operation *> exposed;
    SmallVector<SmallVector<int64_t>, 1> spaces; // (distinct)
    /// The tensors the cluster reads from outside it (not cloned into
    /// groups), and how many of its results are read outside it.
    llvm::SetVector<Value> reads;
    unsigned writes = 0;
  };

  /// How many results of the clusters led by `la` and `lb` (merged) are
  /// read outside them.
  unsigned writesOf(Operation *la, Operation *lb) const {
    unsigned n = 0;
    for (Operation *l : {la, lb}) {
      for (Operation *m : exposed(l))
        for (Value r : m->getResults())
          n += readOutside(block, r,
                           [&](Operation *u) { return inOneOf(u, la, lb); });
      if (la == lb)
        break;
    }
    return n;
  }

  const Summary &summary(Operation *op) const {
    return summaries.find(leader(op))->second;
  }
  /// Adds the spaces of `more` that `to` lacks, up to one past
  /// kMaxLaunchSpaces (all a multi-tensor launch needs to know).
  static void addSpaces(SmallVectorImpl<SmallVector<int64_t>> &to,
                        ArrayRef<SmallVector<int64_t>> more) {
    for (const SmallVector<int64_t> &d : more) {
      if (to.size() > kMaxLaunchSpaces)
        return;
      if (!llvm::is_contained(to, d))
        to.push_back(d);
    }
  }

  bool inOneOf(Operation *op, Operation *la, Operation *lb) const {
    if (!classes.contains(op))
      return false;
    Operation *l = leader(op);
    return l == la || l == lb;
  }

  Block *block;
  unsigned maxBuffers;
  unsigned unions = 0;
  llvm::EquivalenceClasses<Operation *> classes;
  llvm::DenseMap<Operation *, Summary> summaries; // (by leader)
};

/// Where the loops of a group's members run in its kernel: loop j of a
/// member is the kernel's loop `roles[op][j]` (in a row group, the rows
/// first, then the columns of its reductions). Members without a place
/// (elementwise ops inlined into their consumers over another space, ops
/// that are not generics) are absent.
using LoopRoles = llvm::DenseMap<Operation *, SmallVector<unsigned>>;

/// The kernel loop each dimension of a tensor is indexed by when an op
/// whose loop j is the kernel's loop `role[j]` (none: loop j itself)
/// accesses it through `map`; std::nullopt where a dimension is not indexed
/// by one loop.
static std::optional<SmallVector<unsigned>>
mapRoles(AffineMap map, ArrayRef<unsigned> role = {}) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim)
      return std::nullopt;
    dims.push_back(role.empty() ? dim.getPosition() : role[dim.getPosition()]);
  }
  return dims;
}

/// mapRoles of `op`'s place in `roles`; std::nullopt when it has none.
static std::optional<SmallVector<unsigned>>
tensorDimRoles(Operation *op, AffineMap map, const LoopRoles &roles) {
  auto it = roles.find(op);
  if (it == roles.end())
    return std::nullopt;
  return mapRoles(map, it->second);
}

/// The placed ops that inlined elementwise op `op` is evaluated in, with the
/// map from each one's loops to `op`'s loops (through chains of inlined ops,
/// each writing its result through the identity); false where a use is not
/// a generic's input, or a map cannot be composed.
static bool
placedViews(Operation *op, llvm::function_ref<bool(Operation *)> inGroup,
            llvm::function_ref<bool(Operation *)> isPlaced,
            SmallVector<std::pair<Operation *, AffineMap>> &views,
            unsigned depth = 0) {
  auto g = cast<linalg::GenericOp>(op);
  if (depth > 16 || g.getNumResults() != 1 ||
      !g.getIndexingMapMatchingResult(g->getResult(0)).isIdentity())
    return false;
  for (OpOperand &use : g->getResult(0).getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || !inGroup(consumer) || !consumer.isDpsInput(&use))
      return false;
    AffineMap read = consumer.getMatchingIndexingMap(&use);
    if (isPlaced(consumer)) {
      views.push_back({consumer, read});
      continue;
    }
    SmallVector<std::pair<Operation *, AffineMap>> further;
    if (!isElementwiseGeneric(consumer) ||
        !placedViews(consumer, inGroup, isPlaced, further, depth + 1))
      return false;
    for (auto [p, view] : further)
      views.push_back({p, read.compose(view)});
  }
  return true;
}

/// Whether `op` is an elementwise op over the full space `full` in another
/// loop order (what alignToRowSpace may interchange).
static bool outOfOrder(Operation *op, ArrayRef<int64_t> full) {
  SmallVector<int64_t> d = domainOf(op);
  return elementwise(op) && d.size() == full.size() &&
         ArrayRef<int64_t>(d) != full &&
         std::is_permutation(d.begin(), d.end(), full.begin());
}

/// What rowCompatible found of a compatible group with reductions along its
/// rows, and without contractions, column sums or ops over the full space
/// in another loop order: each member runs over its rows (`rows`) or
/// over rows x columns (`full`) in order, or is inlined into its readers.
/// Whether one more op keeps such a group compatible depends on that op and
/// its edges alone (RowSpaceChecks).
struct PlainRowGroup {
  SmallVector<int64_t> rows, full;
};

/// Kernel loops: those a placed op's `map` indexes (std::nullopt where the
/// op has no place or a result is not one loop).
using RolesAt = llvm::function_ref<std::optional<SmallVector<unsigned>>(
    Operation *, AffineMap)>;

/// Whether inlined elementwise op `reader`, evaluated in each placed op it
/// is inlined into (placedViews), reads each value a placed member wrote
/// at the point it was written (`writtenAt`: where a member wrote what an
/// input reads).
static bool inlinedReaderFits(
    Operation *reader, llvm::function_ref<bool(Operation *)> inGroup,
    llvm::function_ref<bool(Operation *)> isPlaced,
    llvm::function_ref<std::optional<SmallVector<unsigned>>(OpOperand *)>
        writtenAt,
    RolesAt rolesAt) {
  SmallVector<std::pair<Operation *, AffineMap>> views;
  if (!placedViews(reader, inGroup, isPlaced, views))
    return false;
  auto g = cast<linalg::GenericOp>(reader);
  for (OpOperand *in : g.getDpsInputOperands()) {
    auto written = writtenAt(in);
    if (!written)
      continue;
    for (auto [consumer, view] : views) {
      auto read = rolesAt(consumer, g.getMatchingIndexingMap(in).compose(view));
      if (!read || *read != *written)
        return false;
    }
  }
  return true;
}

/// rowCompatible's checks of one set of ops, in steps: the contractions'
/// loop nests (contractionsFit), the rows the reductions define (findRows),
/// the column sums and their epilogues (findColumnEpilogues,
/// columnSumsFit), each member's place in the kernel's loops (placeable,
/// place), and the values the members pass to each other (readsFit).
class RowCheck {
public:
  explicit RowCheck(const llvm::DenseSet<Operation *> &ops) : ops(ops) {}

  std::optional<bool> run(LoopRoles *roles,
                          std::optional<PlainRowGroup> *plain);

private:
  /// An elementwise op consumed only inside the group is inlined into its
  /// consumers by elementwise fusion: its own iteration space does not
  /// matter.
  bool inlined(Operation *op) const {
    return elementwise(op) && llvm::all_of(op->getUsers(), [&](Operation *u) {
             return ops.contains(u);
           });
  }
  bool contractionsFit() const;
  std::optional<bool> findRows();
  void findColumnEpilogues();
  bool columnSumsFit() const;
  /// The rows' leading dimensions a column sum keeps.
  int64_t keptOf(linalg::GenericOp g) const {
    return int64_t(g.getNumParallelLoops()) - int64_t(cols.size());
  }
  bool
  placeable(const llvm::DenseMap<Operation *, SmallVector<unsigned>> &aligned,
            SmallVectorImpl<Operation *> &inlinedRowReaders) const;
  void place(const llvm::DenseMap<Operation *, SmallVector<unsigned>> &aligned);
  std::optional<SmallVector<unsigned>> writtenAt(OpOperand *in) const;
  bool readsFit(ArrayRef<Operation *> inlinedRowReaders) const;

  const llvm::DenseSet<Operation *> &ops;
  /// The ops in block order.
  SmallVector<Operation *> members;
  /// Whether a reduction runs along the rows.
  bool alongRows = false;
  /// The reductions' rows, their full space, and its columns.
  SmallVector<int64_t> rows, full, cols;
  llvm::DenseSet<Operation *> columnSums, columnEpilogues;
  /// Where each placed member's loops run in the kernel.
  LoopRoles placed;
};

/// A contraction takes only epilogues over its output space. Several
/// contractions share a group (an epilogue combining their results, one
/// thread per output computing each) only over identical loop nests.
bool RowCheck::contractionsFit() const {
  if (llvm::any_of(ops, rowReduction))
    return false;
  auto c = cast<linalg::GenericOp>(*llvm::find_if(ops, contraction));
  for (Operation *op : ops)
    if (contraction(op)) {
      auto other = cast<linalg::GenericOp>(op);
      if (domainOf(other) != domainOf(c) ||
          other.getIteratorTypesArray() != c.getIteratorTypesArray())
        return false;
    }
  SmallVector<int64_t> out = parallelExtents(c);
  return llvm::all_of(ops, [&](Operation *op) {
    return contraction(op) || domainOf(op) == out || inlined(op);
  });
}

/// The rows and full space shared by the reductions along the rows (false
/// where they differ, std::nullopt where there is none). Reductions along
/// leading axes (column sums) beside reductions along the rows run with
/// their parallel loops on the kernel's columns and their reduced loops on
/// its rows: each block folds the rows it computes into partial column
/// sums. Only reductions along the rows define the rows.
std::optional<bool> RowCheck::findRows() {
  alongRows = llvm::any_of(ops, alongRowsReduction);
  if (alongRows)
    for (Operation *op : ops)
      if (columnReduction(op))
        columnSums.insert(op);
  bool found = false;
  for (Operation *op : ops) {
    if (!rowReduction(op) || columnSums.contains(op))
      continue;
    auto g = cast<linalg::GenericOp>(op);
    SmallVector<int64_t> loops = domainOf(g);
    SmallVector<int64_t> r(loops.begin(),
                           loops.begin() + g.getNumParallelLoops());
    if (found && (rows != r || full != loops))
      return false;
    rows = r;
    full = loops;
    found = true;
  }
  if (!found)
    return std::nullopt;
  cols.assign(full.begin() + rows.size(), full.end());
  return true;
}

/// Column epilogues: elementwise ops over the columns whose operands from
/// the group are all column sums' results or other column epilogues' (a
/// mean's division, an f16 sum's rounding to f16). They run after every
/// row, where the partials are added up.
void RowCheck::findColumnEpilogues() {
  SmallVector<SmallVector<int64_t>> sumSpaces; // (kept..., columns...)
  for (Operation *op : columnSums)
    sumSpaces.push_back(parallelExtents(cast<linalg::GenericOp>(op)));
  for (Operation *op : members) {
    if (columnSums.empty() || columnSums.contains(op) || !elementwise(op) ||
        !llvm::is_contained(sumSpaces, domainOf(op)))
      continue;
    bool readsSum = false, readsOther = false;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !ops.contains(def))
        continue;
      if (columnSums.contains(def) || columnEpilogues.contains(def))
        readsSum = true;
      else
        readsOther = true;
    }
    if (readsSum && !readsOther)
      columnEpilogues.insert(op);
  }
}

/// A column sum runs over (columns | rows), in order; what it computes
/// leaves the group (no member can wait for every row) or goes to column
/// epilogues, and not to another reduction (an arg-reduction's search over
/// the columns reads their maxima: the two stay together, over the
/// columns). (Batched: over (kept | columns | summed rows), the rows'
/// leading dimensions kept, such as y.mean(1) of y [b, s, d] beside rows
/// (b, s): each block folds rows of one kept index.) All keep the same
/// dimensions: their partials are added up by one kernel, over one space.
bool RowCheck::columnSumsFit() const {
  std::optional<int64_t> allKept;
  for (Operation *op : columnSums) {
    auto g = cast<linalg::GenericOp>(op);
    int64_t kept = keptOf(g);
    if (kept < 0 || kept >= int64_t(rows.size()) ||
        (allKept && *allKept != kept))
      return false;
    allKept = kept;
    SmallVector<int64_t> expected(rows.begin(), rows.begin() + kept);
    llvm::append_range(expected, cols);
    expected.append(rows.begin() + kept, rows.end());
    if (domainOf(g) != expected ||
        g.getNumReductionLoops() != rows.size() - kept)
      return false;
  }
  for (Operation *op :
       llvm::concat<Operation *const>(columnSums, columnEpilogues))
    for (Operation *user : op->getUsers())
      if ((ops.contains(user) && !columnEpilogues.contains(user)) ||
          rowReduction(user) || contraction(user))
        return false;
  return true;
}

/// Whether every member runs over the rows or the full space (in order or
/// interchanged into it: `aligned`), is a column sum or epilogue, or is
/// inlined. Inlined ops reading a row value (a per-group scale over (n, g,
/// cg) in group norm) go to `inlinedRowReaders`, to be checked through the
/// consumers they inline into: they must read it along the rows too.
bool RowCheck::placeable(
    const llvm::DenseMap<Operation *, SmallVector<unsigned>> &aligned,
    SmallVectorImpl<Operation *> &inlinedRowReaders) const {
  auto readsRowValue = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && ops.contains(def) &&
             (rowReduction(def) || domainOf(def) == rows);
    });
  };
  return llvm::all_of(ops, [&](Operation *op) {
    SmallVector<int64_t> d = domainOf(op);
    if (columnSums.contains(op) || columnEpilogues.contains(op) || d == rows ||
        d == full || aligned.contains(op))
      return true;
    if (!inlined(op))
      return false;
    if (readsRowValue(op))
      inlinedRowReaders.push_back(op);
    return true;
  });
}

/// Loops of row reductions and of ops over the rows or the full space in
/// order are the kernel's loops; an interchanged op's loop v[i] is loop i.
void RowCheck::place(
    const llvm::DenseMap<Operation *, SmallVector<unsigned>> &aligned) {
  for (Operation *op : members) {
    auto it = aligned.find(op);
    if (columnEpilogues.contains(op))
      continue; // (after the rows: no place in the row kernel's loops)
    if (columnSums.contains(op)) {
      // (kept..., columns..., summed rows...) -> the kernel's (rows...,
      // columns...)
      unsigned numCols = cols.size();
      unsigned kept = keptOf(cast<linalg::GenericOp>(op));
      SmallVector<unsigned> r;
      for (unsigned j = 0; j < full.size(); ++j)
        r.push_back(j < kept             ? j
                    : j < kept + numCols ? rows.size() + (j - kept)
                                         : j - numCols);
      placed[op] = std::move(r);
    } else if (it != aligned.end()) {
      SmallVector<unsigned> r(it->second.size());
      for (auto [i, old] : llvm::enumerate(it->second))
        r[old] = i;
      placed[op] = std::move(r);
    } else if (SmallVector<int64_t> d = domainOf(op); d == rows || d == full) {
      placed[op] = llvm::to_vector(llvm::seq<unsigned>(0, d.size()));
    }
  }
}

/// Where a member's input was written, if a placed member wrote it.
std::optional<SmallVector<unsigned>> RowCheck::writtenAt(OpOperand *in) const {
  auto producer = in->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !ops.contains(producer))
    return std::nullopt;
  return tensorDimRoles(
      producer,
      producer.getIndexingMapMatchingResult(cast<OpResult>(in->get())), placed);
}

/// Whether every value one member passes to another is read at the point
/// it was written. An inlined op is evaluated in each placed op it is
/// inlined into (through chains of inlined ops): a row value it reads must
/// be read there at the rows the value was written at.
bool RowCheck::readsFit(ArrayRef<Operation *> inlinedRowReaders) const {
  for (Operation *op : members) {
    if (columnEpilogues.contains(op))
      continue;
    auto consumer = cast<linalg::GenericOp>(op);
    for (OpOperand *in : consumer.getDpsInputOperands()) {
      auto written = writtenAt(in);
      auto read =
          tensorDimRoles(op, consumer.getMatchingIndexingMap(in), placed);
      if (written && read && *written != *read)
        return false;
    }
  }
  auto written = [&](OpOperand *in) { return writtenAt(in); };
  for (Operation *op : inlinedRowReaders)
    if (!inlinedReaderFits(
            op, [&](Operation *x) { return ops.contains(x); },
            [&](Operation *x) { return placed.contains(x); }, written,
            [&](Operation *x, AffineMap map) {
              return tensorDimRoles(x, map, placed);
            }))
      return false;
  return true;
}

std::optional<bool> RowCheck::run(LoopRoles *roles,
                                  std::optional<PlainRowGroup> *plain) {
  if (llvm::any_of(ops, contraction))
    return contractionsFit();
  std::optional<bool> found = findRows();
  if (!found || !*found)
    return found;
  members.assign(ops.begin(), ops.end());
  llvm::sort(members,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  findColumnEpilogues();
  if (!columnSumsFit())
    return false;
  // An elementwise op over the same space in another loop order (over an
  // NHWC tensor, where the reductions loop over (c | n, h, w)) is
  // interchanged into the reductions' order by fusion-fuse-group-bodies.
  SmallVector<Operation *> aligning =
      llvm::to_vector(llvm::make_filter_range(members, [&](Operation *op) {
        return !columnSums.contains(op) && !columnEpilogues.contains(op);
      }));
  llvm::DenseMap<Operation *, SmallVector<unsigned>> aligned =
      alignToRowSpace(aligning, full, rows.size(), domainOf);
  SmallVector<Operation *> inlinedRowReaders;
  if (!placeable(aligned, inlinedRowReaders))
    return false;
  place(aligned);
  if (!readsFit(inlinedRowReaders))
    return false;
  if (plain && alongRows && columnSums.empty() &&
      llvm::none_of(members,
                    [&](Operation *op) { return outOfOrder(op, full); }))
    *plain = PlainRowGroup{rows, full};
  if (roles)
    *roles = std::move(placed);
  return true;
}

/// For ops containing row reductions: whether all reductions share one
/// (rows, columns) shape, every op runs over the rows or over rows x
/// columns, and every value one member passes to another is read at the
/// point it was written (a square matrix's column sums have the extents of
/// its row sums, but not their rows). std::nullopt when there is no
/// reduction among `ops`. When compatible, `roles` (if given) receives
/// where each member's loops run, and `plain` (if given) the group's rows
/// when it is a PlainRowGroup.
static std::optional<bool>
rowCompatible(const llvm::DenseSet<Operation *> &ops,
              LoopRoles *roles = nullptr,
              std::optional<PlainRowGroup> *plain = nullptr) {
  return RowCheck(ops).run(roles, plain);
}

/// rowCompatible of two clusters merged, asked at every edge of the
/// vertical phases. A group that grows one op at a time (a stack of 200
/// normalizations over the same rows: one group of 2000 ops) was walked
/// whole at each of them. Where one side is a single op and the other a
/// PlainRowGroup, the answer depends only on that op and its edges into
/// the group: the members' places (the rows, the full space in order) do
/// not move, an op inlined into its readers stays inlined with more of them
/// inside, and the op's own place and the values it passes to and from
/// members decide the rest. Other merges are checked whole.
class RowSpaceChecks {
public:
  explicit RowSpaceChecks(const ClusterSet &classes) : classes(classes) {}

  std::optional<bool> merged(Operation *a, Operation *b) {
    // (the last merge found plain, once its two clusters united)
    if (pending && classes.together(pending->a, pending->b) &&
        classes.size(pending->a) == pending->size) {
      known[classes.leader(pending->a)] = *pending;
      pending.reset();
    }
    for (auto [group, op] : {std::pair(a, b), std::pair(b, a)}) {
      if (classes.size(op) != 1 || classes.size(group) == 1)
        continue;
      auto it = known.find(classes.leader(group));
      if (it == known.end() || it->second.size != classes.size(group))
        continue;
      Answer answer = grow(it->second.group, group, op);
      if (answer == Answer::Unknown)
        break;
      if (answer == Answer::Yes)
        pending = Known{it->second.group, classes.leader(group), op,
                        it->second.size + 1};
      return answer == Answer::Yes;
    }
    std::optional<PlainRowGroup> plain;
    std::optional<bool> whole =
        rowCompatible(classes.merged(a, b), nullptr, &plain);
    if (plain)
      pending = Known{*plain, classes.leader(a), classes.leader(b),
                      classes.size(a) + classes.size(b)};
    return whole;
  }

private:
  enum class Answer { Yes, No, Unknown };
  /// A plain group's rows, and (a, b, size) the clusters whose union it
  /// is: valid while the union's leader leads `size` ops (clusters only
  /// grow).
  struct Known {
    PlainRowGroup group;
    Operation *a, *b;
    unsigned size;
  };

  /// rowCompatible of `group`'s cluster (plain, over `g`'s rows) with
  /// `op` added, or Unknown where the merged group would not be plain.
  Answer grow(const PlainRowGroup &g, Operation *group, Operation *op) {
    auto in = [&](Operation *x) {
      return x == op || classes.inClusterOf(x, group);
    };
    if (contraction(op) || columnReduction(op) || outOfOrder(op, g.full))
      return Answer::Unknown;
    SmallVector<int64_t> d = domainOf(op);
    if (rowReduction(op)) {
      auto generic = cast<linalg::GenericOp>(op);
      if (ArrayRef<int64_t>(d) != ArrayRef<int64_t>(g.full) ||
          ArrayRef<int64_t>(d).take_front(generic.getNumParallelLoops()) !=
              ArrayRef<int64_t>(g.rows))
        return Answer::No;
    }
    auto placed = [&](Operation *x) {
      SmallVector<int64_t> dx = domainOf(x);
      return dx == g.rows || dx == g.full;
    };
    if (!placed(op) &&
        (!elementwise(op) || !llvm::all_of(op->getUsers(), in)))
      return Answer::No; // (neither placed nor inlined into its readers)
    // Values passed between `op` and the members, read where written (a
    // placed op's loops are the kernel's, in order).
    auto dims = [&](Operation *x, AffineMap map)
        -> std::optional<SmallVector<unsigned>> {
      return placed(x) ? mapRoles(map) : std::nullopt;
    };
    auto writtenAt = [&](OpOperand *read) {
      auto producer = read->get().getDefiningOp<linalg::GenericOp>();
      return producer && in(producer)
                 ? dims(producer, producer.getIndexingMapMatchingResult(
                                      cast<OpResult>(read->get())))
                 : std::nullopt;
    };
    auto consistent = [&](OpOperand *read) {
      auto written = writtenAt(read);
      auto at = dims(read->getOwner(),
                     cast<linalg::GenericOp>(read->getOwner())
                         .getMatchingIndexingMap(read));
      return !written || !at || *written == *at;
    };
    for (OpOperand *read :
         cast<linalg::GenericOp>(op).getDpsInputOperands())
      if (!consistent(read))
        return Answer::No;
    for (OpOperand &use : op->getUses()) {
      auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (user && user != op && in(user) && user.isDpsInput(&use) &&
          !consistent(&use))
        return Answer::No;
    }
    // An inlined op that reads a row value, evaluated in each placed op it
    // is inlined into, must be read there at the rows the value was written
    // at (rowCompatible): `op` itself, and members that read it.
    auto readsRowValue = [&](Operation *x) {
      return llvm::any_of(x->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && in(def) && (rowReduction(def) || domainOf(def) == g.rows);
      });
    };
    auto readerFits = [&](Operation *reader) {
      return inlinedReaderFits(reader, in, placed, writtenAt, dims);
    };
    if (!placed(op) && readsRowValue(op) && !readerFits(op))
      return Answer::No;
    for (Operation *user : op->getUsers())
      if (user != op && in(user) && !placed(user) && readsRowValue(user) &&
          !readerFits(user))
        return Answer::No;
    return Answer::Yes;
  }

  const ClusterSet &classes;
  llvm::DenseMap<Operation *, Known> known; // (by leader)
  std::optional<Known> pending;
};

/// Values `op` and the ops nested in it use but that are defined outside it
/// (canonicalization hoists body constants out of linalg.generic regions).
static llvm::SetVector<Value> valuesFromOutside(Operation *op) {
  llvm::SetVector<Value> values;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      Operation *owner = v.getParentBlock()->getParentOp();
      if (owner != op && !op->isProperAncestor(owner))
        values.insert(v);
    }
  });
  return values;
}

/// Values defined by these ops are cloned into each group that uses them
/// instead of becoming group inputs: they cost no memory traffic.
static bool isClonedIntoGroups(Operation *op) {
  return op && (isa<tensor::EmptyOp>(op) || matchPattern(op, m_Constant()) ||
                isFillLike(op));
}

/// A fill whose value only initializes other ops' outputs is cloned into
/// their groups instead of being a group (a kernel) of its own.
static bool isOnlyAnInit(Operation *op) {
  return isFillLike(op) && llvm::all_of(op->getUses(), [](OpOperand &use) {
           auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
           return dps && dps.isDpsInit(&use);
         });
}

/// True if `use` is an elementwise epilogue of a contraction: the consumer
/// runs over the contraction's output space and reads its result at the same
/// point (the result's map lists the parallel loops in order).
static bool isContractionEpilogueUse(OpOperand &use) {
  auto producer = use.get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!producer || !consumer || !isElementwiseGeneric(consumer) ||
      !consumer.isDpsInput(&use))
    return false;
  AffineMap produced =
      producer.getIndexingMapMatchingResult(cast<OpResult>(use.get()));
  SmallVector<utils::IteratorType> iters = producer.getIteratorTypesArray();
  unsigned expected = 0;
  for (AffineExpr e : produced.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    while (expected < iters.size() &&
           iters[expected] != utils::IteratorType::parallel)
      ++expected;
    if (!dim || dim.getPosition() != expected++)
      return false;
  }
  return consumer.getMatchingIndexingMap(&use).isIdentity() &&
         consumer.getStaticLoopRanges() == parallelExtents(producer);
}

/// True if `use` reads the result of a row reduction the way a row epilogue
/// does: indexed by the consumer's leading loops, which run over the
/// reduction's parallel (row) space, or by the row loops of an elementwise
/// consumer whose loops are in another order.
static bool isRowEpilogueUse(OpOperand &use) {
  auto producer = use.get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!producer || !consumer || !consumer.isDpsInput(&use))
    return false;
  unsigned rows = producer.getNumParallelLoops();
  AffineMap produced =
      producer.getIndexingMapMatchingResult(cast<OpResult>(use.get()));
  AffineMap read = consumer.getMatchingIndexingMap(&use);
  // Both maps must be (d0, ..., d(rows-1)): the leading loops, in order.
  auto leading = [&](AffineMap map) { return isLeadingLoopsMap(map, rows); };
  if (!leading(produced) || consumer.getNumLoops() < rows)
    return false;
  if (isColumnReduction(consumer) && !isColumnReduction(producer)) {
    // A column sum reads a row value along its reduced loops, in order.
    unsigned first = consumer.getNumParallelLoops();
    if (read.getNumResults() != rows ||
        consumer.getNumReductionLoops() != rows)
      return false;
    SmallVector<int64_t> producerLoops = producer.getStaticLoopRanges();
    SmallVector<int64_t> consumerLoops = consumer.getStaticLoopRanges();
    for (auto [i, e] : llvm::enumerate(read.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() != first + i ||
          consumerLoops[first + i] != producerLoops[i])
        return false;
    }
    return true;
  }
  if (!leading(read)) {
    // An elementwise consumer over the same space in another loop order
    // (see alignToRowSpace, which rowCompatible checks): the row loops, in
    // order, wherever they are among its loops.
    if (!isElementwiseGeneric(consumer) || !read.isProjectedPermutation() ||
        read.getNumResults() != rows)
      return false;
    SmallVector<int64_t> producerLoops = producer.getStaticLoopRanges();
    SmallVector<int64_t> consumerLoops = consumer.getStaticLoopRanges();
    for (auto [i, e] : llvm::enumerate(read.getResults()))
      if (consumerLoops[cast<AffineDimExpr>(e).getPosition()] !=
          producerLoops[i])
        return false;
    return true;
  }
  SmallVector<int64_t> producerLoops = producer.getStaticLoopRanges();
  SmallVector<int64_t> consumerLoops = consumer.getStaticLoopRanges();
  return ArrayRef<int64_t>(producerLoops).take_front(rows) ==
         ArrayRef<int64_t>(consumerLoops).take_front(rows);
}

/// True if `use`, an input of a contraction, is produced by an elementwise
/// generic cheap enough to evaluate at every read (a contraction reads each
/// input element many times): used by that contraction alone (and in no
/// group yet: an epilogue of a row group stays there), at most four
/// arith ops, one input read through all its loops (the tensor the
/// contraction then reads in its place) and otherwise broadcasts and
/// scalars. torch's scaled_dot_product_attention scales q and k so.
static bool isCheapPrologue(OpOperand &use) {
  auto producer = use.get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !isElementwiseGeneric(producer) ||
      producer.getNumResults() != 1 || producer->hasAttr(kMaterializeAttr) ||
      !llvm::all_of(producer->getUsers(),
                    [&](Operation *u) { return u == use.getOwner(); }) ||
      !linalg::areElementwiseOpsFusable(&use))
    return false;
  unsigned full = 0;
  for (OpOperand *in : producer.getDpsInputOperands())
    if (isa<ShapedType>(in->get().getType()) &&
        producer.getMatchingIndexingMap(in).getNumResults() ==
            producer.getNumLoops())
      ++full;
  unsigned ops = 0;
  for (Operation &op : producer.getBody()->without_terminator()) {
    if (op.getDialect()->getNamespace() != "arith")
      return false;
    ++ops;
  }
  return full <= 1 && ops <= 4;
}

/// The init operand of contraction `consumer` when it is produced by an
/// elementwise generic (not a fill, which is cloned anyway) used only there,
/// running over the contraction's output space and read at the same point.
static OpOperand *contractionInitProducedAlone(Operation *consumer) {
  auto contraction = cast<linalg::GenericOp>(consumer);
  OpOperand *init = contraction.getDpsInitOperand(0);
  auto producer = init->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !isElementwiseGeneric(producer) || isFillLike(producer) ||
      !init->get().hasOneUse() || producer->hasAttr(kMaterializeAttr) ||
      domainOf(producer) != parallelExtents(contraction) ||
      !producer.getIndexingMapMatchingResult(cast<OpResult>(init->get()))
           .isIdentity())
    return nullptr;
  // The contraction writes its output at its parallel loops in order.
  unsigned expected = 0;
  SmallVector<utils::IteratorType> iters = contraction.getIteratorTypesArray();
  for (AffineExpr e : contraction.getMatchingIndexingMap(init).getResults()) {
    while (expected < iters.size() &&
           iters[expected] != utils::IteratorType::parallel)
      ++expected;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() != expected++)
      return nullptr;
  }
  return init;
}

struct FormFusionGroupsPass
    : kfuse::impl::FormFusionGroupsBase<FormFusionGroupsPass> {
  using FormFusionGroupsBase::FormFusionGroupsBase;

  void runOnOperation() override;

private:
  Block *block = nullptr;
  std::vector<Cluster> clusters;
  llvm::DenseMap<Operation *, unsigned> clusterOf;

  llvm::DenseSet<Operation *> opsOf(unsigned c) const {
    return llvm::DenseSet<Operation *>(clusters[c].ops.begin(),
                                       clusters[c].ops.end());
  }
  std::optional<unsigned> lookup(Operation *op) const {
    auto it = clusterOf.find(op);
    if (it == clusterOf.end())
      return std::nullopt;
    return it->second;
  }
  /// Values the ops of cluster `c` read from outside it.
  llvm::DenseSet<Value> externalReads(unsigned c) const;
  std::string describe(Operation *op) const;
  /// Position of `op` in its cluster, as reports number ops.
  unsigned opIndex(unsigned c, Operation *op) const {
    return llvm::find(clusters[c].ops, op) - clusters[c].ops.begin();
  }
  /// Why an edge stayed unfused, or how a group grew, by the consumer's
  /// (or the grown group's) op: what the group's report says.
  using Reasons = SmallVector<std::pair<Operation *, std::string>>;
  /// Step 0: each use of a shared fill its own copy.
  void copySharedFills();
  /// Steps 1 and 1a, vertical fusion: each producer into its consumers
  /// where legal (`unfused`: why not; `prologues`: producers recomputed in
  /// a contraction).
  void fuseProducers(ClusterSet &classes, ArrayRef<Operation *> fusible,
                     Reasons &unfused, Reasons &prologues);
  void joinContractionInit(ClusterSet &classes, Operation *consumer);
  /// Step 1a: edges refused for the row space, or for a producer over
  /// another space read outside, tried again as the groups grow.
  void retryRefused(ClusterSet &classes, RowSpaceChecks &rowChecks,
                    ArrayRef<OpOperand *> rowRefused,
                    ArrayRef<OpOperand *> outsideRefused);
  /// Step 1b, horizontal fusion: siblings that read a common input.
  void fuseSiblings(ClusterSet &classes, ArrayRef<Operation *> fusible,
                    Reasons &horizontal);
  /// Step 1c, multi-tensor fusion: independent elementwise groups share a
  /// launch.
  void shareLaunches(ClusterSet &classes, ArrayRef<Operation *> fusible,
                     Reasons &horizontal);
  /// Step 2: `clusters`, in block order of their first op.
  void numberClusters(ClusterSet &classes, ArrayRef<Operation *> fusible);
  /// The decisions every group's report says beyond its edges: column
  /// sums, and what planning passes before this one did (fusion.note).
  void noteDecisions();
  /// Step 3: each value a group computes and other groups read, written
  /// once or recomputed in each reader (the policy's choice, where legal).
  void decideMultiConsumer(RecomputePolicy policy);
  /// Step 3's parts: who reads a result; whether `reader` may recompute it,
  /// and its uses there; the bytes of the producer's inputs `reader` does
  /// not read already; the clone in `reader` of a recomputed producer.
  ResultReaders readersOf(OpResult result, unsigned home) const;
  std::pair<bool, SmallVector<OpOperand *>>
  recomputeLegality(Operation *producer, OpResult result, unsigned home,
                    unsigned reader) const;
  int64_t rereadBytes(Operation *producer, unsigned reader) const;
  /// Whether group `reader` with `producer` recomputed in it for `result`
  /// (which it then no longer reads) still passes its kernel at most
  /// max-buffers buffers.
  bool recomputeFits(Operation *producer, OpResult result,
                     unsigned reader) const;
  void recomputeFor(Operation *producer, OpResult result, unsigned reader,
                    ArrayRef<OpOperand *> readerUses);
  LogicalResult buildGroup(unsigned c, OpBuilder &b);
};

} // namespace

std::string FormFusionGroupsPass::describe(Operation *op) const {
  if (auto c = lookup(op))
    return "group '" + clusters[*c].name + "'";
  return "'" + op->getName().getStringRef().str() + "'";
}

llvm::DenseSet<Value> FormFusionGroupsPass::externalReads(unsigned c) const {
  llvm::DenseSet<Value> reads;
  for (Operation *op : clusters[c].ops)
    for (Value v : valuesFromOutside(op)) {
      Operation *def = v.getDefiningOp();
      if (def && (clusters[c].ops.contains(def) || isClonedIntoGroups(def)))
        continue;
      reads.insert(v);
    }
  return reads;
}

void FormFusionGroupsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  RecomputePolicy policy;
  if (recompute == "auto")
    policy = RecomputePolicy::Auto;
  else if (recompute == "never")
    policy = RecomputePolicy::Never;
  else if (recompute == "always")
    policy = RecomputePolicy::Always;
  else {
    func.emitError() << "fusion-form-groups: option recompute must be 'auto', "
                        "'never' or 'always', got '"
                     << recompute << "'";
    return signalPassFailure();
  }
  if (!func.getBody().hasOneBlock()) {
    func.emitError() << "fusion-form-groups: functions with more than one "
                        "block are not supported";
    return signalPassFailure();
  }
  block = &func.getBody().front();

  copySharedFills();

  // (ranges and kinds cached until step 3, which clones ops)
  OpCache cache;
  opCache = &cache;
  llvm::scope_exit noCache([] { opCache = nullptr; });

  // 1. Union producers into consumers in program order.
  SmallVector<Operation *> fusible;
  for (Operation &op : *block)
    if (isFusibleGeneric(&op) && !isOnlyAnInit(&op))
      fusible.push_back(&op);
  ClusterSet classes(block, fusible, maxBuffers);
  Reasons unfused, prologues, horizontal;
  fuseProducers(classes, fusible, unfused, prologues);
  fuseSiblings(classes, fusible, horizontal);
  shareLaunches(classes, fusible, horizontal);
  numberClusters(classes, fusible);
  for (auto &[op, reason] : llvm::concat<std::pair<Operation *, std::string>>(
           unfused, horizontal, prologues))
    clusters[clusterOf[op]].decisions.push_back(reason);
  // 3. Producers needed by several groups: recompute or materialize (never
  // recompute when fusion is off: a clone would fuse the producer anyway).
  opCache = nullptr;
  decideMultiConsumer(noFusion ? RecomputePolicy::Never : policy);

  noteDecisions();

  // 4. One fusion.group per cluster.
  OpBuilder b(func.getContext());
  for (unsigned c = 0; c < clusters.size(); ++c)
    if (failed(buildGroup(c, b)))
      return signalPassFailure();
  if (!sortTopologically(block)) {
    func.emitError() << "fusion-form-groups: grouping produced a cycle "
                        "(internal error)";
    return signalPassFailure();
  }
}

/// Why an edge stays unfused for the kinds of its ends alone, if it does
/// (after the cheap prologues a contraction takes).
static std::optional<StringRef> kindRefusal(OpOperand &use) {
  Operation *consumer = use.getOwner();
  Operation *producer = use.get().getDefiningOp();
  if (isContractionGeneric(consumer))
    return StringRef("stays unfused: producers stay outside contraction "
                     "groups (a contraction may read each input element "
                     "many times)");
  if (isContractionGeneric(producer) && !isContractionEpilogueUse(use))
    return StringRef("stays unfused: only elementwise epilogues over a "
                     "contraction's output space join its group");
  if (isRowReductionGeneric(producer) && !isRowEpilogueUse(use))
    return StringRef("reads a row reduction through a map that is not a "
                     "broadcast along its rows");
  if (isElementwiseGeneric(producer) && !linalg::areElementwiseOpsFusable(&use))
    return StringRef("is read through an indexing map that elementwise "
                     "fusion cannot merge");
  return std::nullopt;
}

/// Whether the group merging the groups of `producer` and `consumer` runs
/// over one row space (rowCompatible; std::nullopt without row reductions
/// and contractions).
static std::optional<bool> mergedRowwise(ClusterSet &classes,
                                         RowSpaceChecks &rowChecks,
                                         Operation *producer,
                                         Operation *consumer) {
  if (!classes.reducesOrContracts(producer, consumer))
    return std::nullopt;
  return rowChecks.merged(producer, consumer);
}

void FormFusionGroupsPass::copySharedFills() {
  // 0. A fill that some op reads (not only initializes) and that has other
  // uses (CSE merges equal fills) gives each use its own copy: shared by an
  // op that reads it and an op that accumulates into it, it would tie their
  // groups together (the accumulator's group would wait for the other to
  // write the fill), and fills cost nothing to recompute.
  for (Operation &op : llvm::make_early_inc_range(*block)) {
    if (!isFillLike(&op) || op.hasOneUse() || op.use_empty() ||
        isOnlyAnInit(&op))
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op.getUses())
      uses.push_back(&use);
    OpBuilder b(&op);
    for (OpOperand *use : ArrayRef<OpOperand *>(uses).drop_front())
      use->set(
          b.clone(op)->getResult(cast<OpResult>(use->get()).getResultNumber()));
  }
}

void FormFusionGroupsPass::fuseProducers(ClusterSet &classes,
                                         ArrayRef<Operation *> fusible,
                                         Reasons &unfused, Reasons &prologues) {
  RowSpaceChecks rowChecks(classes);
  // Reasons an edge between two fusible ops stayed unfused, reported on the
  // consumer's group.
  SmallVector<OpOperand *> unfusedUses; // (the edge of each)
  auto refuse = [&](OpOperand &use, std::pair<Operation *, std::string> why) {
    unfused.push_back(std::move(why));
    unfusedUses.push_back(&use);
  };
  // Edges refused only because their merged group would not run over one
  // row space, or because the producer's value, over another space, was
  // also read outside the merged group.
  SmallVector<OpOperand *> rowRefused, outsideRefused;
  for (Operation *consumer : fusible) {
    for (OpOperand *usePtr :
         cast<linalg::GenericOp>(consumer).getDpsInputOperands()) {
      OpOperand &use = *usePtr;
      Operation *producer = use.get().getDefiningOp();
      if (!producer || !classes.contains(producer))
        continue;
      if (classes.together(producer, consumer))
        continue;
      if (noFusion) {
        refuse(use,
            {consumer,
             edgeReason(use, "stays unfused: no-fusion was asked for")});
        continue;
      }
      if (producer->hasAttr(kMaterializeAttr)) {
        refuse(use,
            {consumer,
             edgeReason(use, "stays unfused: its producer carries the "
                             "fusion.materialize directive")});
        continue;
      }
      if (isContractionGeneric(consumer) && isCheapPrologue(use) &&
          classes.members(producer).size() == 1) {
        if (classes.buffersFit(producer, consumer) &&
            !classes.mergeMakesCycle(producer, consumer, consumer)) {
          classes.unite(producer, consumer);
          prologues.push_back(
              {consumer,
               edgeReason(use, "is computed where the contraction reads it, "
                               "not written: a few arithmetic ops on one "
                               "input (attention's scaled q or k)")});
          continue;
        }
      }
      if (std::optional<StringRef> why = kindRefusal(use)) {
        refuse(use, {consumer, edgeReason(use, *why)});
        continue;
      }
      // One group is one kernel over one iteration space. A producer side
      // whose exposed ops run over another space (a broadcast producer) may
      // join only if it is entirely consumed inside the group, where
      // elementwise fusion inlines it into its consumers.
      bool sameDomain =
          llvm::all_of(classes.exposed(producer), [&](Operation *m) {
            return domainOf(m) == domainOf(consumer);
          });
      // A group with row reductions runs one block per row: every op must
      // run over the rows, or over the rows x columns, of its reductions.
      std::optional<bool> rowwise =
          mergedRowwise(classes, rowChecks, producer, consumer);
      if (rowwise.has_value()) {
        if (!*rowwise) {
          rowRefused.push_back(&use);
          refuse(use,
              {consumer,
               edgeReason(use, "stays unfused: the merged group would not run "
                               "over one row space")});
          continue;
        }
      } else if (!sameDomain && classes.usedOutside(producer, consumer)) {
        outsideRefused.push_back(&use);
        refuse(use,
            {consumer,
             edgeReason(use, "stays unfused: its producer runs over another "
                             "iteration space and is also needed outside "
                             "this group")});
        continue;
      }
      if (!classes.buffersFit(producer, consumer)) {
        refuse(use,
            {consumer,
             edgeReason(use, "stays unfused: the merged group would pass "
                             "its kernel more than " +
                                 std::to_string(maxBuffers) + " buffers")});
        continue;
      }
      if (classes.mergeMakesCycle(producer, consumer, consumer)) {
        refuse(use,
            {consumer,
             edgeReason(use,
                        "stays unfused: merging with its producer would "
                        "create a cycle through an op outside the group")});
        continue;
      }
      classes.unite(producer, consumer);
    }
    if (!noFusion && isContractionGeneric(consumer))
      joinContractionInit(classes, consumer);
  }

  if (!noFusion)
    retryRefused(classes, rowChecks, rowRefused, outsideRefused);
  // (a refused edge whose ends met in one group through other edges is no
  // longer a decision)
  for (size_t i = unfused.size(); i-- > 0;)
    if (classes.together(unfusedUses[i]->get().getDefiningOp(),
                         unfusedUses[i]->getOwner()))
      unfused.erase(unfused.begin() + i);
}

/// A contraction's accumulator may start from an elementwise value over its
/// output space (PyTorch's convolution bias, broadcast into the output):
/// read once per output element, it joins the contraction's group, which
/// evaluates it where the accumulation starts instead of writing and
/// re-reading it.
void FormFusionGroupsPass::joinContractionInit(ClusterSet &classes,
                                               Operation *consumer) {
  OpOperand *init = contractionInitProducedAlone(consumer);
  if (!init)
    return;
  Operation *producer = init->get().getDefiningOp();
  if (!classes.contains(producer) || classes.together(producer, consumer))
    return;
  SmallVector<Operation *> side = classes.members(producer);
  if (!classes.usedOutside(producer, consumer) &&
      !llvm::any_of(side, isContractionGeneric) &&
      !llvm::any_of(side, isRowReductionGeneric) &&
      classes.buffersFit(producer, consumer) &&
      !classes.mergeMakesCycle(producer, consumer, consumer))
    classes.unite(producer, consumer);
}

void FormFusionGroupsPass::retryRefused(ClusterSet &classes,
                                        RowSpaceChecks &rowChecks,
                                        ArrayRef<OpOperand *> rowRefused,
                                        ArrayRef<OpOperand *> outsideRefused) {
  // An edge into a row group refused because the consumer alone ran over
  // another space may be legal once the consumer's group has grown (a
  // per-(n, g, c) scale in group norm runs over neither the rows nor the
  // full space, until the epilogue it is inlined into has joined it); so
  // may an edge from a producer over another space whose other readers
  // joined the consumer's group later (a mask's floats, read by x * m and
  // by the count beside it): refused edges are tried again until nothing
  // changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (OpOperand *use :
         llvm::concat<OpOperand *const>(rowRefused, outsideRefused)) {
      Operation *producer = use->get().getDefiningOp();
      Operation *consumer = use->getOwner();
      if (classes.together(producer, consumer))
        continue;
      std::optional<bool> rowwise =
          mergedRowwise(classes, rowChecks, producer, consumer);
      // (with row reductions: one row space; without: a row-space refusal
      // stands, and a producer over another space must be read inside)
      if (rowwise ? !*rowwise
                  : llvm::is_contained(rowRefused, use) ||
                        classes.usedOutside(producer, consumer))
        continue;
      if (!classes.buffersFit(producer, consumer) ||
          classes.mergeMakesCycle(producer, consumer))
        continue;
      classes.unite(producer, consumer);
      changed = true;
    }
  }
}

void FormFusionGroupsPass::fuseSiblings(ClusterSet &classes,
                                        ArrayRef<Operation *> fusible,
                                        Reasons &horizontal) {
  // 1b. Horizontal fusion: independent clusters over the same iteration
  // space (with row reductions: over the same rows) that read a common
  // input run as one kernel, so the input is read once and one launch is
  // saved. Same legality as vertical merges (no path between them through
  // other ops or groups).
  auto exposedDomain =
      [&](Operation *op) -> std::optional<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> domain;
    for (Operation *m : classes.exposed(op)) {
      if (domain && *domain != domainOf(m))
        return std::nullopt;
      domain = domainOf(m);
    }
    return domain;
  };
  auto externalInputs = [&](ArrayRef<Operation *> members) {
    llvm::DenseSet<Value> values;
    llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
    for (Operation *m : members)
      for (Value v : valuesFromOutside(m)) {
        Operation *def = v.getDefiningOp();
        if (!isClonedIntoGroups(def) && !memberSet.contains(def))
          values.insert(v);
      }
    return values;
  };
  // Whether clusters `ma` and `mb` read input `v` at the same points of
  // their common kernel (a load serves both), as far as `roles` tells: a
  // transposed read of a square matrix shares nothing.
  auto readAlike = [&](Value v, ArrayRef<Operation *> ma,
                       ArrayRef<Operation *> mb, const LoopRoles &roles) {
    auto accesses = [&](ArrayRef<Operation *> members)
        -> std::optional<SmallVector<SmallVector<unsigned>>> {
      SmallVector<SmallVector<unsigned>> found;
      for (Operation *m : members)
        for (OpOperand &use : m->getOpOperands()) {
          if (use.get() != v)
            continue;
          auto g = dyn_cast<linalg::GenericOp>(m);
          std::optional<SmallVector<unsigned>> dims;
          if (g && g.isDpsInput(&use))
            dims = tensorDimRoles(m, g.getMatchingIndexingMap(&use), roles);
          if (!dims)
            return std::nullopt; // an access without a place: assume shared
          found.push_back(*dims);
        }
      if (found.empty())
        return std::nullopt; // read inside a region only
      return found;
    };
    auto a = accesses(ma), b = accesses(mb);
    if (!a || !b)
      return true;
    return llvm::any_of(*a, [&](ArrayRef<unsigned> x) {
      return llvm::any_of(*b, [&](ArrayRef<unsigned> y) { return x == y; });
    });
  };
  // (each cluster's inputs from outside, by leader, until it grows; held
  // apart from the map, whose growth would move them under a reference
  // taken before)
  llvm::DenseMap<Operation *, std::unique_ptr<llvm::DenseSet<Value>>> inputsOf;
  auto inputs = [&](Operation *op) -> const llvm::DenseSet<Value> & {
    Operation *leader = classes.leader(op);
    std::unique_ptr<llvm::DenseSet<Value>> &held = inputsOf[leader];
    if (!held)
      held = std::make_unique<llvm::DenseSet<Value>>(
          externalInputs(classes.members(leader)));
    return *held;
  };
  classes.forLaterPairs(
      noFusion ? ArrayRef<Operation *>() : ArrayRef<Operation *>(fusible),
      [&](Operation *a, Operation *b) {
        // Siblings share an input, or (not row groups) one reads nothing:
        // tested first, from each cluster's inputs kept until it grows
        // (independent groups over different tensors, an optimizer's update
        // and norm of each parameter, are most pairs: their test asks
        // nothing of the clusters' summaries).
        bool common;
        {
          const llvm::DenseSet<Value> *ia = &inputs(a), *ib = &inputs(b);
          if (ia->size() > ib->size())
            std::swap(ia, ib);
          common = llvm::any_of(*ia, [&](Value v) { return ib->contains(v); });
          if (!common && !ia->empty())
            return false; // (neither reads nothing: ia is the smaller)
        }
        if (classes.contracts(a, b))
          return false; // their inputs are read many times: nothing to share
        bool rowGroup = classes.reducesOrContracts(a, b);
        if (!common && rowGroup)
          return false;
        // Row groups need only share their rows (one block per row computes
        // both); others must expose one iteration space (tested before the
        // clusters are walked).
        std::optional<SmallVector<int64_t>> da = exposedDomain(a);
        bool oneSpace = da && da == exposedDomain(b);
        if (!rowGroup && !oneSpace)
          return false;
        SmallVector<Operation *> ma = classes.members(a),
                                 mb = classes.members(b);
        llvm::DenseSet<Operation *> merged(ma.begin(), ma.end());
        merged.insert(mb.begin(), mb.end());
        LoopRoles roles;
        std::optional<bool> rowwise;
        if (rowGroup)
          rowwise = rowCompatible(merged, &roles);
        if (rowwise.has_value() && !*rowwise)
          return false; // reductions over different rows: two kernels
        if (!rowwise && !oneSpace)
          return false;
        if (!rowwise)
          for (Operation *m : merged)
            if (domainOf(m) == *da)
              roles[m] = llvm::to_vector(llvm::seq<unsigned>(0, da->size()));
        llvm::DenseSet<Value> ia = externalInputs(ma);
        llvm::DenseSet<Value> ib = externalInputs(mb);
        int64_t shared = 0;
        for (Value v : ib)
          if (ia.contains(v) && readAlike(v, ma, mb, roles))
            shared += bytesOf(v);
        // A group that reads nothing (a fill that is also returned, positions)
        // costs its sibling no loads: one launch writes both.
        bool readsNothing = !rowwise && (ia.empty() || ib.empty());
        if (shared == 0 && !readsNothing)
          return false;
        // (dependent, not siblings: vertical fusion decided their edge)
        if (classes.feeds(a, b) || classes.feeds(b, a))
          return false;
        if (!classes.buffersFit(a, b) || classes.mergeMakesCycle(a, b))
          return false;
        inputsOf.erase(classes.leader(a));
        inputsOf.erase(classes.leader(b));
        classes.unite(a, b);
        horizontal.push_back(
            {b, shared == 0
                    ? "fused horizontally with an independent sibling over the "
                      "same space that reads no input"
                    : "fused horizontally with an independent sibling that "
                      "reads the same " +
                          std::to_string(shared) + " B of inputs"});
        return true;
      });
}

void FormFusionGroupsPass::shareLaunches(ClusterSet &classes,
                                         ArrayRef<Operation *> fusible,
                                         Reasons &horizontal) {
  // 1c. Multi-tensor fusion: independent elementwise groups over different
  // spaces (an optimizer's update of each parameter, every gradient scaled
  // by one norm) run as one launch, each over blocks of its own. They share
  // no loads, only the launch, which is most of a small tensor's time.
  classes.forLaterPairs(
      noFusion || !multiTensor ? ArrayRef<Operation *>()
                               : ArrayRef<Operation *>(fusible),
      [&](Operation *a, Operation *b) {
        if (!classes.allElementwise(a, b))
          return false;
        SmallVector<SmallVector<int64_t>> spaces = classes.spaces(a, b);
        if (spaces.size() > kMaxLaunchSpaces)
          return false;
        if (!classes.buffersFit(a, b) || classes.feeds(a, b) ||
            classes.feeds(b, a) || classes.mergeMakesCycle(a, b))
          return false;
        classes.unite(a, b);
        horizontal.push_back(
            {b, "shares one launch with an independent elementwise group "
                "(blocks of its own each; " +
                    std::to_string(spaces.size()) + " iteration space" +
                    (spaces.size() == 1 ? "" : "s") + " so far)"});
        return true;
      });
}

void FormFusionGroupsPass::numberClusters(ClusterSet &classes,
                                          ArrayRef<Operation *> fusible) {
  // 2. Clusters in block order of their first op.
  clusters.clear();
  clusterOf.clear();
  for (Operation *op : fusible) {
    Operation *leader = classes.leader(op);
    unsigned c;
    if (auto existing = lookup(leader)) {
      c = *existing;
    } else {
      c = clusters.size();
      clusters.emplace_back();
      clusters.back().name = "g" + std::to_string(c);
      clusterOf[leader] = c;
    }
    clusterOf[op] = c;
    clusters[c].ops.insert(op);
  }
}

void FormFusionGroupsPass::noteDecisions() {
  // Column sums beside row reductions (see rowCompatible): said, since they
  // change how the kernel runs.
  for (Cluster &cluster : clusters) {
    if (!llvm::any_of(cluster.ops, isReductionAlongRows))
      continue;
    unsigned sums = llvm::count_if(cluster.ops, isColumnReduction);
    if (sums > 0)
      cluster.decisions.push_back(
          "sums " + std::to_string(sums) +
          (sums == 1 ? " reduction" : " reductions") +
          " over the rows it computes (column sums): partials per block of "
          "rows, added up by a second kernel");
  }
  // What planning passes before this one did to the group's ops
  // (fusion.note), in program order.
  for (Cluster &cluster : clusters)
    for (Operation *op : cluster.ops)
      if (auto note = op->getAttrOfType<StringAttr>(kNoteAttr)) {
        cluster.decisions.push_back(note.str());
        op->removeAttr(kNoteAttr);
      }
}

ResultReaders FormFusionGroupsPass::readersOf(OpResult result,
                                              unsigned home) const {
  ResultReaders r;
  for (OpOperand &use : result.getUses()) {
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    auto c = user ? lookup(user) : std::nullopt;
    if (c && *c == home) {
      r.usedInside = true;
      continue;
    }
    if (!c) {
      if (!r.mustWrite)
        r.writtenFor = describe(user);
      r.mustWrite = true;
      continue;
    }
    r.readers.insert(*c);
  }
  return r;
}

std::pair<bool, SmallVector<OpOperand *>>
FormFusionGroupsPass::recomputeLegality(Operation *producer, OpResult result,
                                        unsigned home, unsigned reader) const {
  const Cluster &rc = clusters[reader];
  // Legal: the producer reads only values from outside its own group,
  // every use in the reader is fusable, and cloning it adds no cycle.
  bool legal = !producer->hasAttr(kMaterializeAttr);
  llvm::DenseSet<Operation *> operandDefs;
  for (Value v : valuesFromOutside(producer)) {
    Operation *def = v.getDefiningOp();
    if (def && clusters[home].ops.contains(def) && !isClonedIntoGroups(def))
      legal = false;
    if (def && !isClonedIntoGroups(def) && !rc.ops.contains(def))
      operandDefs.insert(def);
  }
  SmallVector<OpOperand *> readerUses;
  for (OpOperand &use : result.getUses())
    if (rc.ops.contains(use.getOwner()))
      readerUses.push_back(&use);
    else if (auto c = lookup(block->findAncestorOpInBlock(*use.getOwner()));
             c && *c == reader)
      legal = false; // nested use: keep it simple, materialize
  for (OpOperand *use : readerUses)
    legal &= linalg::areElementwiseOpsFusable(use) &&
             !isContractionGeneric(use->getOwner());
  if (legal && !operandDefs.empty())
    legal = !reachesThroughOutside(
        block, opsOf(reader), operandDefs, [&](Operation *op) {
          auto c = lookup(op);
          if (!c)
            return SmallVector<Operation *>{op};
          return SmallVector<Operation *>(clusters[*c].ops.begin(),
                                          clusters[*c].ops.end());
        });
  return std::make_pair(legal, readerUses);
}

int64_t FormFusionGroupsPass::rereadBytes(Operation *producer,
                                          unsigned reader) const {
  llvm::DenseSet<Value> alreadyRead = externalReads(reader);
  int64_t bytes = 0;
  for (Value v : valuesFromOutside(producer)) {
    Operation *def = v.getDefiningOp();
    if (isClonedIntoGroups(def) || alreadyRead.contains(v))
      continue;
    if (isa<linalg::GenericOp>(producer) &&
        llvm::is_contained(cast<linalg::GenericOp>(producer).getDpsInits(), v))
      continue; // inits of elementwise generics are never read
    bytes += bytesOf(v);
  }
  return bytes;
}

bool FormFusionGroupsPass::recomputeFits(Operation *producer, OpResult result,
                                         unsigned reader) const {
  const Cluster &cl = clusters[reader];
  llvm::DenseSet<Value> reads = externalReads(reader);
  reads.erase(result);
  for (Value v : valuesFromOutside(producer))
    if (!isClonedIntoGroups(v.getDefiningOp()))
      reads.insert(v);
  size_t writes = 0;
  for (Operation *op : cl.ops)
    for (Value r : op->getResults())
      writes += readOutside(block, r,
                            [&](Operation *u) { return cl.ops.contains(u); });
  return reads.size() + writes <= maxBuffers;
}

/// Whether the policy recomputes a value for a reader, and why: `legal`
/// (recomputeLegality), the bytes re-reading its inputs costs and those
/// materializing it costs.
static std::pair<bool, std::string> chooseRecompute(RecomputePolicy policy,
                                                    bool legal, int64_t reread,
                                                    int64_t materialize) {
  switch (policy) {
  case RecomputePolicy::Never:
    return {false, "recompute=never"};
  case RecomputePolicy::Always:
    return {legal,
            legal ? "recompute=always" : "recomputing is not legal here"};
  case RecomputePolicy::Auto:
    return {legal && reread < materialize,
            !legal
                ? "recomputing is not legal here"
                : ("re-reading its inputs costs " + std::to_string(reread) +
                   " B, materializing " + std::to_string(materialize) + " B")};
  }
  llvm_unreachable("unknown recompute policy");
}

void FormFusionGroupsPass::recomputeFor(Operation *producer, OpResult result,
                                        unsigned reader,
                                        ArrayRef<OpOperand *> readerUses) {
  // The clone goes in front of the reader's first use.
  Operation *firstUser = nullptr;
  for (OpOperand *use : readerUses)
    if (!firstUser || use->getOwner()->isBeforeInBlock(firstUser))
      firstUser = use->getOwner();
  OpBuilder b(firstUser);
  Operation *clone = b.clone(*producer);
  for (OpOperand *use : readerUses)
    use->set(clone->getResult(result.getResultNumber()));
  clusters[reader].ops.insert(clone);
  clusterOf[clone] = reader;
}

void FormFusionGroupsPass::decideMultiConsumer(RecomputePolicy policy) {
  // Snapshot: recomputation adds clones to clusters as it goes.
  SmallVector<Operation *> producers;
  for (Cluster &cl : clusters)
    producers.append(cl.ops.begin(), cl.ops.end());

  for (Operation *producer : producers) {
    unsigned home = clusterOf[producer];
    for (OpResult result : producer->getResults()) {
      // Which other groups read this value, and must it be written anyway?
      ResultReaders r = readersOf(result, home);
      // Only a value that also feeds its own group is a multi-consumer
      // decision worth reporting; a plain group output is always written.
      if (r.mustWrite && r.usedInside)
        clusters[home].decisions.push_back(
            "materializes result #" + std::to_string(result.getResultNumber()) +
            " of op " + std::to_string(opIndex(home, producer)) + " (" +
            std::to_string(bytesOf(result)) + " B): read by " + r.writtenFor);

      // Legality first, for every reader: a reader that cannot recompute
      // makes the value be written anyway, whichever reader comes first.
      llvm::DenseMap<unsigned, std::pair<bool, SmallVector<OpOperand *>>>
          legality;
      bool written = r.mustWrite || policy == RecomputePolicy::Never ||
                     producer->hasAttr(kMaterializeAttr);
      llvm::DenseSet<unsigned> tooWide; // (legal, but past max-buffers)
      for (unsigned reader : r.readers) {
        legality[reader] = recomputeLegality(producer, result, home, reader);
        if (legality[reader].first &&
            !recomputeFits(producer, result, reader)) {
          legality[reader].first = false;
          tooWide.insert(reader);
        }
        written |= !legality[reader].first;
      }
      for (unsigned reader : r.readers) {
        auto [legal, readerUses] = legality[reader];
        int64_t materializeBytes =
            (written ? 0 : bytesOf(result)) + bytesOf(result);
        auto [recomputeIt, why] = chooseRecompute(
            policy, legal, rereadBytes(producer, reader), materializeBytes);
        if (producer->hasAttr(kMaterializeAttr)) {
          recomputeIt = false;
          why = "forced by the fusion.materialize directive";
        } else if (tooWide.contains(reader) &&
                   policy != RecomputePolicy::Never) {
          why = "recomputing it there would pass that group's kernel more "
                "than " +
                std::to_string(maxBuffers) + " buffers";
        }
        std::string what = "result #" +
                           std::to_string(result.getResultNumber()) +
                           " of op " + std::to_string(opIndex(home, producer)) +
                           " of group '" + clusters[home].name + "'";
        if (!recomputeIt) {
          written = true;
          clusters[home].decisions.push_back(
              "materializes " + what + " for group '" + clusters[reader].name +
              "': " + why);
          continue;
        }
        recomputeFor(producer, result, reader, readerUses);
        clusters[reader].decisions.push_back("recomputes " + what + ": " + why);
      }
    }
  }
  // Keep each cluster in block order (clones were appended).
  for (Cluster &cl : clusters) {
    SmallVector<Operation *> ordered(cl.ops.begin(), cl.ops.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    cl.ops.clear();
    cl.ops.insert(ordered.begin(), ordered.end());
  }
}

LogicalResult FormFusionGroupsPass::buildGroup(unsigned c, OpBuilder &b) {
  Cluster &cl = clusters[c];
  // A producer whose every external use was recomputed may be left unused.
  SmallVector<Operation *> ops;
  for (Operation *op : cl.ops)
    ops.push_back(op);

  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> cloned; // in dependency order
  std::function<void(Value)> need = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && cl.ops.contains(def))
      return;
    if (!isClonedIntoGroups(def)) {
      inputs.insert(v);
      return;
    }
    if (cloned.contains(def))
      return;
    for (Value operand : valuesFromOutside(def))
      need(operand);
    cloned.insert(def);
  };
  for (Operation *op : ops)
    for (Value v : valuesFromOutside(op))
      need(v);
  SmallVector<Value> results;
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (readOutside(block, r,
                      [&](Operation *u) { return cl.ops.contains(u); }))
        results.push_back(r);

  b.setInsertionPointAfter(ops.back());
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  SmallVector<Value> inputValues(inputs.begin(), inputs.end());
  SmallVector<Attribute> decisions;
  for (const std::string &d : cl.decisions)
    decisions.push_back(b.getStringAttr(d));
  auto group = fusion::GroupOp::create(
      b, ops.front()->getLoc(), resultTypes, inputValues,
      b.getStringAttr(cl.name),
      b.getStringAttr(llvm::any_of(ops, isContractionGeneric) ? "contraction"
                      : llvm::any_of(ops, isRowReductionGeneric)
                          ? "reduction"
                          : "elementwise"),
      decisions.empty() ? ArrayAttr() : b.getArrayAttr(decisions),
      fusion::StrategyAttr());
  Block *body = new Block();
  group.getBody().push_back(body);
  IRMapping mapping;
  for (Value in : inputValues)
    mapping.map(in, body->addArgument(in.getType(), in.getLoc()));
  OpBuilder inner = OpBuilder::atBlockBegin(body);
  for (Operation *def : cloned)
    inner.clone(*def, mapping);
  for (Operation *op : ops)
    inner.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value r : results)
    yielded.push_back(mapping.lookup(r));
  fusion::YieldOp::create(inner, group.getLoc(), yielded);

  for (auto [oldResult, newResult] : llvm::zip(results, group.getResults()))
    oldResult.replaceUsesWithIf(newResult, [&](OpOperand &use) {
      return use.getOwner() != group.getOperation() &&
             !group->isAncestor(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}
