//===- RowKernelEmitter.cpp - reduction groups as one row-per-block kernel ===//
//
// A reduction group computes, for every row (a point of the reductions'
// parallel loops), reductions over the row's columns and elementwise ops over
// either the row space or the full row x column space. The kernel gives each
// row one block:
//
//   for each generic, in program order:
//     reduction:          threads stride over the columns, each folding the
//                         reduction's input expression into a private partial
//                         (starting from the combiner's neutral element);
//                         xor shuffles combine a warp's partials, the warps'
//                         totals meet in a workgroup buffer (one barrier),
//                         and the init value is folded in once
//     row elementwise:    computed by every thread (a scalar per row)
//     full elementwise:   nothing yet: evaluated where it is needed
//   then one column loop stores the group's full-space results, and thread 0
//   stores its row-space results.
//
// A contraction group (a matmul or convolution with its epilogues) uses the
// same evaluation with one thread per output point instead of one block per
// row: each thread folds the whole reduction space itself, no block combine.
// So does a group whose inputs are contiguous along the rows (a sum over
// leading dimensions): consecutive threads read consecutive addresses,
// several loads in flight per thread, and rows too few to fill the GPU are
// split into slices folded by a partials kernel and a finishing kernel
// (SplitLongRows.cpp, which emits each of its kernels with this emitter).
// Where such a group's rows are too few for a thread each (and do not
// split), or its phases store full-space results (a thread per row would
// read its row once per phase), a block takes a tile of consecutive rows
// instead (row tiles, see rowsPerBlock): the block-per-row evaluation with
// each row's columns spread over 1/L of the threads, so warp loads read
// whole sectors and the rows stay in registers.
//
// Full-space intermediates are never stored: each column loop re-evaluates
// them from the group's inputs (re-reading a row the block just read, which
// the caches serve). Values of the same loop iteration are computed once.
//
// A row a block can hold in a few vectors per thread (row-chunks, at most 8
// in a block of 1024 threads, 16 in smaller ones) is loaded once and every
// phase works on registers (register mode); on sm_90 a longer row can be
// spread over the blocks of a thread-block cluster the same way (cluster
// mode: the blocks' totals meet in distributed shared memory, published with
// a cluster barrier, or sent with st.async and awaited on an mbarrier;
// reductions that do not read each other in one exchange, and with fast
// numerics a max and a later sum of exp(e - max) too, each block's sum taken
// against its own max, later exps scaled from the sum's; and a sum and a
// later sum of squares around its mean, each block's around its own).
// With row-smem, a row whose share is too long for a block's registers
// keeps the chunks past them in the block's dynamic shared memory (each
// thread stores its own once, where it loads them, and reads them back in
// later phases: see sharedChunk): one block, or fewer blocks of a cluster
// than registers alone (where the rows' blocks still fill the SMs).
// Longer rows, every row with row-chunks=0, and groups that one pass serves
// (no row-wide result stored, every reduction folded in one pass: registers
// would save no read) stream through memory: the reductions fold
// in passes over the row, each pass taking every reduction whose inputs are
// ready when it starts (independent reductions share one read), 4 vectors
// per thread and trip.
// With fast numerics a pass also folds a max `m` and a sum of exp(e - m) over
// the same `e` together ("online"): the running sum is rescaled by
// exp(m_old - m_new) whenever the running max grows, and once more to the
// row's final max, so softmax reads its row twice and cross-entropy once.
// Likewise a sum of squared deviations sum((e - q)^2) from a row value q
// the same pass computes (a variance around the mean) folds the count, mean
// and centered sum of squares M2 of e - e[row, 0] instead, merging each
// trip's into the running ones (Chan et al.); once q is known the sum is
// M2 + n (mean - q)^2. A streamed layernorm reads its row twice, a variance
// once.
//
//===----------------------------------------------------------------------===//

#include "transforms/RowKernelEmitter.h"
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

namespace {

/// The most 16-byte chunks a thread of a block of `threads` holds in
/// registers without spilling: a block of 1024 threads leaves each 64
/// registers, 8 chunks of 4 and the rest.
int64_t chunksInRegisters(int64_t threads) { return threads > 512 ? 8 : 16; }

/// Streaming aims at this many vectors per thread and pass.
constexpr int64_t kStreamAim = 16;

/// Values of full-space generics: (op, result #, column chunk). Streaming
/// mode keeps one per loop iteration (chunk 0); register mode keeps one for
/// the whole kernel, so later phases reuse what earlier ones computed.
using Cache = llvm::DenseMap<std::tuple<Operation *, unsigned, int64_t>, Value>;

/// The largest divisor of `n` up to `most`, 1 where none above 1.
int64_t largestDivisor(int64_t n, int64_t most) {
  for (int64_t s = std::min(most, n); s > 1; --s)
    if (n % s == 0)
      return s;
  return int64_t(1);
}

class RowKernel {
public:
  /// `threadPerRow`: a thread per row even where the reductions trail
  /// (groups whose inputs are contiguous along the rows, see
  /// contiguousAlongRows).
  /// `alongRows`: the inputs are contiguous along the rows (see
  /// contiguousAlongRows), and `rowsFill`: there are rows enough for a
  /// thread each on every SM. Such a group runs a thread per row when one
  /// pass over its columns serves it (nothing full-space to store), else a
  /// block per tile of consecutive rows (see rowsPerBlock).
  RowKernel(ArrayRef<linalg::GenericOp> generics, StringRef name,
            const RowKernelOptions &options, bool threadPerRow,
            bool alongRows = false, bool rowsFill = false)
      : generics(generics), name(name), threads(options.threads),
        chunksPerThread(options.chunksPerThread), foldRows(options.foldRows),
        maxCluster(options.maxCluster), occupancy(options.occupancy),
        prefetchRows(options.prefetchRows),
        persistClusters(options.persistClusters), online(options.online),
        asyncExchange(options.asyncExchange), shiftChunks(options.shiftChunks),
        shiftStreams(options.shiftStreams),
        jointExchange(options.jointExchange),
        sharedRowBytes(options.sharedRowBytes), smCount(options.smCount),
        exactThreads(options.exactThreads),
        contraction(llvm::any_of(
            generics,
            [&](linalg::GenericOp g) { return contractionIn(g, generics); })),
        perThread(threadPerRow || contraction ||
                  llvm::any_of(generics,
                               [](linalg::GenericOp g) {
                                 // Reductions over leading dimensions (a thread
                                 // per output column keeps the loads
                                 // coalesced).
                                 return g.getNumReductionLoops() > 0 &&
                                        !kfuse::reductionsTrail(g);
                               })),
        alongRows(alongRows), rowsFill(rowsFill), packRows(options.packRows),
        tileRows(options.tileRows), tripChunks(options.tripChunks),
        peelTrips(options.peelTrips) {}

  /// Loop indices of `g` in its own loop order from row indices and column
  /// indices (zeros when only the row part matters).
  SmallVector<Value> orderLoops(OpBuilder &b, Location loc, linalg::GenericOp g,
                                ArrayRef<Value> rowIdx,
                                ArrayRef<Value> colIdx = {}) {
    if (g.getNumReductionLoops() == 0)
      return SmallVector<Value>(rowIdx.begin(), rowIdx.end());
    SmallVector<Value> idx;
    unsigned r = 0, c = 0;
    for (utils::IteratorType it : g.getIteratorTypesArray()) {
      if (it == utils::IteratorType::parallel)
        idx.push_back(rowIdx[r++]);
      else if (c < colIdx.size())
        idx.push_back(colIdx[c++]);
      else
        idx.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    }
    return idx;
  }

  LogicalResult emit();

  /// Column sums beside the row reductions (see emitRowKernel): `terms`, a
  /// [rows..., columns...] buffer a full-space op of the kernel writes, is
  /// summed over the rows by a later kernel. In register mode a block takes
  /// a run of consecutive rows and folds their terms into registers, its
  /// columns' partial sums (with `kind`), stored as one row of `partial`
  /// ([blocks, columns...], allocated by emit()); otherwise every term is
  /// stored and `partial` is `terms` (what it is until emit() decides).
  /// A column sum whose terms read nothing the kernel computes
  /// (`independent`: the bias gradient dy.sum(0)) is left to the later
  /// kernel where the terms would be stored (`partial` null): it reads its
  /// inputs as cheaply as it would read the terms.
  struct ColumnSum {
    Value terms;
    gpu::AllReduceOperation kind;
    bool independent;
    Value partial;
    /// Leading row dimensions the sum keeps (batched: y.mean(1) of y
    /// [b, s, d] keeps b); `partial` is then [kept..., blocks of a kept
    /// index, columns...].
    unsigned kept = 0;
  };
  SmallVector<ColumnSum> columnSums;
  gpu::LaunchOp launch() const { return launchOp; }

  /// The rows and columns of a kernel without reductions (the full-space
  /// results of a split group, see splitLongRows): its generics run over
  /// rows x columns.
  RowKernel &withSpace(ArrayRef<int64_t> rows, ArrayRef<int64_t> cols) {
    rowShape.assign(rows.begin(), rows.end());
    colShape.assign(cols.begin(), cols.end());
    return *this;
  }

private:
  ArrayRef<linalg::GenericOp> generics;
  StringRef name;
  int64_t threads;
  int64_t chunksPerThread; // register mode: chunks each thread aims for
  int64_t foldRows;        // column sums: most rows a block folds (0: auto)
  int64_t maxCluster;      // most blocks a row may be spread over (0: one)
  int64_t occupancy; // blocks of a block-per-row kernel an SM holds (1, 2, 4)
  int64_t prefetchRows; // rows on whose share to ask L2 for (0: none)
  /// Persistent kernel: the most clusters (or blocks, without clusters) its
  /// launch has (0: none; -1: as many as the rows), which the runtime cuts
  /// to those the device holds at once.
  int64_t persistClusters;
  /// Streaming mode may fold `m = max(e)` and `s = sum(exp(e - m))` in one
  /// pass over the row, rescaling `s` as `m` grows (fast numerics only: the
  /// sum is then of differently rounded terms).
  bool online;
  /// Cluster mode: blocks send their totals into every block's slots with
  /// st.async, each arrival completing the receiver's mbarrier, instead of
  /// publishing them with a cluster barrier (see clusterCombine).
  bool asyncExchange;
  /// Rows whose width is no multiple of the widest vector may take shifted
  /// chunks (see `shifted`).
  bool shiftChunks, shiftStreams;
  bool jointExchange; // (see RowKernelOptions)
  int64_t sharedRowBytes; // (see RowKernelOptions)
  /// Register mode with rows in shared memory: chunks from `regChunks` on
  /// are kept in dynamic shared memory (`chunks` = `regChunks`: none). Each
  /// (buffer, map) of the row's inputs that such a chunk loads gets a slot
  /// (`sharedSlots`, a view of [chunks - regChunks][threads * width]
  /// elements), written once by the phase that first loads the chunk and
  /// read again by every later phase; each thread reads only what it
  /// wrote (no barrier). Computed values of those chunks are not kept
  /// across phases either (see endPhase).
  int64_t regChunks = 0;
  int64_t sharedSlotsAllowed = 0; // slots the budget holds
  llvm::DenseMap<std::pair<void *, void *>, Value> sharedSlots;
  llvm::DenseSet<std::tuple<void *, void *, int64_t>> inShared;
  int64_t sharedBytes = 0; // the launch's dynamic shared memory
  int64_t sharedLimit = 0; // the most it may take
  Block *phaseBlock = nullptr;
  /// The row's inputs a block may keep in shared memory: distinct (buffer,
  /// map) pairs of group inputs that full-space generics read along the
  /// innermost column and some row dimension; `bytes`: their element
  /// bytes summed (what a column of them takes).
  int64_t sharedRowInputs(int64_t &bytes);
  /// A register-mode load of `chunk`: `fromMemory()` (a load from the
  /// buffer) where the chunk is held in registers, or the first time a
  /// chunk kept in shared memory is read (then stored to its slot), else a
  /// load from the slot.
  Value sharedChunk(OpBuilder &b, Location loc, Value buffer, AffineMap map,
                    int64_t chunk, llvm::function_ref<Value()> fromMemory);
  /// Whether a load through `map` is of the row's own data (see
  /// sharedRowInputs).
  bool heldInShared(AffineMap map) const;
  Value dynamicShared; // the launch's gpu.dynamic_shared_memory
  Value sharedThread;  // the column thread a shared slot is indexed by
  /// Forgets the chunks in shared memory's values at the end of a phase
  /// (`cache`: the kernel's), so that the next phase reloads them.
  void endPhase(Cache &cache);
  /// The SMs the launch shapes aim to fill.
  int64_t smCount;
  int64_t exactThreads; // (see RowKernelOptions)
  /// A contraction (matmul, convolution): inputs reused across rows.
  bool contraction;
  /// One thread per row (contractions, reductions of inputs contiguous
  /// along the rows) or one block (or cluster) per row.
  bool perThread;
  bool alongRows, rowsFill;
  /// Row tiles (inputs contiguous along the rows, a block per row): a block
  /// holds `rowsPerBlock` consecutive rows, thread `tid` works on row
  /// `tid % rowsPerBlock` of the tile, at the columns of column thread
  /// `tid / rowsPerBlock`, so the lanes of a warp that load one column of
  /// the tile's rows read whole sectors (a block per row would take a
  /// sector per value). Where the rows do not divide into tiles, the last
  /// tile's extra threads compute the last row again (they take part in
  /// the block's barriers) and store nothing: `rowInside`.
  int64_t rowsPerBlock = 1;
  /// Packed rows (a block per row whose row one warp covers): a block holds
  /// `packedRows` rows, warp w of block b row b * packedRows + w, its lanes
  /// the row's column threads; reductions end at the warp (no workgroup
  /// buffer, no barrier). Where the rows do not divide into blocks, the
  /// last block's extra warps compute the last row again and store
  /// nothing: `rowInside`. `packRows`: RowKernelOptions::packRows.
  int64_t packRows, packedRows = 1;
  int64_t tileRows; // (see RowKernelOptions; rowsPerBlock is the tile's)
  int64_t tripChunks; // (see RowKernelOptions)
  bool peelTrips;     // (see RowKernelOptions)
  Value rowInside;
  /// Packed column sums: with column sums folded over runs of rows, a warp
  /// a row and `packedRows` rows a block, warp w of block b on rows
  /// (b * run + i) * packedRows + w of its run (i < run); the warps'
  /// partials are added up through shared memory at the end of the run and
  /// stored as the block's. `packWarp`: w.
  bool packColumnSums = false;
  Value packWarp;
  /// Cluster mode (sm_90): a row too long for one block's registers is
  /// spread over the `cluster` blocks of a thread-block cluster, each holding
  /// `colsPerBlock` columns from `colBase` on; reductions combine the
  /// blocks' totals through distributed shared memory (`slots`, one
  /// workgroup buffer per reduction, read with mapa from every block).
  int64_t cluster = 1, colsPerBlock = 0;
  Value colBase, rank;
  /// The kernel's launch (block reductions add workgroup buffers to it) and
  /// its threads per block.
  gpu::LaunchOp launchOp;
  int64_t blockThreads = 0;
  SmallVector<Value> slots;
  /// Async exchange: each reduction's mbarrier (its slots hold one value
  /// per block), and whether the cluster barrier that makes every block's
  /// initialized mbarriers visible has been waited on.
  SmallVector<Value> mbars;
  /// The inputs a row kernel may ask for or copy whole shares of: global
  /// buffers in row-major order read at every column through the identity
  /// map, in chunks of whole 16-byte vectors, over rows and shares that are
  /// whole 16-byte pieces. Views of one buffer that the kernel reads
  /// through the identity map each (a group norm's of x) address the same
  /// bytes: one input, every (view, map) of it in `reads`.
  struct RowMajorInput {
    Value buffer;
    unsigned bytes; // (an element's)
    SmallVector<std::pair<Value, AffineMap>> reads;
  };
  /// Persistent kernel (persistClusters != 0): the staged inputs' shares in
  /// shared memory and their mbarrier; with clusters, the exchanges' slots
  /// and mbarriers twice over, by the parity of the block's row count.
  struct Persist {
    bool on = false;
    SmallVector<RowMajorInput> inputs; // (staged)
    SmallVector<Value> views;  // [chunks][threads] vectors of each one's share
    Value bar;                 // the staging mbarrier (workgroup, one i64)
    Value buffer;              // slots and exchange mbarriers: 0 or 1
    Value phase;               // exchange mbarriers' phase parity (i32)
    Value stageParity;         // the staging mbarrier's phase parity (i32)
  } persist;
  /// Clusters of a persistent kernel's launch: the option's, or one a row.
  int64_t persistGrid() const {
    return persistClusters > 0 ? persistClusters : totalRows;
  }
  /// Persistent kernel: where row `row` exists, thread 0 expects the staged
  /// inputs' bytes on the staging mbarrier and copies each one's share of
  /// the row into its view (a proxy fence first: the async copy overwrites
  /// what the threads read), with cp.async.bulk.
  void stageRow(OpBuilder &b, Location loc, Value tid, Value row);
  /// The body of `if (tid == 0 && row < rows)`: thread 0's work on a row
  /// that exists (a later row's copy or prefetch).
  OpBuilder firstThreadOnRow(OpBuilder &b, Location loc, Value tid, Value row);
  /// Sets this kernel's entry of the host function's dictionary `attr`
  /// (kernel name to `value`), which fusion-cluster-dims moves onto the
  /// outlined kernel or its launch.
  void setKernelHint(FunctionOpInterface func, StringRef attr, Attribute value);
  /// Waits (every thread) for the phase of parity `parity` of the mbarrier
  /// at `address` (a constant parity when `parity` is null: 0).
  void waitPhase(OpBuilder &b, Location loc, Value address, Value parity);
  bool clusterReady = false;
  unsigned nextSlot = 0;
  /// The last value a cluster combine computed from other blocks' slots.
  Value lastCombined;
  /// Prefetch (prefetchRows > 0, register mode, a block or cluster a row):
  /// the kernel's row, and whether the first block combine has asked for
  /// the later row yet.
  struct {
    Value row;
    bool done = false;
  } prefetch;
  /// The rows and the columns of a row (set by emit()); the columns of the
  /// block's share of it (from colBase on in cluster mode, else all).
  int64_t totalRows = 0, totalCols = 0;
  /// The rows of one index of the rows' leading `kept` dimensions.
  int64_t rowsPast(unsigned kept) const;
  /// Column sums fold runs of rows within one index of the rows' leading
  /// dimensions they keep (a batched sum): runs divide this, the rows of
  /// one such index (all rows where no sum keeps any).
  int64_t rowSegment() const;
  /// The kernel's shape, chosen by emit() in steps before it emits
  /// anything. Inputs contiguous along the rows: a thread a row or row
  /// tiles (`rowsPerBlock`).
  void chooseRowTiles();
  /// The vector width and whether chunks are shifted (see `shifted`), for
  /// a block (or cluster) a row; `passes` as for chooseThreads.
  void chooseVectors(ArrayRef<SmallVector<linalg::GenericOp>> passes);
  /// A block (or cluster) a row: the vector width and shifted chunks
  /// (chooseVectors), register or streaming mode (`chunks`), the threads,
  /// a cluster, chunks in shared memory. `passes`: planPasses()'s.
  void chooseThreads(ArrayRef<SmallVector<linalg::GenericOp>> passes);
  /// What a block (or cluster) a row may hold, as chooseThreads weighs it
  /// (after chooseVectors): the row's `span` of columns (virtual ones
  /// where shifted), blocks of at most `mostThreads` threads (a cluster's
  /// `clusterThreads`), `rowOccupancy` blocks an SM, and the inputs whose
  /// chunks may go to shared memory past the registers (`heldInputs` of
  /// `heldBytes` bytes an element; 0: none).
  struct ThreadBudget {
    explicit ThreadBudget(RowKernel &k) : k(k) {}
    RowKernel &k;
    int64_t span = 0, rowOccupancy = 1, mostThreads = 1024,
            clusterThreads = 1024, heldInputs = 0, heldBytes = 0;
    /// Threads and chunks per thread for `cols` columns per block, aiming
    /// at `aim` chunks per thread, at most `most` threads.
    std::pair<int64_t, int64_t> shape(int64_t cols, int64_t aim,
                                      int64_t most = 1024) const;
    /// Each block's share of a row over a cluster of n: whole vectors (of
    /// the virtual columns where shifted, the last block's share ragged).
    int64_t sharePerBlock(int64_t n) const;
    /// Chunks a thread of a block of `threads` keeps in registers.
    int64_t room(int64_t threads) const;
    /// Chunks a thread of a block of `threads` may keep in shared memory
    /// (its block's share of the budget: 1024 / threads blocks an SM).
    int64_t sharedRoom(int64_t threads) const;
    /// Chunks a thread keeps in registers where the rest go to shared
    /// memory (the others' loads, stores and reloads need registers too),
    /// fewer in a cluster's `blocks`, whose exchange needs some more: from
    /// ptxas's spills over softmaxes, log-softmaxes, layer norms with and
    /// without weights and RMS norms of 40000 to 500000 floats, both
    /// exchanges and strict numerics: one block, 8 in registers spilled up
    /// to 80 bytes a thread, 7 8 bytes, 6 none; clusters, 8 up to 40
    /// bytes, 6 and 7 a few, 5 none.
    int64_t sharedRegs(int64_t threads, int64_t blocks) const;
    /// A cluster's blocks: 64 registers a thread (see kClusterRoom).
    int64_t clusterRoom(int64_t threads) const;
  };
  ThreadBudget threadBudget();
  /// Whether column sums beside rows in registers (not `streams`) pack
  /// several rows a block (`packColumnSums`): one element type, runs of
  /// an even number of rows.
  bool packsColumnSums(bool streams) const;
  /// A row too long for the registers of a block of `t` threads (`chunks`
  /// a thread): the cluster of blocks it spreads over (`cluster`), with
  /// chunks in shared memory where that takes fewer blocks.
  void chooseCluster(const ThreadBudget &budget, int64_t t);
  /// The block's threads (`threads`) and chunks, from the `t` threads
  /// shaped for the row: streaming (`streams`, or a row too long for
  /// registers and shared memory), a cluster's share, or registers with
  /// chunks past them in shared memory (`regChunks`).
  void settleThreads(const ThreadBudget &budget, bool streams, int64_t t);
  /// Row tiles (rowsPerBlock above 1): the column threads of a tile,
  /// scalars, in registers or streamed (`streams`).
  void chooseTileThreads(bool streams);
  /// The threads of a row (returned) and the rows a block packs.
  int64_t chooseBlockThreads();
  /// Column sums: the run of rows a block folds (returned; 1: none), and
  /// whether its warps pack rows (`packColumnSums`). `t`: the threads of
  /// a row.
  int64_t chooseRun(int64_t t);
  /// Whether the kernel is persistent (`persist`).
  void choosePersist(int64_t t);
  /// What chooseShape() decided: the passes a streaming kernel makes
  /// (planPasses()), `blocks` blocks of `threads` threads a row, each
  /// folding a run of `run` rows into its column sums' partials (1: none).
  struct LaunchShape {
    SmallVector<SmallVector<linalg::GenericOp>> passes;
    int64_t blocks = 0, threads = 0, run = 1;
  };
  /// The kernel's shape, every choice made before anything is emitted
  /// (the rows and columns, row tiles, threads, vectors, clusters, runs,
  /// persistence): the members these steps set, and the launch.
  LaunchShape chooseShape();
  /// Column sums folded over runs of rows: a buffer of partials each, a
  /// row of them a block (`c.partial`; the sum's own where not folded).
  void allocateColumnPartials(OpBuilder &b, Location loc);
  /// Where a thread of the launch works: its row (of the block, before
  /// any run or persistent loop), its index among the row's threads
  /// (`tid`, packed rows' lane), the column thread and how many there are
  /// (the row's first: 0), and, streaming, its first column and the step
  /// between its columns.
  struct ThreadPlace {
    Value row, tid, colThread, colStart, colStep;
    int64_t colThreads = 1;
  };
  /// The thread's place (see ThreadPlace) in the launch's blocks of `t`
  /// threads a row: cluster ranks, packed rows, a thread per row (whose
  /// guard the builder is left in), row tiles. Also initializes the
  /// kernel's mbarriers.
  ThreadPlace placeThread(OpBuilder &kb, Location loc, gpu::LaunchOp launch,
                          int64_t t);
  /// Column sums: the loop over the block's run of `run` rows, carrying
  /// the partials (`columnPartials`); `row` becomes the run's current row
  /// and the builder is left in the loop.
  scf::ForOp beginRun(OpBuilder &kb, Location loc, Value &row, int64_t run);
  /// The row's indices for `row`, and what the row's loads and shifted
  /// chunks start from (rowLoads, prefetch, rowStart, rowShift).
  SmallVector<Value> beginRow(OpBuilder &kb, Location loc, Value row);
  /// The row's code, register or streaming mode, and its row outputs.
  LogicalResult emitRow(OpBuilder &kb, Location loc, gpu::LaunchOp launch,
                        const ThreadPlace &at, ArrayRef<Value> rowIdx,
                        ArrayRef<SmallVector<linalg::GenericOp>> passes);
  /// Ends the launch's body: a cluster's exit barrier, the terminator.
  void endLaunch(gpu::LaunchOp launch, Location loc);
  /// The kernel's launch: a grid of `blocks` blocks of `t` threads a row
  /// (`packedRows` rows a block), a cluster's exchange slots, and the hints
  /// for ptxas and the runtime.
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, int64_t blocks,
                             int64_t t);
  /// The mbarriers async copies complete: the cluster exchange's (see
  /// initExchange) and a persistent kernel's staging one, the views of
  /// shared memory the staged inputs land in, and the copy of the first
  /// row's shares.
  void initMbarriers(OpBuilder &kb, Location loc, Value tid, Value row,
                     int64_t t);
  /// Persistent kernel: the loop over the rows of a cluster (or block),
  /// `row` its current one; the kernel's body goes in it (the builder's
  /// insertion point). Returns the loop.
  Operation *beginPersistLoop(OpBuilder &kb, Location loc, Value tid,
                              Value &row);
  /// Streaming mode: each reduction's passes over the row (a thread
  /// folding the columns from `colStart` on, `colStride` apart) and its
  /// row total, and the row-space generics' values, into `rowOutputs`
  /// (buffer, value).
  LogicalResult
  emitStreamingReductions(OpBuilder &kb, Location loc, Value tid,
                          ArrayRef<Value> rowIdx, Value colStart,
                          int64_t colStride,
                          ArrayRef<SmallVector<linalg::GenericOp>> passes,
                          SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Streaming mode: the full-space results no pass stored, in one loop
  /// over the columns from `colStart` on, `colStep` apart.
  LogicalResult storeFullSpaceOutputs(OpBuilder &kb, Location loc,
                                      ArrayRef<Value> rowIdx, Value colStart,
                                      Value colStep);
  /// Stores the row's values (`rowOutputs`: buffer, value) from the row's
  /// first column thread (the cluster's first block).
  void storeRowOutputs(OpBuilder &kb, Location loc, Value colThread,
                       ArrayRef<Value> rowIdx,
                       ArrayRef<std::pair<Value, Value>> rowOutputs);
  /// Column sums folded over a run of rows (`runLoop`, block `runBlock`):
  /// each thread's partials, combined across the block's groups where
  /// packed, stored as the block's row of each sum's partials.
  void storeColumnPartials(OpBuilder &kb, Location loc, scf::ForOp runLoop,
                           Value runBlock, Value tid, int64_t t);
  int64_t shareCols() const { return cluster > 1 ? colsPerBlock : totalCols; }
  SmallVector<RowMajorInput> rowMajorInputs();
  /// The address of `in`'s share of row `row` (an index).
  Value shareAddress(OpBuilder &b, Location loc, const RowMajorInput &in,
                     Value row);
  /// A view of type `type` of the launch's dynamic shared memory, after
  /// what earlier views took (sharedBytes, which grows by `bytes`).
  Value sharedView(Location loc, MemRefType type, int64_t bytes);
  /// Asks L2 for the share of the row `prefetchRows` on of every input the
  /// kernel holds in registers (thread 0, once: at the first block combine,
  /// when this thread's loads have landed).
  void prefetchLaterRow(OpBuilder &b, Location loc, Value tid);
  /// Combines a block's total over the cluster: every block gets the same
  /// value (the same order of combination everywhere).
  Value clusterCombine(OpBuilder &b, Location loc, Value tid, Value total,
                       gpu::AllReduceOperation kind);
  /// Every block's `totals` (the next totals.size() slots, in one exchange),
  /// by cluster rank: [rank][i].
  SmallVector<SmallVector<Value>> clusterGather(OpBuilder &b, Location loc,
                                                Value tid,
                                                ArrayRef<Value> totals);
  SmallVector<SmallVector<Value>>
  asyncClusterGather(OpBuilder &b, Location loc, Value tid,
                     ArrayRef<Value> totals);
  /// Async exchange: thread 0 initializes the mbarriers, every thread
  /// arrives at the cluster barrier the first exchange waits on.
  void initExchange(OpBuilder &b, Location loc, Value tid);
  /// Combines the threads' partials of a block (and, in cluster mode, the
  /// blocks' totals): every thread gets the row's total. Integers narrower
  /// than 32 bits (booleans of an "all" or "any") travel as i32, the width
  /// warp shuffles and the cluster slots hold.
  /// (`acrossCluster` false: the block's total alone, still in the type it
  /// is combined in (i32 for narrower integers), for an exchange the caller
  /// makes.)
  Value blockCombine(OpBuilder &b, Location loc, Value tid, Value partial,
                     gpu::AllReduceOperation kind, bool acrossCluster = true);
  /// Register mode: each thread owns `chunks` chunks of `width` consecutive
  /// columns of its row, unrolled, so values stay in registers across
  /// phases. Streaming mode (chunks == 0) loops over the columns instead.
  int64_t width = 1, chunks = 0;
  SmallVector<int64_t> rowShape, colShape;
  /// Register mode: input vectors already loaded, by (buffer, map, chunk).
  llvm::DenseMap<std::tuple<void *, void *, int64_t>, Value> loaded;
  /// Register mode over a ragged row: whether each chunk lies in the row
  /// (a chunk past its end loads nothing; its lanes are masked).
  SmallVector<Value> chunkInside;
  /// Shifted chunks (register mode, a cluster's blocks each holding a
  /// whole-vector share of the virtual columns, and streaming mode, over
  /// one column loop of n columns whose rows do not all start on a boundary
  /// of the widest vector): row r of a buffer in the rows' layout (see
  /// `layout`) starts `rowShift` = (offset + r's position) mod width
  /// elements past a vector boundary (r's position: r * n in an
  /// identity-layout [rows..., n] buffer; r * w + s * len in a ragged
  /// split's view [rows, slices, len] of rows of an odd width w, len a
  /// multiple of 8), so the chunks follow memory, not the row. Virtual
  /// column v (what the threads step over, 0 to n + rowShift) is column
  /// v - rowShift. Every chunk is one
  /// aligned vector load, the row's first and last ones reading into the
  /// rows beside it (their lanes outside the row masked), but for the
  /// buffer's last chunk where it passes the buffer's end (loaded lane by
  /// lane); a chunk wholly in the row is one aligned vector store, the
  /// row's first and last are stored lane by lane (softmax over 50257
  /// logits: 4 floats per access, not 1). Decided by emit().
  bool shifted = false;
  /// (the row's first element's position in the rows' layout, past its
  /// offset, and its shift)
  Value rowStart, rowShift;
  /// A chunk of shifted mode, recorded by the column value it is indexed
  /// with (negative at the row's head).
  struct ShiftedChunk {
    SmallVector<Value> rowIdx;
    /// Every lane in the row: one aligned vector store.
    Value whole;
    /// Every lane in the buffer: one aligned vector load.
    Value inBuffer;
    /// vector<width x i1>: the lanes in the row.
    Value lanes;
    /// Each lane's column clamped into the row (lane-by-lane loads).
    SmallVector<Value> laneCols;
  };
  llvm::DenseMap<Value, ShiftedChunk> shiftedChunks;
  /// The phase being emitted: per chunk, its lanes inside the row (i1 or
  /// vector<width x i1>; null: all of them), where lanes past the row end
  /// are evaluated on padding. A fusion.guard holds in the others.
  SmallVector<Value> liveChunks;
  /// Streaming mode's shifted loads, by (buffer, map, chunk column).
  llvm::DenseMap<std::tuple<void *, void *, void *>, Value> streamedLoads;
  /// Streaming mode, a block per row, over rows the trips do not divide
  /// (not shifted): whether each entry of the trip lies in the row (null:
  /// always). An entry past the row's end loads nothing (it had loaded the
  /// row's first column again: cross-entropy over 50257 logits asked for 6%
  /// more bytes, from cache).
  SmallVector<Value> entryInside;
  /// Their loads, by (buffer, map, entry): the loop indices and the value.
  std::map<std::tuple<void *, void *, int64_t>,
           std::pair<SmallVector<Value>, Value>>
      entryLoads;
  /// Loads of what the row's indices alone address (see valueAt): made in
  /// `block` after `after` (at its start if null), where the row's indices
  /// `rowIdx` are computed, by (buffer, map).
  struct {
    Block *block = nullptr;
    Operation *after = nullptr;
    SmallVector<Value> rowIdx;
    llvm::DenseMap<std::pair<void *, void *>, Value> values;
  } rowLoads;
  /// The rows' layout in memory: the strides (in elements) and offset of
  /// the first buffer the group reads or writes at (row, column) through
  /// the row's and column's own indices, a static strided [rows...,
  /// columns...] (found by findLayout before the kernel's shape is
  /// chosen). Identity unless that buffer is a view: a ragged split's
  /// slices, a subview of rows of an odd width viewed as [rows, slices,
  /// len], whose rows start wherever row * width leaves them. Where rows
  /// start decides the vector width (see rowAlignment) and the shift of
  /// shifted chunks.
  struct {
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    bool identity = true;
  } layout;
  void findLayout();
  /// The widest vector (up to 8 elements) every row's start in the rows'
  /// layout is aligned to: a power of two dividing the innermost extent,
  /// the offset and each stride of a dimension of more than one index.
  int64_t rowAlignment() const;
  /// Whether `type`'s shape is [rows..., columns...].
  bool hasRowShape(MemRefType type) const {
    return type.getRank() == int64_t(rowShape.size() + colShape.size()) &&
           type.getShape().take_front(rowShape.size()) == ArrayRef(rowShape) &&
           type.getShape().drop_front(rowShape.size()) == ArrayRef(colShape);
  }
  /// Whether `type` is the rows' layout: [rows..., columns...] with the
  /// layout's strides (of the dimensions of more than one index) and an
  /// offset as far from a boundary of 8 elements as the layout's.
  bool isRowLayout(Type type) const {
    auto m = dyn_cast<MemRefType>(type);
    if (!m || !hasRowShape(m))
      return false;
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (!kfuse::hasStaticStrides(m, /*unitInnermost=*/true) ||
        failed(m.getStridesAndOffset(strides, offset)) ||
        (offset - layout.offset) % 8 != 0)
      return false;
    for (int64_t d = 0; d < m.getRank(); ++d)
      if (m.getDimSize(d) != 1 && strides[d] != layout.strides[d])
        return false;
    return true;
  }
  /// Whether an op of the group reads or writes a buffer in the rows'
  /// layout at (row, column): what shifted chunks move as aligned vectors.
  bool readsRowLayout() const {
    for (linalg::GenericOp g : generics)
      for (OpOperand &o : g->getOpOperands())
        if (isRowLayout(o.get().getType()) &&
            g.getMatchingIndexingMap(&o).isIdentity())
          return true;
    return false;
  }
  /// Whether every buffer of the rows' shape the group reads or writes at
  /// (row, column) is in the rows' layout: what shifting asks, as a buffer
  /// whose rows start elsewhere in their vectors would go lane by lane (a
  /// softmax over x[:, 1:1026] of x[4, 1027] stored its rows of 1025 a
  /// float a request, 4x the sectors).
  bool allInRowLayout() {
    auto fits = [&](linalg::GenericOp g, OpOperand &o) {
      auto m = dyn_cast<MemRefType>(o.get().getType());
      return !m || !hasRowShape(m) ||
             !g.getMatchingIndexingMap(&o).isIdentity() || isRowLayout(m);
    };
    // (inputs from memory, results stored: intermediates stay in registers)
    for (linalg::GenericOp g : generics)
      for (OpOperand *in : g.getDpsInputOperands())
        if (!writerBefore(in->get(), position[g]) && !fits(g, *in))
          return false;
    for (auto [g, i] : fullSpaceOutputs())
      if (!fits(g, *g.getDpsInitOperand(i)))
        return false;
    return true;
  }
  /// Records the shifted chunk at column `col` of row `rowIdx` and returns
  /// its lane mask: the lanes of `maskCol` (default `col`) in the row. (A
  /// streaming trip's entry past the row's end loads at a column in the row
  /// instead, with every lane masked.) `head` / `tail`: whether the chunk
  /// may start before the row / end after it (if neither, it is whole: no
  /// tests).
  Value shiftedChunk(OpBuilder &b, Location loc, ArrayRef<Value> rowIdx,
                     Value col, int64_t numCols, bool head, bool tail,
                     Value maskCol = Value());
  /// Whether `buffer` read through `map` at loop indices `loopIdx` (row
  /// indices, then the column) is the shifted layout itself: an
  /// identity-layout [rows..., n] buffer indexed by `chunk`'s row and the
  /// column, so that its chunks are aligned vectors.
  bool alignedWithRows(Value buffer, AffineMap map, ArrayRef<Value> loopIdx,
                       const ShiftedChunk &chunk) const;
  /// Column sums folded in registers: the running partials, chunk k of
  /// column sum i at i * chunks + k (loop-carried over the block's rows).
  bool accumulating = false;
  SmallVector<Value> columnPartials;
  /// The rows a block's partials fold (1 where not accumulating).
  int64_t rowsPerPartial = 1;

  Type vectorOf(Type t) const {
    return width == 1 ? t : VectorType::get({width}, t);
  }
  bool vectorized(ArrayRef<Value> loopIdx) const {
    return width > 1 && loopIdx.size() == rowShape.size() + colShape.size();
  }
  Value splat(OpBuilder &b, Location loc, Value scalar) {
    return width == 1 ? scalar
                      : vector::BroadcastOp::create(
                            b, loc, vectorOf(scalar.getType()), scalar)
                            .getResult();
  }
  Value loadFromMemory(OpBuilder &b, Location loc, Value buffer, AffineMap map,
                       ArrayRef<Value> loopIdx);
  /// loadFromMemory where `inside` holds, else zeros (no load).
  Value loadWhere(OpBuilder &b, Location loc, Value inside, Value buffer,
                  AffineMap map, ArrayRef<Value> loopIdx);
  /// Whether a chunk's `width` columns of `type`, at loop indices whose
  /// innermost (`inner`, a multiple of the width) only the map's last
  /// result reads, are one aligned vector: that result is `inner` itself,
  /// and the buffer's offset and the stride of each dimension but the
  /// innermost (of more than one index) are multiples of the width (a
  /// ragged split's slices, a subview of the row at a multiple of 8 viewed
  /// as [slices, len]: over one row, or rows whose width is such a
  /// multiple).
  bool alignedColumns(MemRefType type, AffineMap map, unsigned inner) const {
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != inner)
      return false;
    // (a strided view, a ragged split's slices: its offset and every
    // stride of a dimension it moves along too)
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || offset % width != 0)
      return false;
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      if (type.getDimSize(d) != 1 && strides[d] % width != 0)
        return false;
    return true;
  }
  /// Folds a reduction's block (or thread) total into its init value once,
  /// and records the row value: acc' = init (op) total.
  LogicalResult
  finishReduction(OpBuilder &kb, Location loc, linalg::GenericOp g,
                  const Combiner &comb, Value total, ArrayRef<Value> initIdx,
                  SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Evaluates a row-space generic for the current row.
  LogicalResult evalRowSpace(OpBuilder &kb, Location loc, linalg::GenericOp g,
                             ArrayRef<Value> rowIdx,
                             SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Stores `value` (a vector of `width` columns, or a scalar) into output
  /// `buffer` through `map` at loop indices `idx`.
  void storeColumns(OpBuilder &b, Location loc, Value value, Value buffer,
                    AffineMap map, ArrayRef<Value> idx);
  /// (`colThread` of `t` column threads: `tid` itself and the block's
  /// threads but in row tiles)
  LogicalResult
  emitRegisterPhases(OpBuilder &kb, Location loc, Value tid, Value colThread,
                     ArrayRef<Value> rowIdx, int64_t t, int64_t numCols,
                     SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Streaming mode folds reductions in passes: one column loop for every
  /// reduction whose inputs are ready when the loop starts, `batch` vectors
  /// per thread and trip. Each reduction's block total is computed in its
  /// pass and folded into its init value at its turn in program order.
  static constexpr int64_t batch = 4;
  /// A thread per row (not a contraction): loads in flight per thread and
  /// trip, 8 and more (up to 32) while the rows are too few for about 8192
  /// loads in flight per SM.
  int64_t threadBatch = 8;
  /// A thread per row: the columns of one trip over `numCols`. Trips that
  /// do not divide the row load its first column again past its end (a
  /// select, not a branch): 16 a trip over 17 columns loaded 32, and the
  /// column the shift of a centered sum reads a 33rd, where one trip of 17
  /// loads 17 (the shift's load is the first entry's: a ragged split along
  /// rows read its input 1.94 times, now once). So: the whole row in one
  /// trip up to 1.5 x `threadBatch` columns; else as few trips as
  /// `threadBatch` a trip takes, as even as they can be (100 columns in 7
  /// trips of 15, not 16: 5 columns past the end, not 12; 392 in 25 of 16,
  /// not 28 of 14, each trip a round trip to memory).
  int64_t perThreadTrip(int64_t numCols) const {
    int64_t most = std::max<int64_t>(1, threadBatch);
    if (numCols <= most + most / 2)
      return std::max<int64_t>(1, numCols);
    int64_t trips = (numCols + most - 1) / most;
    return (numCols + trips - 1) / trips;
  }
  struct Online {
    linalg::GenericOp max; // the reduction `m = max(e)` the sum rescales to
    Value maxBuffer;       // m's buffer, as the sum reads it
    /// The sum's reference r = f(m) in `exp(e - r)` (m itself, or torch's
    /// isinf(m) ? 0 : m): the pass folds exp(e - m') against the running
    /// max m' in its place, and the finish rescales to r.
    Center ref;
    Value maxTotal; // the block total of m's pass (set by the pass)
  };
  llvm::DenseMap<Operation *, Online> onlineSums; // by the sum's generic
  /// `v = sum((e - q)^2)` with `q` a row value computed after the pass
  /// starts (a variance around a mean the same pass computes): the pass
  /// folds the count, mean and centered sum of squares of `e` instead
  /// (merging each trip's into the running ones, Chan et al.), and
  /// v = M2 + n * (mean - q)^2 once q is known.
  struct Centered {
    Value qBuffer;                // q's buffer, as v reads it
    linalg::GenericOp qWriter;    // the generic that writes q
    Value squared;                // e - q in v's body (squared, or not)
    /// v adds (e - q)^2; false: e - q (the sum is then n (mean - q)).
    bool squares = true;
    /// q from the row value (a mean from a sum).
    Center center;
    /// (set by the pass) e's mean over the row is shift + offset: the
    /// shift, a value of e, and the mean of e - shift (small).
    Value shift, offset;
  };
  llvm::DenseMap<Operation *, Centered> centeredSums; // by v's generic
  /// Register mode: each chunk's loop indices (`points`) and, where the
  /// row is ragged, whether it lies in the row (`valid`; shifted: its
  /// lanes in the row, `inRow`, and whether it may pass the row's end,
  /// `mayPass`).
  struct ChunkPlaces {
    bool ragged = false;
    SmallVector<SmallVector<Value>> points;
    SmallVector<Value> valid, inRow;
    SmallVector<bool> mayPass;
  };
  /// The chunks of column thread `colThread` of `t` over `numCols` columns
  /// (cluster mode: the block's share).
  ChunkPlaces placeChunks(OpBuilder &kb, Location loc, Value colThread,
                          ArrayRef<Value> rowIdx, int64_t t, int64_t numCols);
  /// Cluster mode, fast numerics, joint exchanges: the sums of exp(e -
  /// r(m)) whose max m crosses the cluster in their exchange (see
  /// emitRegisterPhases), by the sum.
  llvm::DenseMap<Operation *, Online> jointOnlineSums();
  /// Cluster mode, fast numerics, joint exchanges: a centered sum v whose
  /// mean's sum s crosses the cluster in its exchange (see
  /// emitRegisterPhases).
  struct JointCentered {
    linalg::GenericOp mean; // s
    Centered c;
  };
  /// Those sums, by v; `numCols`: a block's share of the row.
  llvm::DenseMap<Operation *, JointCentered> jointCenteredSums(int64_t numCols);
  /// Cluster mode, joint exchanges: the phases' state (see
  /// emitRegisterPhases).
  struct Exchanges {
    llvm::DenseMap<Operation *, Online> pairedSums;           // by the sum
    llvm::DenseMap<Operation *, Value> blockMaxes;            // by the max: m_b
    llvm::DenseMap<Operation *, JointCentered> jointCentered; // by v
    llvm::DenseMap<Operation *, Value> meanTotals;            // by s: s_b
    /// Reductions whose block totals wait for the next exchange.
    struct Pending {
      linalg::GenericOp g;
      Value total; // the block's total
    };
    SmallVector<Pending> pending;
    /// Row-space ops that read a sum waiting for its centered sum's
    /// exchange, in program order, evaluated once it is made.
    SmallVector<linalg::GenericOp> deferred;
  };
  /// The joint exchanges a cluster kernel's phases may make (see
  /// emitRegisterPhases): the paired online sums and joint centered sums,
  /// their block totals not yet known.
  Exchanges planExchanges(int64_t numCols);
  /// A paired sum's terms exp(e - m_b) against the block's max, as the
  /// phase computed them (see reuseBlockExps): m_b; m_b, or 0 where m_b
  /// is -inf; the max's buffer and position.
  struct BlockExps {
    Value blockMax, blockRef;
    Value maxBuffer;
    unsigned maxPosition;
  };
  /// Register mode: reduction `g`'s phase, its chunks (`places`) folded
  /// (foldChunks), combined across the block and finished, or left
  /// pending for a joint exchange (`x`).
  LogicalResult
  emitReductionPhase(OpBuilder &kb, Location loc, Value tid,
                     linalg::GenericOp g, const ChunkPlaces &places,
                     ArrayRef<Value> rowIdx, int64_t numCols, Exchanges &x,
                     Cache &cache, SmallVector<BlockExps> &blockExps,
                     SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// The thread's partial of reduction `g` over its chunks, reduced over
  /// a vector's lanes: a paired sum against its block's max (recorded in
  /// `blockExps`), a joint centered sum around its block's mean.
  FailureOr<Value> foldChunks(OpBuilder &kb, Location loc, linalg::GenericOp g,
                              const Combiner &comb, const ChunkPlaces &places,
                              int64_t numCols, Exchanges &x, Cache &cache,
                              SmallVector<BlockExps> &blockExps);
  /// Whether row-space op `g` reads a reduction whose exchange is still
  /// pending, or an op deferred for one (it is deferred too).
  bool waitsForExchange(linalg::GenericOp g, const Exchanges &x);
  /// mu_b = s_b / n_b, as the block squares around it and as the
  /// exchange's combination takes it (the same rounding both times).
  Value blockMean(OpBuilder &kb, Location loc, Value sb, int64_t numCols);
  /// Evaluates the deferred row-space ops before position `before`.
  LogicalResult evalDeferred(OpBuilder &kb, Location loc,
                             ArrayRef<Value> rowIdx, Exchanges &x,
                             unsigned before,
                             SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Cluster mode, joint exchanges: a reduction's block total waits for the
  /// next reduction's when that one (and every row-space op before it) reads
  /// none of the waiting reductions (a paired sum may read its max), so that
  /// independent reductions cross the cluster in one exchange; a paired max
  /// always waits for its sum.
  bool exchangeWaits(const Exchanges &x, linalg::GenericOp g);
  /// One exchange of every pending block total, then each combined over the
  /// cluster's blocks in rank order (the same everywhere) and finished: a
  /// paired sum as sum s_b exp(m_b - m) over its max's pairs.
  LogicalResult
  exchangePending(OpBuilder &kb, Location loc, Value tid,
                  ArrayRef<Value> rowIdx, int64_t numCols, Exchanges &x,
                  SmallVector<std::pair<Value, Value>> &rowOutputs);
  /// Register mode: the full-space results, each chunk stored once from
  /// registers, or folded into its column sum's partials.
  LogicalResult storeChunks(OpBuilder &kb, Location loc,
                            const ChunkPlaces &places, Cache &cache);
  /// A streaming trip's `k` entries, `step` columns apart from the loop's
  /// column on: their loop indices and, where `masked`, whether each is in
  /// the row (shifted: its lanes in the row; an entry past `end` loads the
  /// row's first aligned chunk, `firstAligned`).
  ChunkPlaces placeEntries(OpBuilder &lb, Location loc, scf::ForOp loop,
                           ArrayRef<Value> rowIdx, int64_t step, int64_t k,
                           int64_t numCols, bool masked, Value end,
                           Value firstAligned);
  /// The first streaming pass: stores the full-space results that read no
  /// row value at the trip's `entries`, with the pass's loads.
  LogicalResult storeReadyOutputs(OpBuilder &lb, Location loc,
                                  const ChunkPlaces &entries, Cache &cache);
  /// A streaming pass's loop-carried values: each member's running value
  /// (`of`), a centered sum's running M2 and, shifted, the columns each
  /// lane folded; the members' combiners, in order.
  struct PassSlots {
    llvm::DenseMap<Operation *, unsigned> of, m2, seen;
    SmallVector<Combiner> combs;
  };
  /// After a streaming pass's `loop`: each member's row total (`totals`;
  /// a centered sum's M2 and mean, an online sum rescaled to its max's
  /// total), its lanes and the block's threads combined.
  void finishPass(OpBuilder &kb, Location loc, Value tid, scf::ForOp loop,
                  ArrayRef<linalg::GenericOp> members, const PassSlots &slots,
                  Value colStart, int64_t step, int64_t numCols);
  llvm::DenseMap<Operation *, Value> totals;      // block totals, by reduction
  /// Streaming mode's passes over the row, in program order: each starts
  /// at a reduction no earlier pass folds and takes every later reduction
  /// whose inputs are ready when it starts (an online sum with its max in
  /// the pass too). Records the online sums it pairs in `onlineSums`.
  SmallVector<SmallVector<linalg::GenericOp>> planPasses();
  /// The group's full-space results that leave the kernel (stored for every
  /// column of the row), as (generic, result #), in program order.
  SmallVector<std::pair<linalg::GenericOp, unsigned>> fullSpaceOutputs();
  /// Loads the memory inputs that `roots` and the full-space intermediates
  /// they read (transitively) take at each of `points` (a streaming trip's
  /// entries, a phase's chunks), point by point, before anything uses them,
  /// so that they are in flight together; valueAt keeps them for the
  /// bodies. (`ordered`: the points are in the rows' order, each op reads
  /// them through orderLoops.)
  LogicalResult prefetchInputs(OpBuilder &b, Location loc,
                               ArrayRef<linalg::GenericOp> roots,
                               ArrayRef<SmallVector<Value>> points,
                               unsigned rowDims, bool ordered, Cache &cache);
  LogicalResult emitStreamingPass(OpBuilder &kb, Location loc, Value tid,
                                  ArrayRef<Value> rowIdx, Value colStart,
                                  int64_t step, int64_t numCols,
                                  ArrayRef<linalg::GenericOp> members);
  /// One streaming pass (emitStreamingPass): its members; the thread's
  /// columns from `colStart` on, `step` apart, `k` entries a trip; the
  /// row's `numCols` columns, ending at `end` (shifted: past the row's
  /// shift; an entry past it loads `firstAligned`); the loop-carried
  /// values (`slots`) and their starting `inits`; each centered sum's
  /// shift; whether the pass stores the full-space results that read no
  /// row value (`storeReady`).
  struct StreamingPass {
    ArrayRef<linalg::GenericOp> members;
    ArrayRef<Value> rowIdx;
    Value colStart, end, firstAligned;
    int64_t step = 0, numCols = 0, k = 1;
    PassSlots slots;
    SmallVector<Value> inits;
    llvm::DenseMap<Operation *, Value> shifts;
    bool storeReady = false;
  };
  /// The entries of a streaming trip over a thread's `trips` columns.
  int64_t streamingTrip(int64_t trips) const;
  /// Before the pass's loops: its slots and their neutral values, the
  /// row's end, each centered sum's shift (see StreamingPass).
  LogicalResult beginStreamingPass(OpBuilder &kb, Location loc,
                                   StreamingPass &pass);
  /// The pass's loop over the columns from `lower` to `upper`, carrying
  /// `loopInits`, its trips' entries tested against the row's end where
  /// `ragged`.
  FailureOr<scf::ForOp> emitColumnLoop(OpBuilder &kb, Location loc,
                                       const StreamingPass &pass, Value lower,
                                       Value upper, ValueRange loopInits,
                                       bool ragged);
  /// Member `g` (not a centered sum) folded over a trip's entries
  /// (`places`): its running value after the trip, from `accs` (the
  /// loop's) and, for an online sum, its max's new value in `next`.
  FailureOr<Value> foldStreamingMember(OpBuilder &lb, Location loc,
                                       const StreamingPass &pass,
                                       linalg::GenericOp g,
                                       const ChunkPlaces &places, bool ragged,
                                       Cache &cache, ValueRange accs,
                                       ArrayRef<Value> next);
  /// One trip of a centered sum `g` (see Centered) at `points` (row indices
  /// first, then columns; `valid`: which are in the row, empty when all
  /// are): the running mean and M2 after it, or nulls on failure. `iv`,
  /// `colStart`, `step`: the trip's first column, the thread's first
  /// column, and the distance between the thread's columns. Shifted chunks
  /// count per lane instead: `lanesIn`, each point's lanes in the row, and
  /// `seen`, the columns each lane folded before the trip; the trip's count
  /// per lane is then returned third.
  std::tuple<Value, Value, Value>
  foldCentered(OpBuilder &b, Location loc, linalg::GenericOp g,
               const Centered &centered, ArrayRef<SmallVector<Value>> points,
               unsigned numRowIdx, ArrayRef<Value> valid, Cache &cache,
               Value shift, Value mean, Value m2, Value iv, Value colStart,
               int64_t step, ArrayRef<Value> lanesIn = {},
               Value seen = Value());
  /// e of centered sum `g` at `point` (row indices first), the trip's
  /// entry `chunk` (what `cache` keeps the full-space values it computes
  /// by): g's body evaluated with 0 in place of q's row value (so d = e -
  /// 0); null on failure.
  Value centeredTerm(OpBuilder &b, Location loc, linalg::GenericOp g,
                     const Centered &centered, ArrayRef<Value> point,
                     unsigned numRowIdx, Cache &cache, int64_t chunk);
  /// The generics whose row values (reduction results, row-space values)
  /// evaluating `g`'s inputs reads, through the full-space generics it
  /// evaluates on the way.
  void rowDeps(linalg::GenericOp g, llvm::SmallPtrSetImpl<Operation *> &deps);
  /// Those of `g`'s memref inputs that its body reads but input #`skip`
  /// (uncached).
  void inputRowDeps(linalg::GenericOp g, std::optional<unsigned> skip,
                    llvm::SmallPtrSetImpl<Operation *> &deps);
  void rowDepsOf(Value buffer, unsigned pos,
                 llvm::SmallPtrSetImpl<Operation *> &deps);
  /// Where a body value comes from at a point of the full space: followed
  /// from block arguments through the group's full-space writers (identity
  /// maps) to an op result in some body, else the buffer, map and writer it
  /// is read through.
  struct Source {
    Value value, buffer;
    AffineMap map;
    Operation *writer = nullptr;
    linalg::GenericOp owner; // the generic whose body defines `value`
  };
  Source sourceOf(Value v, linalg::GenericOp g);
  /// The group's full-space generic (and result #) whose value input
  /// argument `arg` of `g` reads at the same point (through the permutation
  /// it was written through, the identity unless the writer was
  /// interchanged into the rows' order): evaluation follows such reads into
  /// the writer's body.
  std::optional<std::pair<linalg::GenericOp, unsigned>>
  identityWriter(BlockArgument arg, linalg::GenericOp g);
  /// Whether `a` in the body of `ga` and `b` in the body of `gb` compute the
  /// same value at every point of the full space: the same reads, or the
  /// same side-effect-free ops over such values (producers fused into
  /// several consumers are copies of one expression).
  bool sameValue(Value a, linalg::GenericOp ga, Value b,
                 linalg::GenericOp gb) {
    SameMemo memo;
    return sameValue(a, ga, b, gb, memo, 0);
  }
  bool sameValue(Value a, linalg::GenericOp ga, Value b, linalg::GenericOp gb,
                 SameMemo &memo, unsigned depth);
  /// `s = sum(exp(e - r))` with `r` computed in the body from `m = max(e)`
  /// alone (see Center), m computed by an earlier reduction of the group
  /// and read nowhere else in the sum: the max.
  /// (Both partners are found in the sum's own body: where the difference
  /// was another generic's result, inlineCenteredWriters copied it there.)
  std::optional<Online> onlinePartner(linalg::GenericOp g);
  /// `v = sum(d * d)`, `d = e - q` with `q` a row value: the parts, and in
  /// `deps` the row values evaluating `e` reads (not q's).
  std::optional<Centered>
  centeredPartner(linalg::GenericOp v,
                  llvm::SmallPtrSetImpl<Operation *> &deps);

  /// Position of each generic in program order.
  llvm::DenseMap<Operation *, unsigned> position;
  /// Values that stand in for values of a generic's body while it is
  /// evaluated (by evalBody; the ops computing them are not cloned): an
  /// online sum's reference during its pass. Per row value: splat when the
  /// body is evaluated on vectors.
  llvm::DenseMap<Value, Value> bodyOverrides;
  /// Row-space values computed for the current row, per buffer, with the
  /// position of the generic that wrote them (buffers can be reused).
  llvm::DenseMap<Value, SmallVector<std::pair<unsigned, Value>>> rowValues;

  /// The last generic before position `pos` that writes `buffer`, and which
  /// of its results it is.
  std::optional<std::pair<linalg::GenericOp, unsigned>>
  writerBefore(Value buffer, unsigned pos) {
    // (indexed on first use: the kernel's generics and their outputs do
    // not change while it is emitted, and the scan over every generic
    // before `pos` at each of the emitter's many questions made a chain of
    // 200 layer norms take minutes)
    if (writers.empty())
      for (auto [p, g] : llvm::enumerate(generics))
        for (auto [i, init] :
             llvm::enumerate(linalg::GenericOp(g).getOutputs())) {
          auto &list = writers[init];
          if (list.empty() || list.back().first != p)
            list.push_back({unsigned(p), unsigned(i)});
        }
    auto it = writers.find(buffer);
    if (it == writers.end())
      return std::nullopt;
    auto after = llvm::partition_point(
        it->second, [&](auto entry) { return entry.first < pos; });
    if (after == it->second.begin())
      return std::nullopt;
    auto [p, i] = *std::prev(after);
    return std::make_pair(generics[p], i);
  }
  /// Each buffer the generics write: (position, result #) of its writers,
  /// in order.
  llvm::DenseMap<Value, SmallVector<std::pair<unsigned, unsigned>, 1>> writers;
  Value rowValueBefore(Value buffer, unsigned pos) {
    Value found;
    for (auto [p, v] : rowValues.lookup(buffer))
      if (p < pos)
        found = v;
    return found;
  }

  /// Full-space results stored by the first streaming pass, as it computes
  /// them (they read no row value), not by the column loop after the
  /// reductions.
  llvm::DenseSet<std::pair<Operation *, unsigned>> storedInPass;
  bool firstPassEmitted = false;
  /// Whether full-space `g` reads no row value: every buffer it reads is
  /// an input of the group or written by a full-space op that reads none.
  bool readsNoRowValue(linalg::GenericOp g) {
    if (auto known = noRowValue.find(g); known != noRowValue.end())
      return known->second;
    unsigned pos = llvm::find(generics, g) - generics.begin();
    bool none = llvm::all_of(g.getDpsInputs(), [&](Value in) {
      auto w = writerBefore(in, pos);
      return !w || (w->first.getNumReductionLoops() == 0 &&
                    isFullSpace(w->first) && readsNoRowValue(w->first));
    });
    if (position.contains(g))
      noRowValue[g] = none;
    return none;
  }

  bool isFullSpace(linalg::GenericOp g) {
    return spaceOf(g) == Space::Full;
  }
  bool isRowSpace(linalg::GenericOp g) {
    return g.getNumReductionLoops() == 0 && spaceOf(g) == Space::Rows;
  }
  /// Whether a generic's loops are the rows', the rows' and columns', or
  /// neither, asked once for each of the kernel's generics (the emitter
  /// asks often, and each answer builds the loops from the indexing maps).
  enum class Space { Rows, Full, Other };
  Space spaceOf(linalg::GenericOp g) {
    auto known = spaces.find(g);
    if (known != spaces.end())
      return known->second;
    SmallVector<int64_t> loops = g.getStaticLoopRanges(), all(rowShape);
    all.append(colShape);
    Space s = loops == rowShape ? Space::Rows
              : loops == all    ? Space::Full
                                : Space::Other;
    // (only the kernel's own generics, which live as long as it does)
    if (position.contains(g))
      spaces[g] = s;
    return s;
  }
  llvm::DenseMap<Operation *, Space> spaces;
  /// readsNoRowValue's answers, and rowDeps' for full-space generics (each
  /// h of a stack of normalizations reads the one before).
  llvm::DenseMap<Operation *, bool> noRowValue;
  llvm::DenseMap<Operation *, SmallVector<Operation *>> fullRowDeps;
  /// Whether any generic reduces (a split's store over (positions, rows)
  /// does not: nothing combines across its threads).
  bool hasReductions() const {
    return llvm::any_of(generics, [](linalg::GenericOp g) {
      return g.getNumReductionLoops() > 0;
    });
  }
  LogicalResult analyze();
  void reuseBlockExps(Operation *scope, Value blockMax, Value blockRef,
                      Value m);
  FailureOr<Value> valueAt(OpBuilder &b, Location loc, Value buffer,
                           unsigned pos, AffineMap map, ArrayRef<Value> loopIdx,
                           Cache &cache, int64_t chunk = 0);
  /// `mappingOut`: receives the mapping of g's body values to their
  /// evaluations.
  FailureOr<SmallVector<Value>> evalBody(OpBuilder &b, Location loc,
                                         linalg::GenericOp g,
                                         ArrayRef<Value> loopIdx, Cache &cache,
                                         Value acc = Value(),
                                         int64_t chunk = 0,
                                         IRMapping *mappingOut = nullptr);
  bool usedOutside(Value buffer);
  /// Records the value a row-space buffer ends with (a later write, e.g. a
  /// reduction over its fill, replaces an earlier one: one store each).
  static void addRowOutput(SmallVector<std::pair<Value, Value>> &outputs,
                           Value buffer, Value value) {
    llvm::erase_if(outputs, [&](auto &o) { return o.first == buffer; });
    outputs.push_back({buffer, value});
  }
};

LogicalResult RowKernel::analyze() {
  for (linalg::GenericOp g : generics) {
    if (g.getNumReductionLoops() == 0)
      continue;
    if (!perThread && !kfuse::reductionsTrail(g))
      return g.emitError()
             << "kfuse cannot generate code for 'linalg.generic' yet: kernel '"
             << name << "' has reduction loops before parallel ones";
    SmallVector<int64_t> r, c;
    for (auto [range, it] :
         llvm::zip(g.getStaticLoopRanges(), g.getIteratorTypesArray()))
      (it == utils::IteratorType::parallel ? r : c).push_back(range);
    if (rowShape.empty() && colShape.empty()) {
      rowShape = r;
      colShape = c;
    } else if (r != rowShape || c != colShape) {
      return g.emitError() << "kfuse cannot generate code for 'linalg.generic' "
                              "yet: the reductions of kernel '"
                           << name << "' do not share one row shape";
    }
  }
  for (linalg::GenericOp g : generics) {
    if (g.getNumReductionLoops() == 0 && !isFullSpace(g) && !isRowSpace(g))
      return g.emitError() << "kfuse cannot generate code for 'linalg.generic' "
                              "yet: an op of kernel '"
                           << name
                           << "' runs over neither the rows nor the rows x "
                              "columns of its reductions";
    if (g.getNumReductionLoops() > 0 && !findCombiner(g))
      return g.emitError()
             << "kfuse cannot generate code for 'linalg.generic' "
                "yet: the reduction body of kernel '"
             << name
             << "' is not `acc = acc op f(inputs)` with an "
                "associative op (add, mul, max, min, and, or, xor)";
    position[g] = position.size();
    // The kernel computes these buffers; nothing on the host may touch them
    // before it runs (bufferization copies would read them too early).
    // (Kernels emitted before this one, gpu.launch ops by now, may write
    // them: that is a dependency, not a premature read.)
    Block *block = generics.back()->getBlock();
    for (Value init : g.getDpsInits())
      for (Operation *user : init.getUsers()) {
        Operation *host = block->findAncestorOpInBlock(*user);
        if (!host || isa<linalg::GenericOp, gpu::LaunchOp>(host))
          continue;
        // A copy into the buffer is its initial value (the accumulator of
        // a contraction whose init is also needed elsewhere).
        if (auto copy = dyn_cast<memref::CopyOp>(host);
            copy && copy.getTarget() == init)
          continue;
        if (host->isBeforeInBlock(generics.back()))
          return user->emitError()
                 << "kfuse: internal error: '" << user->getName()
                 << "' uses a buffer of kernel '" << name
                 << "' before the kernel runs";
      }
    for (OpOperand &o : g->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(o.get().getType());
      if (type && !type.getLayout().isIdentity() &&
          !kfuse::hasStaticStrides(type, /*unitInnermost=*/true))
        return g.emitError()
               << "fusion-generic-to-gpu: operand #" << o.getOperandNumber()
               << " must have the identity layout or static strides";
    }
  }
  // A row value (of a reduction or a row-space op) is the value of the row
  // being computed: it must be read along the reader's rows, in order.
  for (linalg::GenericOp g : generics)
    for (OpOperand *in : g.getDpsInputOperands()) {
      auto w = writerBefore(in->get(), position[g]);
      if (!w || (w->first.getNumReductionLoops() == 0 && !isRowSpace(w->first)))
        continue;
      AffineMap map = g.getMatchingIndexingMap(in);
      SmallVector<unsigned> rowLoops;
      for (auto [d, it] : llvm::enumerate(g.getIteratorTypesArray()))
        if (it == utils::IteratorType::parallel &&
            rowLoops.size() < rowShape.size())
          rowLoops.push_back(d);
      bool alongRows = map.getNumResults() == rowShape.size();
      for (auto [k, e] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        alongRows &= k < rowLoops.size() && dim &&
                     dim.getPosition() == rowLoops[k];
      }
      if (!alongRows)
        return g.emitError()
               << "kfuse cannot generate code for 'linalg.generic' yet: "
                  "kernel '"
               << name << "' reads operand #" << in->getOperandNumber()
               << ", a value per row, through a map that is not its rows";
    }
  return success();
}

/// The value of `buffer` as the generic at position `pos` reads it, through
/// `map` at loop indices `loopIdx`: a row value, the evaluation of the
/// group's generic that last wrote it, or a load from memory.
FailureOr<Value> RowKernel::valueAt(OpBuilder &b, Location loc, Value buffer,
                                    unsigned pos, AffineMap map,
                                    ArrayRef<Value> loopIdx, Cache &cache,
                                    int64_t chunk) {
  auto w = writerBefore(buffer, pos);
  if (w && (w->first.getNumReductionLoops() > 0 || isRowSpace(w->first))) {
    if (Value v = rowValueBefore(buffer, position[w->first] + 1))
      // (a running max in an online pass is a vector already)
      return vectorized(loopIdx) && !isa<VectorType>(v.getType())
                 ? splat(b, loc, v)
                 : v;
  }
  if (w) {
    auto [g, result] = *w;
    if (g.getNumReductionLoops() > 0 || isRowSpace(g))
      return emitError(loc) << "kfuse: kernel '" << name
                            << "' reads a row value before computing it";
    // A full-space intermediate, read at the same point of the space (the
    // map it was written through: an op interchanged into the rows'
    // order writes its tensor through a permutation).
    if (map != g.getMatchingIndexingMap(g.getDpsInitOperand(result)) ||
        !map.isPermutation() ||
        loopIdx.size() != rowShape.size() + colShape.size())
      return emitError(loc)
             << "kfuse cannot generate code for 'linalg.generic' yet: kernel '"
             << name << "' reads an intermediate through a non-identity map";
    // One evaluation per generic and loop iteration (or chunk).
    auto key = std::make_tuple(g.getOperation(), result, chunk);
    if (Value v = cache.lookup(key))
      return v;
    auto values = evalBody(b, loc, g, loopIdx, cache, Value(), chunk);
    if (failed(values))
      return failure();
    for (auto [i, v] : llvm::enumerate(*values))
      cache[std::make_tuple(g.getOperation(), unsigned(i), chunk)] = v;
    return (*values)[result];
  }
  // From memory (a group input). What the row's indices alone address (a
  // row value an earlier kernel stored: a mean, a norm) once per row, where
  // the row's indices are computed: not again per chunk or column trip.
  // (A contraction's epilogue reads such values once anyway.)
  if (rowLoads.block && !contraction &&
      llvm::all_of(map.getResults(), [&](AffineExpr e) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        return isa<AffineConstantExpr>(e) ||
               (dim && llvm::is_contained(rowLoads.rowIdx,
                                          loopIdx[dim.getPosition()]));
      })) {
    auto key = std::make_pair(buffer.getAsOpaquePointer(),
                              const_cast<void *>(map.getAsOpaquePointer()));
    Value &slot = rowLoads.values[key];
    if (!slot) {
      OpBuilder rb(buffer.getContext());
      if (rowLoads.after)
        rb.setInsertionPointAfter(rowLoads.after);
      else
        rb.setInsertionPointToStart(rowLoads.block);
      SmallVector<Value> idx;
      for (AffineExpr e : map.getResults())
        idx.push_back(isa<AffineConstantExpr>(e)
                          ? arith::ConstantIndexOp::create(
                                rb, loc, cast<AffineConstantExpr>(e).getValue())
                                .getResult()
                          : loopIdx[cast<AffineDimExpr>(e).getPosition()]);
      slot = memref::LoadOp::create(rb, loc, buffer, idx);
      rowLoads.after = slot.getDefiningOp();
    }
    return vectorized(loopIdx) ? splat(b, loc, slot) : slot;
  }
  // Else once per chunk in register mode (scalar chunks too: barriers
  // between the phases keep CSE from merging loads).
  if (chunks == 0 || loopIdx.size() != rowShape.size() + colShape.size()) {
    if (chunks == 0 && chunk >= 0 &&
        chunk < static_cast<int64_t>(entryInside.size())) {
      // (an entry that may lie past the row's end: under its test, zeros
      // past it, which the folds select away; once per entry, the members
      // of the pass sharing it, as CSE does not merge the tests; the trip's
      // first entry, in the row, kept too, in its place before the others)
      auto &[at, slot] = entryLoads[std::make_tuple(
          buffer.getAsOpaquePointer(),
          const_cast<void *>(map.getAsOpaquePointer()), chunk)];
      if (slot && slot.getParentBlock() == b.getInsertionBlock() &&
          ArrayRef<Value>(at) == loopIdx)
        return slot;
      at.assign(loopIdx.begin(), loopIdx.end());
      slot = entryInside[chunk]
                 ? loadWhere(b, loc, entryInside[chunk], buffer, map, loopIdx)
                 : loadFromMemory(b, loc, buffer, map, loopIdx);
      return slot;
    }
    if (!shifted || !vectorized(loopIdx))
      return loadFromMemory(b, loc, buffer, map, loopIdx);
    // (shifted chunks load under a test of the chunk, which CSE does not
    // merge: once per chunk, the members of a streaming pass sharing it)
    auto key = std::make_tuple(buffer.getAsOpaquePointer(),
                               const_cast<void *>(map.getAsOpaquePointer()),
                               loopIdx.back().getAsOpaquePointer());
    Value &slot = streamedLoads[key];
    if (!slot || slot.getParentBlock() != b.getInsertionBlock())
      slot = loadFromMemory(b, loc, buffer, map, loopIdx);
    return slot;
  }
  auto key =
      std::make_tuple(buffer.getAsOpaquePointer(),
                      const_cast<void *>(map.getAsOpaquePointer()), chunk);
  if (Value v = loaded.lookup(key))
    return v;
  auto fromMemory = [&]() -> Value {
    if (chunk >= static_cast<int64_t>(chunkInside.size()) ||
        !chunkInside[chunk])
      return loadFromMemory(b, loc, buffer, map, loopIdx);
    // (a chunk past the row's end: zeros, which the reductions select away
    // and no store writes; warps wholly past it issue no load)
    return loadWhere(b, loc, chunkInside[chunk], buffer, map, loopIdx);
  };
  Value v = sharedChunk(b, loc, buffer, map, chunk, fromMemory);
  loaded[key] = v;
  return v;
}

int64_t RowKernel::sharedRowInputs(int64_t &bytes) {
  llvm::DenseSet<std::pair<void *, void *>> seen;
  bytes = 0;
  for (linalg::GenericOp g : generics) {
    if (!isFullSpace(g))
      continue;
    for (OpOperand *in : g.getDpsInputOperands()) {
      auto type = dyn_cast<MemRefType>(in->get().getType());
      AffineMap map = g.getMatchingIndexingMap(in);
      if (!type || writerBefore(in->get(), position[g]) ||
          !heldInShared(map) ||
          !seen.insert({in->get().getAsOpaquePointer(),
                        const_cast<void *>(map.getAsOpaquePointer())})
               .second)
        continue;
      bytes += std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
    }
  }
  return seen.size();
}

bool RowKernel::heldInShared(AffineMap map) const {
  // (along the innermost column, and per row: a weight read by every row
  // is served by the caches again)
  unsigned inner = rowShape.size() + colShape.size() - 1;
  if (map.getNumDims() != inner + 1 || !map.isFunctionOfDim(inner))
    return false;
  for (unsigned d = 0; d < rowShape.size(); ++d)
    if (map.isFunctionOfDim(d))
      return true;
  return false;
}

Value RowKernel::sharedChunk(OpBuilder &b, Location loc, Value buffer,
                             AffineMap map, int64_t chunk,
                             llvm::function_ref<Value()> fromMemory) {
  if (chunk < regChunks || chunk >= chunks || !heldInShared(map))
    return fromMemory();
  auto slotKey = std::make_pair(buffer.getAsOpaquePointer(),
                                const_cast<void *>(map.getAsOpaquePointer()));
  // (slots hold whole vectors: memref.load and store of a vector element,
  // which the NVVM lowering turns into ld/st.shared.v4, where vector.load
  // would meet convert-vector-to-llvm, which knows no GPU address spaces)
  auto at = [&](OpBuilder &ab) -> SmallVector<Value> {
    return {arith::ConstantIndexOp::create(ab, loc, chunk - regChunks),
            sharedThread};
  };
  if (Value view = sharedSlots.lookup(slotKey);
      view && inShared.contains({slotKey.first, slotKey.second, chunk}))
    // Stored by an earlier phase: this thread's own vector.
    return memref::LoadOp::create(b, loc, view, at(b));
  Value v = fromMemory();
  // (stored where every later phase finds it: in the phases' block, not in
  // a region that may not run)
  Type elem = getElementTypeOrSelf(v.getType());
  if (b.getInsertionBlock() != phaseBlock || !elem.isIntOrFloat() ||
      elem.getIntOrFloatBitWidth() % 8 != 0)
    return v;
  auto vector = dyn_cast<VectorType>(v.getType());
  int64_t lanes = vector ? vector.getNumElements() : 1;
  unsigned bytes = elem.getIntOrFloatBitWidth() / 8;
  Value view = sharedSlots.lookup(slotKey);
  if (!view) {
    int64_t size = (chunks - regChunks) * blockThreads * lanes * bytes;
    if (int64_t(sharedSlots.size()) >= sharedSlotsAllowed ||
        sharedBytes + size > sharedLimit)
      return v;
    view = sharedView(
        loc, MemRefType::get({chunks - regChunks, blockThreads}, v.getType()),
        size);
    sharedSlots[slotKey] = view;
  }
  memref::StoreOp::create(b, loc, v, view, at(b));
  inShared.insert({slotKey.first, slotKey.second, chunk});
  return v;
}

void RowKernel::endPhase(Cache &cache) {
  if (regChunks == chunks)
    return;
  SmallVector<std::tuple<void *, void *, int64_t>> drop;
  for (auto &[key, v] : loaded)
    if (std::get<2>(key) >= regChunks)
      drop.push_back(key);
  for (auto &key : drop)
    loaded.erase(key);
  SmallVector<std::tuple<Operation *, unsigned, int64_t>> forget;
  for (auto &[key, v] : cache)
    if (std::get<2>(key) >= regChunks)
      forget.push_back(key);
  for (auto &key : forget)
    cache.erase(key);
}

Value RowKernel::loadWhere(OpBuilder &b, Location loc, Value inside,
                           Value buffer, AffineMap map,
                           ArrayRef<Value> loopIdx) {
  Type type;
  return scf::IfOp::create(
             b, loc, inside,
             [&](OpBuilder &tb, Location l) {
               Value v = loadFromMemory(tb, l, buffer, map, loopIdx);
               type = v.getType();
               scf::YieldOp::create(tb, l, v);
             },
             [&](OpBuilder &eb, Location l) {
               scf::YieldOp::create(
                   eb, l,
                   arith::ConstantOp::create(eb, l, type, eb.getZeroAttr(type))
                       .getResult());
             })
      .getResult(0);
}

/// Loads `buffer` through `map` at `loopIdx`: one element, or (vectorized)
/// `width` elements along the innermost column: one aligned vector.load
/// when the buffer is contiguous along it, a broadcast scalar when it does
/// not depend on it, gathered scalars otherwise.
Value RowKernel::loadFromMemory(OpBuilder &b, Location loc, Value buffer,
                                AffineMap map, ArrayRef<Value> loopIdx) {
  // (the buffer's indices at loop indices `at`, the innermost column plus
  // `lane`, or at column `laneCol` where given)
  auto indicesAt = [&](OpBuilder &ib, int64_t lane, Value laneCol = Value()) {
    SmallVector<Value> at(loopIdx);
    if (laneCol)
      at.back() = laneCol;
    else if (lane)
      at.back() = arith::AddIOp::create(
          ib, loc, at.back(), arith::ConstantIndexOp::create(ib, loc, lane));
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        idx.push_back(at[dim.getPosition()]);
      else if (auto cst = dyn_cast<AffineConstantExpr>(e))
        idx.push_back(arith::ConstantIndexOp::create(ib, loc, cst.getValue()));
      else // e.g. d2 + d5 in a convolution
        idx.push_back(affine::expandAffineExpr(ib, loc, e, at, {}));
    }
    return idx;
  };
  if (!vectorized(loopIdx))
    return memref::LoadOp::create(b, loc, buffer, indicesAt(b, 0)).getResult();
  auto type = cast<MemRefType>(buffer.getType());
  unsigned inner = loopIdx.size() - 1, uses = 0;
  for (AffineExpr e : map.getResults())
    uses += e.isFunctionOfDim(inner);
  if (uses == 0)
    return splat(b, loc,
                 memref::LoadOp::create(b, loc, buffer, indicesAt(b, 0)));
  Type elem = type.getElementType();
  auto vectorType = cast<VectorType>(vectorOf(elem));
  unsigned bytes = std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
  auto alignedLoad = [&](OpBuilder &ib, Location l) -> Value {
    return vector::LoadOp::create(ib, l, vectorType, buffer, indicesAt(ib, 0),
                                  /*nontemporal=*/false,
                                  llvm::MaybeAlign(width * bytes));
  };
  if (shifted) {
    // Lane by lane at columns clamped into the row, or one aligned vector
    // where the chunk lies in the row of a buffer in the shifted layout.
    auto found = shiftedChunks.find(loopIdx.back());
    assert(found != shiftedChunks.end() && "a load at an unrecorded chunk");
    ShiftedChunk chunk = found->second;
    auto laneLoads = [&](OpBuilder &ib, Location l) -> Value {
      SmallVector<Value> lanes;
      for (Value col : chunk.laneCols)
        lanes.push_back(
            memref::LoadOp::create(ib, l, buffer, indicesAt(ib, 0, col)));
      return vector::FromElementsOp::create(ib, l, vectorType, lanes);
    };
    if (!alignedWithRows(buffer, map, loopIdx, chunk))
      return laneLoads(b, loc);
    if (matchPattern(chunk.inBuffer, m_One()))
      return alignedLoad(b, loc);
    // (past the buffer's end: the lanes in the row, a masked load of the
    // same chunk. Lane loads at clamped columns there were, for f16, merged
    // by LLVM with the aligned branch into one load of the lanes' 2-byte
    // alignment: 8 loads of 2 bytes a chunk, every chunk.)
    return scf::IfOp::create(
               b, loc, chunk.inBuffer,
               [&](OpBuilder &tb, Location l) {
                 scf::YieldOp::create(tb, l, alignedLoad(tb, l));
               },
               [&](OpBuilder &eb, Location l) {
                 Value none = arith::ConstantOp::create(
                     eb, l, vectorType, eb.getZeroAttr(vectorType));
                 scf::YieldOp::create(
                     eb, l,
                     vector::MaskedLoadOp::create(eb, l, vectorType, buffer,
                                                  indicesAt(eb, 0),
                                                  chunk.lanes, none)
                         .getResult());
               })
        .getResult(0);
  }
  if (uses == 1 && alignedColumns(type, map, inner))
    return alignedLoad(b, loc);
  SmallVector<Value> lanes;
  for (int64_t lane = 0; lane < width; ++lane)
    lanes.push_back(
        memref::LoadOp::create(b, loc, buffer, indicesAt(b, lane)));
  return vector::FromElementsOp::create(b, loc, vectorType, lanes);
}

Value RowKernel::shiftedChunk(OpBuilder &b, Location loc,
                              ArrayRef<Value> rowIdx, Value col,
                              int64_t numCols, bool head, bool tail,
                              Value maskCol) {
  auto cIdx = kfuse::indexConstants(b, loc);
  ShiftedChunk chunk;
  chunk.rowIdx.assign(rowIdx.begin(), rowIdx.end());
  if (!head && !tail) {
    // (a chunk in the middle of every row: one aligned vector, no masks)
    chunk.whole = arith::ConstantIntOp::create(b, loc, 1, 1);
    chunk.inBuffer = chunk.whole;
    chunk.lanes = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(VectorType::get({width}, b.getI1Type()),
                                       b.getBoolAttr(true)));
    chunk.laneCols.clear();
    for (int64_t lane = 0; lane < width; ++lane)
      chunk.laneCols.push_back(
          lane ? arith::AddIOp::create(b, loc, col, cIdx(lane)).getResult()
               : col);
    Value lanes = chunk.lanes;
    shiftedChunks[col] = std::move(chunk);
    return lanes;
  }
  chunk.whole = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, col, cIdx(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, col,
                            cIdx(numCols - width)));
  // (a chunk starts at a multiple of the width in memory, at or after the
  // buffer's start: it may pass the end of what the rows' layout spans, its
  // last row's last element, only at a row's end; there it is a masked
  // load, see loadFromMemory)
  int64_t last = numCols - 1;
  for (auto [d, n] : llvm::enumerate(rowShape))
    last += (n - 1) * layout.strides[d];
  chunk.inBuffer =
      tail ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                   arith::AddIOp::create(b, loc, rowStart, col),
                                   cIdx(last - width + 1))
                 .getResult()
           : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
  auto indexVector = VectorType::get({width}, b.getIndexType());
  SmallVector<int64_t> offsets(width);
  std::iota(offsets.begin(), offsets.end(), 0);
  Value laneColumns = arith::AddIOp::create(
      b, loc,
      vector::BroadcastOp::create(b, loc, indexVector, maskCol ? maskCol : col),
      arith::ConstantOp::create(b, loc, b.getIndexVectorAttr(offsets)));
  auto splatIdx = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(indexVector, b.getIndexAttr(v)));
  };
  chunk.lanes = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, laneColumns,
                            splatIdx(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, laneColumns,
                            splatIdx(numCols)));
  for (int64_t lane = 0; lane < width; ++lane)
    chunk.laneCols.push_back(arith::MaxSIOp::create(
        b, loc,
        arith::MinSIOp::create(
            b, loc, arith::AddIOp::create(b, loc, col, cIdx(lane)),
            cIdx(numCols - 1)),
        cIdx(0)));
  Value lanes = chunk.lanes;
  shiftedChunks[col] = std::move(chunk);
  return lanes;
}

void RowKernel::findLayout() {
  for (linalg::GenericOp g : generics)
    for (OpOperand &o : g->getOpOperands()) {
      auto m = dyn_cast<MemRefType>(o.get().getType());
      if (!m || !hasRowShape(m) ||
          !kfuse::hasStaticStrides(m, /*unitInnermost=*/true) ||
          !g.getMatchingIndexingMap(&o).isIdentity())
        continue;
      layout.strides.clear();
      (void)m.getStridesAndOffset(layout.strides, layout.offset);
      layout.identity = m.getLayout().isIdentity();
      return;
    }
  // (none: identity, as the group's own buffers are)
  SmallVector<int64_t> shape(rowShape);
  llvm::append_range(shape, colShape);
  layout.strides = computeSuffixProduct(shape);
  layout.offset = 0;
  layout.identity = true;
}

int64_t RowKernel::rowAlignment() const {
  int64_t align = chunkWidthIn(colShape.back());
  auto within = [&](int64_t v) {
    while (align > 1 && v % align != 0)
      align /= 2;
  };
  within(layout.offset);
  int64_t rank = rowShape.size() + colShape.size();
  for (int64_t d = 0; d + 1 < rank; ++d)
    if ((d < int64_t(rowShape.size()) ? rowShape[d]
                                      : colShape[d - rowShape.size()]) != 1)
      within(layout.strides[d]);
  return align;
}

bool RowKernel::alignedWithRows(Value buffer, AffineMap map,
                                ArrayRef<Value> loopIdx,
                                const ShiftedChunk &chunk) const {
  if (!isRowLayout(buffer.getType()) ||
      map.getNumResults() != rowShape.size() + colShape.size())
    return false;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    Value want = i < rowShape.size() ? chunk.rowIdx[i] : loopIdx.back();
    if (!dim || loopIdx[dim.getPosition()] != want)
      return false;
  }
  return true;
}

FailureOr<SmallVector<Value>> RowKernel::evalBody(OpBuilder &b, Location loc,
                                                  linalg::GenericOp g,
                                                  ArrayRef<Value> loopIdx,
                                                  Cache &cache, Value acc,
                                                  int64_t chunk,
                                                  IRMapping *mappingOut) {
  Block *body = g.getBody();
  bool vec = vectorized(loopIdx);
  IRMapping mapping;
  for (OpOperand *in : g.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(in->getOperandNumber());
    if (arg.use_empty())
      continue;
    if (!isa<MemRefType>(in->get().getType())) {
      mapping.map(arg, vec ? splat(b, loc, in->get()) : in->get());
      continue;
    }
    auto v = valueAt(b, loc, in->get(), position[g],
                     g.getMatchingIndexingMap(in), loopIdx, cache, chunk);
    if (failed(v))
      return failure();
    mapping.map(arg, *v);
  }
  if (acc)
    mapping.map(body->getArguments().back(), acc);
  // (a generic over the rows or the whole space reading what its outputs
  // held before it: a sum's `init + term` folded to one step)
  for (OpOperand &out : g.getDpsInitsMutable()) {
    BlockArgument arg = body->getArgument(out.getOperandNumber());
    if (arg.use_empty() || mapping.contains(arg))
      continue;
    auto v = valueAt(b, loc, out.get(), position[g],
                     g.getMatchingIndexingMap(&out), loopIdx, cache, chunk);
    if (failed(v))
      return failure();
    mapping.map(arg, *v);
  }
  for (auto [from, to] : bodyOverrides)
    if (from.getParentBlock() == body)
      mapping.map(from, vec && !isa<VectorType>(to.getType())
                            ? splat(b, loc, to)
                            : to);
  // (shifted chunks: the column of a lane outside the row, which loads
  // nothing of it, clamped into the row as its loads' columns are, so that
  // a gather indexed by it (x[r, c + 1] of a slice of x's columns) stays in
  // the row and the buffer)
  if (shifted && vec)
    if (auto found = shiftedChunks.find(loopIdx.back());
        found != shiftedChunks.end()) {
      Value lanes;
      for (linalg::IndexOp idx : body->getOps<linalg::IndexOp>())
        if (idx.getDim() == loopIdx.size() - 1) {
          if (!lanes)
            lanes = vector::FromElementsOp::create(
                b, loc, VectorType::get({width}, b.getIndexType()),
                found->second.laneCols);
          mapping.map(idx.getResult(), lanes);
        }
    }
  // (the chunk's lanes inside the row, for the body's guards: see
  // liveChunks)
  bool guarded = !body->getOps<kfuse::fusion::GuardOp>().empty();
  Value live = guarded && chunk >= 0 && chunk < int64_t(liveChunks.size())
                   ? liveChunks[chunk]
                   : Value();
  if (guarded && !live && shifted && vec)
    if (auto found = shiftedChunks.find(loopIdx.back());
        found != shiftedChunks.end())
      live = found->second.lanes;
  if (live && !vec && isa<VectorType>(live.getType()))
    live = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, live);
  Operation *failedOp = nullptr;
  auto results = kfuse::cloneBodyOnVectors(
      b, loc, *body, mapping, vec ? width : 1,
      [&](unsigned dim) {
        return std::make_pair(loopIdx[dim], dim == loopIdx.size() - 1);
      },
      &failedOp, live);
  if (failed(results))
    return failedOp->emitError()
           << "kfuse cannot generate code for '" << failedOp->getName()
           << "' in kernel '" << name << "'";
  if (mappingOut)
    *mappingOut = mapping;
  return *results;
}

bool RowKernel::usedOutside(Value buffer) {
  // (a column sum's terms: read by the kernel after this one when stored,
  // which emit() decides; until then `partial` is `terms`: as if stored)
  for (const ColumnSum &c : columnSums)
    if (c.terms == buffer)
      return accumulating || c.partial == c.terms;
  return !isPrivateTo(buffer, generics);
}

/// The shared::cta address of workgroup buffer `buffer` plus `offset` bytes.
static Value sharedAddress(OpBuilder &b, Location loc, Value buffer,
                           Value offset = Value()) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      ValueRange{byteAddress(b, loc, buffer, offset)});
}

/// The integer a total travels as through st.async (32 or 64 bits).
static Type exchangeType(Type t) {
  return IntegerType::get(t.getContext(),
                          t.getIntOrFloatBitWidth() <= 32 ? 32 : 64);
}

static Value toExchange(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType(), bits = exchangeType(t);
  unsigned w = t.getIntOrFloatBitWidth();
  if (isa<FloatType>(t))
    v = arith::BitcastOp::create(b, loc, b.getIntegerType(w), v);
  if (w < bits.getIntOrFloatBitWidth())
    v = arith::ExtUIOp::create(b, loc, bits, v);
  return v;
}

static Value fromExchange(OpBuilder &b, Location loc, Value v, Type t) {
  unsigned w = t.getIntOrFloatBitWidth();
  if (w < v.getType().getIntOrFloatBitWidth())
    v = arith::TruncIOp::create(b, loc, b.getIntegerType(w), v);
  if (isa<FloatType>(t))
    v = arith::BitcastOp::create(b, loc, t, v);
  return v;
}

void RowKernel::initExchange(OpBuilder &b, Location loc, Value tid) {
  // An mbarrier must be initialized, and the initialization visible to the
  // cluster, before another block's st.async signals it: thread 0 inits
  // and fences, every thread arrives; the first exchange waits, so the
  // barrier's latency hides behind the loads and the block reduction.
  auto init =
      scf::IfOp::create(b, loc, isZero(b, loc, tid), /*withElse=*/false);
  {
    OpBuilder ib = init.getThenBodyBuilder();
    // (one arrival per phase: the receiving thread's expect-tx)
    Value one = arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), 1);
    for (Value bar : mbars)
      for (int64_t copy = 0; copy < (persist.on ? 2 : 1); ++copy)
        NVVM::MBarrierInitOp::create(
            ib, loc,
            sharedAddress(ib, loc, bar,
                          arith::ConstantIndexOp::create(ib, loc, 8 * copy)),
            one, /*predicate=*/Value());
    if (persist.bar)
      NVVM::MBarrierInitOp::create(ib, loc, sharedAddress(ib, loc, persist.bar),
                                   one, /*predicate=*/Value());
    NVVM::FenceMbarrierInitOp::create(ib, loc);
  }
  NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
}

SmallVector<SmallVector<Value>>
RowKernel::asyncClusterGather(OpBuilder &b, Location loc, Value tid,
                              ArrayRef<Value> totals) {
  // Thread 0 of every block sends the block's totals into its own slots
  // (by cluster rank) of every block of the cluster, itself included, with
  // st.async: each store completes its bytes on the receiving block's
  // mbarrier (the first slot's), which thread 0 there expects all of. The
  // phase completes once all have landed; the wait acquires them. No fence
  // and no cluster barrier per exchange, and no block can exit while
  // another may still write to it: each waits for every block's totals
  // first.
  Value bar = mbars[nextSlot];
  ArrayRef<Value> mine = ArrayRef<Value>(slots).slice(nextSlot, totals.size());
  nextSlot += totals.size();
  auto cIdx = kfuse::indexConstants(loc);
  // (persistent: the slots and mbarrier of this row's parity, the other
  // pair the next row's, which a block ahead may already be sending to)
  Value first = persist.on
                    ? arith::MulIOp::create(b, loc, persist.buffer,
                                            cIdx(b, cluster))
                          .getResult()
                    : cIdx(b, 0);
  if (!clusterReady) {
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    clusterReady = true;
  }
  SmallVector<unsigned> bytes;
  unsigned expected = 0;
  for (Value total : totals) {
    bytes.push_back(exchangeType(total.getType()).getIntOrFloatBitWidth() / 8);
    expected += cluster * bytes.back();
  }
  Value local = sharedAddress(
      b, loc, bar,
      persist.on ? arith::MulIOp::create(b, loc, persist.buffer, cIdx(b, 8))
                       .getResult()
                 : Value());
  auto send =
      scf::IfOp::create(b, loc, isZero(b, loc, tid), /*withElse=*/false);
  {
    OpBuilder sb = send.getThenBodyBuilder();
    ptx(sb, loc, Type(),
        {local,
         arith::ConstantIntOp::create(sb, loc, sb.getI32Type(), expected)},
        "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [$0], $1;",
        "l,r");
    auto remote = LLVM::LLVMPointerType::get(sb.getContext(), 7);
    for (auto [i, total] : llvm::enumerate(totals)) {
      Value value = toExchange(sb, loc, total);
      Value at = sharedAddress(
          sb, loc, mine[i],
          arith::MulIOp::create(
              sb, loc, arith::AddIOp::create(sb, loc, first, rank),
              arith::ConstantIndexOp::create(sb, loc, bytes[i])));
      std::string store =
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.b" +
          std::to_string(bytes[i] * 8) + " [$0], $1, [$2];";
      std::string constraints = bytes[i] == 4 ? "l,r,l" : "l,l,l";
      for (int64_t j = 0; j < cluster; ++j) {
        Value to = arith::ConstantIntOp::create(sb, loc, sb.getI32Type(), j);
        ptx(sb, loc, Type(),
            {NVVM::MapaOp::create(sb, loc, remote, at, to), value,
             NVVM::MapaOp::create(sb, loc, remote, local, to)},
            store, constraints);
      }
    }
  }
  // Every thread waits for the exchange's phase: 0 where each mbarrier
  // serves one exchange; persistent, each serves every other row.
  waitPhase(b, loc, local, persist.on ? persist.phase : Value());
  SmallVector<SmallVector<Value>> all(cluster);
  for (int64_t j = 0; j < cluster; ++j)
    for (auto [i, total] : llvm::enumerate(totals))
      all[j].push_back(fromExchange(
          b, loc,
          memref::LoadOp::create(
              b, loc, mine[i],
              ValueRange{arith::AddIOp::create(b, loc, first, cIdx(b, j))}),
          total.getType()));
  return all;
}

void RowKernel::waitPhase(OpBuilder &b, Location loc, Value address,
                          Value parity) {
  auto wait = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  Block *before = b.createBlock(&wait.getBefore());
  OpBuilder wb = OpBuilder::atBlockBegin(before);
  Value done =
      parity
          ? ptx(wb, loc, wb.getI32Type(), {address, parity},
                "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster."
                "shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }",
                "=r,l,r")
          : ptx(wb, loc, wb.getI32Type(), {address},
                "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster."
                "shared::cta.b64 p, [$1], 0; selp.u32 $0, 1, 0, p; }",
                "=r,l");
  Value again = arith::CmpIOp::create(
      wb, loc, arith::CmpIPredicate::eq, done,
      arith::ConstantIntOp::create(wb, loc, wb.getI32Type(), 0));
  scf::ConditionOp::create(wb, loc, again, ValueRange{});
  Block *after = b.createBlock(&wait.getAfter());
  OpBuilder ab = OpBuilder::atBlockBegin(after);
  scf::YieldOp::create(ab, loc);
  b.setInsertionPointAfter(wait);
}

void RowKernel::setKernelHint(FunctionOpInterface func, StringRef attr,
                              Attribute value) {
  MLIRContext *ctx = func->getContext();
  NamedAttrList hints;
  if (auto old = func->getAttrOfType<DictionaryAttr>(attr))
    hints.append(old.getValue());
  hints.set(StringAttr::get(ctx, (func.getName() + "_" + name).str()), value);
  func->setAttr(attr, hints.getDictionary(ctx));
}

OpBuilder RowKernel::firstThreadOnRow(OpBuilder &b, Location loc, Value tid,
                                     Value row) {
  Value on = arith::AndIOp::create(
      b, loc, isZero(b, loc, tid),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                            arith::ConstantIndexOp::create(b, loc, totalRows)));
  return scf::IfOp::create(b, loc, on, /*withElse=*/false).getThenBodyBuilder();
}

void RowKernel::stageRow(OpBuilder &ob, Location loc, Value tid, Value row) {
  OpBuilder b = firstThreadOnRow(ob, loc, tid, row);
  ptx(b, loc, Type(), {}, "fence.proxy.async.shared::cta;", "");
  int64_t total = 0;
  for (const RowMajorInput &in : persist.inputs)
    total += shareCols() * in.bytes;
  Value bar = sharedAddress(b, loc, persist.bar);
  ptx(b, loc, Type(),
      {bar, arith::ConstantIntOp::create(b, loc, b.getI32Type(), total)},
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [$0], $1;",
      "l,r");
  for (auto [i, in] : llvm::enumerate(persist.inputs)) {
    ptx(b, loc, Type(),
        {sharedAddress(b, loc, persist.views[i]),
         shareAddress(b, loc, in, row),
         arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                      shareCols() * int64_t(in.bytes)),
         bar},
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[$0], [$1], $2, [$3];",
        "l,l,r,l");
  }
}

SmallVector<SmallVector<Value>>
RowKernel::clusterGather(OpBuilder &b, Location loc, Value tid,
                         ArrayRef<Value> totals) {
  if (asyncExchange)
    return asyncClusterGather(b, loc, tid, totals);
  ArrayRef<Value> mine = ArrayRef<Value>(slots).slice(nextSlot, totals.size());
  nextSlot += totals.size();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value isFirst = isZero(b, loc, tid);
  // Every block's totals are in its slots once the whole cluster has
  // arrived: the storing thread orders its stores before its arrival with
  // a cluster-scope fence, the wait acquires. Every thread arrives relaxed:
  // with release semantics each warp waits for a cluster-wide fence (22% of
  // the stall samples of a 262144-wide softmax on an H100, 231 us against
  // 216 us this way); and threads of one block arriving by different
  // instructions, the storing one with release and the others relaxed,
  // hung there.
  auto store = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
  {
    OpBuilder sb = store.getThenBodyBuilder();
    for (auto [i, total] : llvm::enumerate(totals))
      memref::StoreOp::create(sb, loc, total, mine[i], ValueRange{c0});
    // (fence.acq_rel: NVVM's cluster-scope fence op is the heavier fence.sc)
    ptx(sb, loc, Type(), {}, "fence.acq_rel.cluster;", "");
  }
  NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  SmallVector<SmallVector<Value>> all(cluster);
  for (int64_t j = 0; j < cluster; ++j)
    for (auto [i, total] : llvm::enumerate(totals)) {
      Value remote = NVVM::MapaOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
          sharedAddress(b, loc, mine[i]),
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), j));
      all[j].push_back(
          LLVM::LoadOp::create(b, loc, total.getType(), remote));
      lastCombined = all[j].back();
    }
  return all;
}

Value RowKernel::clusterCombine(OpBuilder &b, Location loc, Value tid,
                                Value total, gpu::AllReduceOperation kind) {
  // (every block combines the same values in the same, rank, order)
  Value acc;
  for (ArrayRef<Value> block : clusterGather(b, loc, tid, total))
    acc = acc ? vector::makeArithReduction(
                    b, loc, gpu::convertReductionKind(kind), acc, block[0])
              : block[0];
  return acc;
}

/// The type a reduction's partials are combined in across threads.
static Type combinedType(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && it.getWidth() < 32 ? IntegerType::get(t.getContext(), 32) : t;
}

/// Combines `v` over the lanes of a warp that agree modulo `from` (a power
/// of two; 1: all 32) with xor shuffles: each of those lanes ends with the
/// same total (each step combines the same two values on both lanes of a
/// pair).
static Value warpTotal(OpBuilder &b, Location loc, Value v,
                       vector::CombiningKind kind, int32_t from = 1) {
  // (shfl moves 32 bits: f16 and bf16 travel as the low half of an i32)
  Type type = v.getType();
  unsigned bits = type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 32;
  auto shuffle = [&](Value x, int32_t offset) -> Value {
    if (bits >= 32)
      return gpu::ShuffleOp::create(b, loc, x, offset, 32,
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    Type narrow = b.getIntegerType(bits);
    if (isa<FloatType>(type))
      x = arith::BitcastOp::create(b, loc, narrow, x);
    x = arith::ExtUIOp::create(b, loc, b.getI32Type(), x);
    x = gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = arith::TruncIOp::create(b, loc, narrow, x);
    if (isa<FloatType>(type))
      x = arith::BitcastOp::create(b, loc, type, x);
    return x;
  };
  for (int32_t offset = from; offset < 32; offset *= 2)
    v = vector::makeArithReduction(b, loc, kind, v, shuffle(v, offset));
  return v;
}

/// The allocation or argument `v` views.
static Value viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

SmallVector<RowKernel::RowMajorInput> RowKernel::rowMajorInputs() {
  // (a program argument, a view of one such as a group norm's (n, g, c, h,
  // w), an earlier kernel's result; whole 16-byte vectors, so that the
  // runtime holds the buffer to 16-byte alignment)
  SmallVector<RowMajorInput> inputs;
  for (linalg::GenericOp g : generics)
    for (OpOperand *in : g.getDpsInputOperands()) {
      auto type = dyn_cast<MemRefType>(in->get().getType());
      AffineMap map = g.getMatchingIndexingMap(in);
      if (!type || type.getMemorySpace() ||
          writerBefore(in->get(), position[g]) || !map.isIdentity() ||
          map.getNumDims() != rowShape.size() + colShape.size() ||
          !type.getLayout().isIdentity() || !type.hasStaticShape() ||
          !type.getElementType().isIntOrFloat())
        continue;
      unsigned bits = type.getElementTypeBitWidth();
      if (bits % 8 != 0 || width * bits % 128 != 0 ||
          totalCols * bits / 8 % 16 != 0 || shareCols() * bits / 8 % 16 != 0)
        continue;
      // (identity maps over the kernel's loops, identity layouts: views of
      // one root with one element type address the same bytes)
      // (by index: a new record may move the others)
      auto same = llvm::find_if(inputs, [&](const RowMajorInput &r) {
        return viewRoot(r.buffer) == viewRoot(in->get()) &&
               r.bytes == bits / 8;
      });
      size_t at = same - inputs.begin();
      if (at == inputs.size())
        inputs.push_back({in->get(), bits / 8, {}});
      RowMajorInput &r = inputs[at];
      if (!llvm::is_contained(r.reads, std::make_pair(in->get(), map)))
        r.reads.push_back({in->get(), map});
    }
  return inputs;
}

Value RowKernel::shareAddress(OpBuilder &b, Location loc,
                              const RowMajorInput &in, Value row) {
  auto cIdx = kfuse::indexConstants(b, loc);
  Value first = arith::MulIOp::create(b, loc, row, cIdx(totalCols));
  if (colBase)
    first = arith::AddIOp::create(b, loc, first, colBase);
  return byteAddress(b, loc, in.buffer,
                     arith::MulIOp::create(b, loc, first, cIdx(in.bytes)));
}

Value RowKernel::sharedView(Location loc, MemRefType type, int64_t bytes) {
  OpBuilder vb = OpBuilder::atBlockBegin(&launchOp.getBody().front());
  auto workgroup = gpu::AddressSpaceAttr::get(vb.getContext(),
                                              gpu::AddressSpace::Workgroup);
  if (!dynamicShared)
    dynamicShared = gpu::DynamicSharedMemoryOp::create(
        vb, loc,
        MemRefType::get({ShapedType::kDynamic}, vb.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
  vb.setInsertionPointAfter(dynamicShared.getDefiningOp());
  Value view = memref::ViewOp::create(
      vb, loc,
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(), workgroup),
      dynamicShared, arith::ConstantIndexOp::create(vb, loc, sharedBytes),
      ValueRange{});
  sharedBytes += (bytes + 15) / 16 * 16;
  return view;
}

void RowKernel::prefetchLaterRow(OpBuilder &b, Location loc, Value tid) {
  if (!prefetch.row || prefetch.done)
    return;
  prefetch.done = true;
  // (the inputs read at every column of the row: a weight read by every row
  // is in L2 already)
  SmallVector<RowMajorInput> inputs = rowMajorInputs();
  if (inputs.empty())
    return;
  Value later = arith::AddIOp::create(
      b, loc, prefetch.row, arith::ConstantIndexOp::create(b, loc, prefetchRows));
  OpBuilder ib = firstThreadOnRow(b, loc, tid, later);
  for (const RowMajorInput &in : inputs) {
    Value size = arith::ConstantIntOp::create(
        ib, loc, ib.getI32Type(), shareCols() * int64_t(in.bytes));
    ptx(ib, loc, Type(), {shareAddress(ib, loc, in, later), size},
        "cp.async.bulk.prefetch.L2.global [$0], $1;", "l,r");
  }
}

Value RowKernel::blockCombine(OpBuilder &b, Location loc, Value tid,
                              Value partial, gpu::AllReduceOperation kind,
                              bool acrossCluster) {
  using K = gpu::AllReduceOperation;
  prefetchLaterRow(b, loc, tid);
  Type type = partial.getType(), wide = combinedType(type);
  if (wide != type)
    partial = kind == K::MAXSI || kind == K::MINSI
                  ? arith::ExtSIOp::create(b, loc, wide, partial).getResult()
                  : arith::ExtUIOp::create(b, loc, wide, partial).getResult();
  // Blocks are whole warps. Each warp folds its lanes; lane 0 of each
  // writes the warp's total to its own workgroup buffer, and after one
  // barrier every warp folds all the warps' totals, so every thread holds
  // the block's total with no broadcast (upstream gpu.all_reduce has every
  // lane of the first warp store to one place, with different values when
  // the warp count is not a power of two).
  // Row tiles: the same with the lanes of one row (equal modulo L =
  // rowsPerBlock) in place of the whole warp, a slot per warp and row, and
  // each lane folding the slots of warps lane / L, + 32 / L, ... of its row.
  vector::CombiningKind vk = gpu::convertReductionKind(kind);
  int64_t rowLanes = rowsPerBlock;
  Value total = warpTotal(b, loc, partial, vk, rowLanes);
  int64_t warps = blockThreads / 32 / packedRows; // (a row's)
  if (warps > 1) {
    auto cIdx = kfuse::indexConstants(b, loc);
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    // (packed column sums over groups wider than a warp: a slot for every
    // warp of the block, group g's warps from g * warps on)
    Value scratch = launchOp.addWorkgroupAttribution(
        MemRefType::get({warps * packedRows * rowLanes}, wide,
                        MemRefLayoutAttrInterface(), space),
        loc);
    Value lane = arith::RemUIOp::create(b, loc, tid, cIdx(32));
    Value warp = arith::DivUIOp::create(b, loc, tid, cIdx(32));
    if (packedRows > 1)
      warp = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, packWarp, cIdx(warps)), warp);
    Value rowLane = cIdx(0), warpInRound = lane;
    if (rowLanes > 1) {
      rowLane = arith::RemUIOp::create(b, loc, lane, cIdx(rowLanes));
      warpInRound = arith::DivUIOp::create(b, loc, lane, cIdx(rowLanes));
    }
    Value tile = cIdx(rowLanes);
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          lane, tile);
    Value mine = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, warp, tile), lane);
    auto store = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
    OpBuilder sb = store.getThenBodyBuilder();
    memref::StoreOp::create(sb, loc, total, scratch, ValueRange{mine});
    gpu::BarrierOp::create(b, loc);
    int64_t perRound = 32 / rowLanes;
    Value v;
    for (int64_t round = 0; round * perRound < warps; ++round) {
      // warps past the last contribute the neutral element
      Value w = arith::AddIOp::create(b, loc, warpInRound,
                                      cIdx(round * perRound));
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            w, cIdx(warps));
      if ((round + 1) * perRound > warps)
        w = arith::MinUIOp::create(b, loc, w, cIdx(warps - 1));
      if (packedRows > 1)
        w = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, packWarp, cIdx(warps)), w);
      Value at = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, w, cIdx(rowLanes)), rowLane);
      Value slot = memref::LoadOp::create(b, loc, scratch, ValueRange{at});
      if ((round + 1) * perRound > warps)
        slot = arith::SelectOp::create(
            b, loc, inRange, slot,
            arith::ConstantOp::create(b, loc, neutral(b, kind, wide)));
      v = v ? vector::makeArithReduction(b, loc, vk, v, slot) : slot;
    }
    total = warpTotal(b, loc, v, vk, rowLanes);
  }
  if (!acrossCluster)
    return total;
  if (cluster > 1)
    total = clusterCombine(b, loc, tid, total, kind);
  if (wide != type)
    total = arith::TruncIOp::create(b, loc, type, total);
  return total;
}

/// Register mode: column thread `c` (`tid`, but in row tiles) owns columns
/// [(k * t + c) * width, +width) for k < chunks. Everything is
/// straight-line code, so a value computed in one phase (e.g. exp(x - max)
/// for the sum) is reused by the next (the division) from registers, and
/// each input element is loaded once.
RowKernel::ChunkPlaces RowKernel::placeChunks(OpBuilder &kb, Location loc,
                                              Value colThread,
                                              ArrayRef<Value> rowIdx, int64_t t,
                                              int64_t numCols) {
  auto cIdx = kfuse::indexConstants(kb, loc);
  // (cluster mode: this block's share of the row, from colBase on)
  bool ragged = shifted || numCols % (t * width) != 0;
  // (shifted: the row's width, numCols being the block's share in cluster
  // mode, and per chunk whether it may pass the row's end or the share's)
  int64_t rowWidth = 1;
  for (int64_t d : colShape)
    rowWidth *= d;
  ChunkPlaces places;
  places.ragged = ragged;
  SmallVector<bool> &mayPass = places.mayPass;
  SmallVector<SmallVector<Value>> &points = places.points;
  SmallVector<Value> &valid = places.valid, &inRow = places.inRow;
  for (int64_t k = 0; k < chunks; ++k) {
    Value col = arith::MulIOp::create(
        kb, loc, arith::AddIOp::create(kb, loc, colThread, cIdx(k * t)),
        cIdx(width));
    if (shifted) {
      // (virtual columns, in cluster mode this block's share of them from
      // colBase on; a chunk past the row's end, or past the block's share,
      // loads nothing: see chunkInside)
      // (only a thread's first chunk may start before the row; without
      // clusters only chunks past the row's first (k + 1) t width - width
      // columns end after it)
      Value local = col;
      if (colBase)
        col = arith::AddIOp::create(kb, loc, colBase, col);
      col = arith::SubIOp::create(kb, loc, col, rowShift);
      bool pastShare = cluster > 1 && (k + 1) * t * width > numCols;
      bool tail = cluster > 1 || (k + 1) * t * width > numCols;
      mayPass.push_back(tail);
      Value ok = tail
                     ? arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::slt,
                                             col, cIdx(rowWidth))
                           .getResult()
                     : arith::ConstantIntOp::create(kb, loc, 1, 1).getResult();
      if (pastShare)
        ok = arith::AndIOp::create(
            kb, loc, ok,
            arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, local,
                                  cIdx(numCols)));
      valid.push_back(ok);
      Value lanes = shiftedChunk(kb, loc, rowIdx, col, rowWidth,
                                 /*head=*/k == 0, tail);
      if (pastShare)
        lanes = arith::AndIOp::create(
            kb, loc, lanes,
            vector::BroadcastOp::create(kb, loc, lanes.getType(), ok));
      inRow.push_back(lanes);
      SmallVector<Value> idx(rowIdx);
      idx.push_back(col);
      points.push_back(idx);
      continue;
    }
    if (ragged) {
      Value ok = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, col,
                                       cIdx(numCols));
      valid.push_back(ok);
      col = arith::SelectOp::create(kb, loc, ok, col, cIdx(0)); // in bounds
    }
    if (colBase)
      col = arith::AddIOp::create(kb, loc, colBase, col);
    SmallVector<Value> idx(rowIdx);
    llvm::append_range(idx, kfuse::delinearize(kb, loc, col, colShape));
    points.push_back(idx);
  }
  return places;
}

llvm::DenseMap<Operation *, RowKernel::Online> RowKernel::jointOnlineSums() {
  llvm::DenseMap<Operation *, Online> pairedSums;
  if (cluster == 1 || perThread || !jointExchange)
    return pairedSums;
  for (linalg::GenericOp s : generics) {
    std::optional<Online> on = s.getNumReductionLoops() > 0
                                   ? onlinePartner(s)
                                   : std::optional<Online>();
    if (!on)
      continue;
    bool apart = false;
    for (unsigned p = position[on->max] + 1; p < position[s]; ++p) {
      linalg::GenericOp h = generics[p];
      llvm::SmallPtrSet<Operation *, 8> deps;
      rowDeps(h, deps);
      apart |= h.getNumReductionLoops() > 0 ||
               (isRowSpace(h) && deps.contains(on->max));
    }
    if (!apart)
      pairedSums[s] = *on;
  }
  return pairedSums;
}

llvm::DenseMap<Operation *, RowKernel::JointCentered>
RowKernel::jointCenteredSums(int64_t numCols) {
  // (numCols: the block's share, the same in every block when not shifted)
  llvm::DenseMap<Operation *, JointCentered> jointCentered;
  llvm::DenseSet<Operation *> means;
  if (cluster == 1 || perThread || !jointExchange || shifted)
    return jointCentered;
  for (linalg::GenericOp v : generics) {
    if (v.getNumReductionLoops() == 0)
      continue;
    llvm::SmallPtrSet<Operation *, 8> eDeps;
    std::optional<Centered> c = centeredPartner(v, eDeps);
    if (!c || !c->squares)
      continue;
    linalg::GenericOp sg;
    for (unsigned p = position[v]; p-- > 0 && !sg;)
      if (linalg::GenericOp h = generics[p]; h.getNumReductionLoops() > 0)
        sg = h;
    if (!sg || means.contains(sg) || position[c->qWriter] < position[sg] ||
        llvm::any_of(
            eDeps, [&](Operation *d) { return position[d] >= position[sg]; }))
      continue;
    // (s: a float sum of e alone)
    std::optional<Combiner> comb = findCombiner(sg);
    Value e;
    for (Operation *user : c->center.value.getUsers())
      if (auto sub = dyn_cast<arith::SubFOp>(user);
          sub && sub.getRhs() == c->center.value)
        e = sub.getLhs();
    if (!comb || comb->kind != gpu::AllReduceOperation::ADD ||
        !isa<arith::AddFOp>(comb->op) || !e)
      continue;
    Value term = comb->termOf(sg);
    if (term.getType() != e.getType() || !sameValue(term, sg, e, v))
      continue;
    jointCentered[v] = {sg, *c};
    means.insert(sg);
  }
  return jointCentered;
}

LogicalResult RowKernel::storeChunks(OpBuilder &kb, Location loc,
                                     const ChunkPlaces &places, Cache &cache) {
  bool ragged = places.ragged;
  ArrayRef<SmallVector<Value>> points = places.points;
  ArrayRef<Value> valid = places.valid;
  // Full-space results: each chunk stored once, from registers (terms of a
  // column sum folded into its partials instead). A kernel without
  // reductions (a split's store) computes every chunk before it stores
  // any, so that the chunks' loads are in flight together (a store may
  // alias a later load: nothing moves a load above it).
  bool loadsFirst = !hasReductions();
  SmallVector<std::function<void()>> laterStores;
  for (auto [g, i] : fullSpaceOutputs()) {
    Value init = g.getDpsInits()[i];
    AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(i));
    auto sum = llvm::find_if(
        columnSums, [&](const ColumnSum &c) { return c.terms == init; });
    for (int64_t k = 0; k < chunks; ++k) {
      auto v =
          valueAt(kb, loc, init, position[g] + 1, outMap, points[k], cache, k);
      if (failed(v))
        return failure();
      if (accumulating && sum != columnSums.end()) {
        Value &acc = columnPartials[(sum - columnSums.begin()) * chunks + k];
        Value next = vector::makeArithReduction(
            kb, loc, gpu::convertReductionKind(sum->kind), *v, acc);
        acc = ragged ? arith::SelectOp::create(kb, loc, valid[k], next, acc)
                           .getResult()
                     : next;
        continue;
      }
      auto store = [&, g = g, init, outMap, k, value = *v]() {
        OpBuilder sb = kb;
        if (ragged)
          sb = scf::IfOp::create(kb, loc, valid[k], /*withElse=*/false)
                   .getThenBodyBuilder();
        storeColumns(sb, loc, value, init, outMap, points[k]);
      };
      if (loadsFirst)
        laterStores.push_back(store);
      else
        store();
    }
  }
  for (auto &store : laterStores)
    store();
  return success();
}

Value RowKernel::blockMean(OpBuilder &kb, Location loc, Value sb,
                           int64_t numCols) {
  return arith::MulFOp::create(
      kb, loc, sb, floatConstant(kb, loc, sb.getType(), 1.0 / double(numCols)));
}

LogicalResult
RowKernel::evalDeferred(OpBuilder &kb, Location loc, ArrayRef<Value> rowIdx,
                        Exchanges &x, unsigned before,
                        SmallVector<std::pair<Value, Value>> &rowOutputs) {
  SmallVector<linalg::GenericOp> &deferred = x.deferred;
  while (!deferred.empty() && position[deferred.front()] < before) {
    if (failed(evalRowSpace(kb, loc, deferred.front(), rowIdx, rowOutputs)))
      return failure();
    deferred.erase(deferred.begin());
  }
  return success();
}

bool RowKernel::exchangeWaits(const Exchanges &x, linalg::GenericOp g) {
  llvm::SmallPtrSet<Operation *, 8> waiting;
  for (const Exchanges::Pending &p : x.pending)
    waiting.insert(p.g);
  for (unsigned pos = position[g] + 1; pos < generics.size(); ++pos) {
    linalg::GenericOp h = generics[pos];
    bool reduction = h.getNumReductionLoops() > 0;
    if (!reduction && !isRowSpace(h))
      continue; // (full-space ops are evaluated where they are read)
    llvm::SmallPtrSet<Operation *, 8> deps;
    rowDeps(h, deps);
    auto pairedWith = x.pairedSums.find(h);
    for (Operation *d : deps)
      if (waiting.contains(d) &&
          (pairedWith == x.pairedSums.end() || d != pairedWith->second.max))
        return false;
    if (reduction)
      return true;
  }
  return false;
}

LogicalResult
RowKernel::exchangePending(OpBuilder &kb, Location loc, Value tid,
                           ArrayRef<Value> rowIdx, int64_t numCols,
                           Exchanges &x,
                           SmallVector<std::pair<Value, Value>> &rowOutputs) {
  // (the block totals in the type they combine in: narrow integers as i32)
  SmallVector<Value> totals;
  for (const Exchanges::Pending &p : x.pending)
    totals.push_back(p.total);
  SmallVector<SmallVector<Value>> blocks = clusterGather(kb, loc, tid, totals);
  llvm::DenseMap<Operation *, std::pair<unsigned, Value>> maxes;
  llvm::DenseMap<Operation *, unsigned> slotOf;
  for (auto [i, p] : llvm::enumerate(x.pending))
    slotOf[p.g] = i;
  for (auto [i, p] : llvm::enumerate(x.pending)) {
    Combiner comb = *findCombiner(p.g);
    Value total;
    if (auto jc = x.jointCentered.find(p.g); jc != x.jointCentered.end()) {
      // q's ops (and any other reading s) first, then
      // v = sum v_b + n_b (mu_b - mean)^2 + n (mean - q)^2.
      if (failed(evalDeferred(kb, loc, rowIdx, x, position[p.g], rowOutputs)))
        return failure();
      const Centered &c = jc->second.c;
      unsigned si = slotOf.lookup(jc->second.mean);
      Type t = p.total.getType();
      // (means as products with the reciprocal: any centre near the
      // block's mean serves, as long as the block squared around this
      // same mu_b; no division's slow path)
      Value n = floatConstant(kb, loc, t, double(numCols * cluster));
      Value nb = floatConstant(kb, loc, t, double(numCols));
      Value sum;
      for (ArrayRef<Value> block : blocks)
        sum = sum ? arith::AddFOp::create(kb, loc, sum, block[si]).getResult()
                  : block[si];
      Value mean = arith::MulFOp::create(
          kb, loc, sum,
          floatConstant(kb, loc, t, 1.0 / double(numCols * cluster)));
      for (ArrayRef<Value> block : blocks) {
        Value d = arith::SubFOp::create(
            kb, loc, blockMean(kb, loc, block[si], numCols), mean);
        Value term = arith::AddFOp::create(
            kb, loc, block[i],
            arith::MulFOp::create(kb, loc, nb,
                                  arith::MulFOp::create(kb, loc, d, d)));
        total = total ? arith::AddFOp::create(kb, loc, total, term).getResult()
                      : term;
      }
      Value q = rowValueBefore(c.qBuffer, position[p.g]);
      if (!q)
        return p.g.emitError() << "kfuse: kernel '" << name
                               << "' reads a row value before computing it";
      Value off = arith::SubFOp::create(kb, loc, mean, c.center.of(kb, loc, q));
      total = arith::AddFOp::create(
          kb, loc, total,
          arith::MulFOp::create(kb, loc, n,
                                arith::MulFOp::create(kb, loc, off, off)));
    } else if (auto paired = x.pairedSums.find(p.g);
               paired != x.pairedSums.end()) {
      const Online &on = paired->second;
      auto [mi, m] = maxes.lookup(on.max);
      for (ArrayRef<Value> block : blocks) {
        Value term = arith::MulFOp::create(kb, loc, block[i],
                                           rescale(kb, loc, block[mi], m));
        total = total ? arith::AddFOp::create(kb, loc, total, term).getResult()
                      : term;
      }
      // sum(exp(e - r)), r from the row's max (its init folded in).
      Value row = rowValueBefore(on.maxBuffer, position[p.g]);
      total = onlineSum(kb, loc, total, m, on.ref.of(kb, loc, row));
    } else {
      for (ArrayRef<Value> block : blocks)
        total = total ? vector::makeArithReduction(
                            kb, loc, gpu::convertReductionKind(comb.kind),
                            total, block[i])
                      : block[i];
      if (x.blockMaxes.contains(p.g))
        maxes[p.g] = {unsigned(i), total};
      Type type =
          cast<MemRefType>(p.g.getDpsInits()[0].getType()).getElementType();
      if (type != total.getType())
        total = arith::TruncIOp::create(kb, loc, type, total);
    }
    if (failed(finishReduction(kb, loc, p.g, comb, total, rowIdx, rowOutputs)))
      return failure();
  }
  x.pending.clear();
  return evalDeferred(kb, loc, rowIdx, x, generics.size(), rowOutputs);
}

RowKernel::Exchanges RowKernel::planExchanges(int64_t numCols) {
  // Cluster mode, fast numerics: a max m = max(e) and a later sum of
  // exp(e - r(m)) (a softmax's, a log-sum-exp's) cross the cluster in one
  // exchange instead of two (each a cluster-wide fence and barrier, or an
  // mbarrier wait): each block sums exp(e - m_b) against its own max m_b,
  // then the blocks' (m_b, s_b) meet, and every block takes m = max m_b
  // and sum s_b exp(m_b - m), as a streaming pass rescales its running sum
  // (see emitStreamingPass). Only where nothing between the two reads m
  // and no other reduction comes between (by the sum).
  Exchanges x;
  x.pairedSums = jointOnlineSums();
  for (auto &[sum, on] : x.pairedSums)
    x.blockMaxes[on.max] = Value();
  // Cluster mode, fast numerics: a sum s of e and a later centered sum
  // v = sum((e - q)^2), q computed from s (a variance around the mean: a
  // layer or group norm's), cross the cluster in one exchange instead of
  // two: each block sums (e - mu_b)^2 around its own mean mu_b = s_b / n_b,
  // then the blocks' (s_b, v_b) meet and every block takes the row's
  // M2 = sum v_b + n_b (mu_b - mean)^2 (Chan et al.), and v = M2 +
  // n (mean - q)^2. The row-space ops reading s before v (q's) wait for the
  // exchange. Only where no other reduction comes between, s sums the same
  // e, and e reads nothing computed from s on; blocks of equal shares.
  x.jointCentered = jointCenteredSums(numCols);
  for (auto &[v, joint] : x.jointCentered)
    x.meanTotals[joint.mean] = Value();
  return x;
}

FailureOr<Value>
RowKernel::foldChunks(OpBuilder &kb, Location loc, linalg::GenericOp g,
                      const Combiner &comb, const ChunkPlaces &places,
                      int64_t numCols, Exchanges &x, Cache &cache,
                      SmallVector<BlockExps> &blockExps) {
  auto paired = x.pairedSums.find(g);
  // (a paired sum is evaluated against m_b: a cache of its own, so that
  // no later phase reuses what it computes)
  Cache pairCache;
  Cache &phaseCache = paired != x.pairedSums.end() ? pairCache : cache;
  Value blockRef;
  auto centeredPair = x.jointCentered.find(g);
  Cache centeredCache;
  if (centeredPair != x.jointCentered.end()) {
    // (e - mu_b) in place of e - q: q's ops wait for the exchange
    const Centered &c = centeredPair->second.c;
    Value sb = x.meanTotals.lookup(centeredPair->second.mean);
    Value mu = blockMean(kb, loc, sb, numCols);
    rowValues[c.qBuffer].push_back({position[c.qWriter], mu});
    bodyOverrides[c.center.value] = mu;
  }
  Cache &evalCache =
      centeredPair != x.jointCentered.end() ? centeredCache : phaseCache;
  if (paired != x.pairedSums.end()) {
    // exp(e - m_b) in place of exp(e - r(m)); 0 in place of a max of
    // -inf (every e of the block -inf: terms 0, not NaN).
    const Online &on = paired->second;
    Value mb = x.blockMaxes.lookup(on.max);
    Value none =
        arith::CmpFOp::create(kb, loc, arith::CmpFPredicate::OEQ, mb,
                              floatConstant(kb, loc, mb.getType(), 0, -1));
    blockRef = arith::SelectOp::create(
        kb, loc, none, floatConstant(kb, loc, mb.getType(), 0.0), mb);
    rowValues[on.maxBuffer].push_back({position[on.max], blockRef});
    bodyOverrides[on.ref.value] = blockRef;
    // (only where the sum's reference is m itself: torch's
    // isinf(m) ? 0 : m may lie below m_b, and exp(m_b - r) overflow)
    if (on.ref.ops.empty())
      blockExps.push_back({mb, blockRef, on.maxBuffer, position[on.max]});
  }
  Type accType =
      cast<MemRefType>(g.getDpsInits()[0].getType()).getElementType();
  Value partial =
      arith::ConstantOp::create(kb, loc, neutral(kb, comb.kind, accType));
  partial = splat(kb, loc, partial);
  for (int64_t k = 0; k < chunks; ++k) {
    auto next = evalBody(kb, loc, g, places.points[k], evalCache, partial, k);
    if (failed(next))
      return failure();
    partial = places.ragged
                  ? arith::SelectOp::create(
                        kb, loc, shifted ? places.inRow[k] : places.valid[k],
                        (*next)[0], partial)
                        .getResult()
                  : (*next)[0];
  }
  if (blockRef) {
    rowValues[paired->second.maxBuffer].pop_back();
    bodyOverrides.erase(paired->second.ref.value);
  }
  if (centeredPair != x.jointCentered.end()) {
    rowValues[centeredPair->second.c.qBuffer].pop_back();
    bodyOverrides.erase(centeredPair->second.c.center.value);
  }
  endPhase(cache);
  if (width > 1)
    partial = vector::ReductionOp::create(
        kb, loc, gpu::convertReductionKind(comb.kind), partial);
  return partial;
}

LogicalResult RowKernel::emitReductionPhase(
    OpBuilder &kb, Location loc, Value tid, linalg::GenericOp g,
    const ChunkPlaces &places, ArrayRef<Value> rowIdx, int64_t numCols,
    Exchanges &x, Cache &cache, SmallVector<BlockExps> &blockExps,
    SmallVector<std::pair<Value, Value>> &rowOutputs) {
  Combiner comb = *findCombiner(g);
  bool pairedMax = x.blockMaxes.contains(g);
  FailureOr<Value> partial =
      foldChunks(kb, loc, g, comb, places, numCols, x, cache, blockExps);
  if (failed(partial))
    return failure();
  // (cluster mode with joint exchanges: the block's total alone, its
  // exchange made with the pending reductions', see exchangePending)
  bool batching = cluster > 1 && jointExchange;
  Value total =
      perThread ? *partial
                : blockCombine(kb, loc, tid, *partial, comb.kind, !batching);
  if (!batching)
    return finishReduction(kb, loc, g, comb, total, rowIdx, rowOutputs);
  if (pairedMax)
    x.blockMaxes[g] = total;
  bool centeredMean = x.meanTotals.contains(g);
  if (centeredMean)
    x.meanTotals[g] = total;
  x.pending.push_back({g, total});
  if (pairedMax || centeredMean || exchangeWaits(x, g))
    return success();
  return exchangePending(kb, loc, tid, rowIdx, numCols, x, rowOutputs);
}

bool RowKernel::waitsForExchange(linalg::GenericOp g, const Exchanges &x) {
  // (reading a sum whose exchange waits for its centered sum: after it)
  llvm::SmallPtrSet<Operation *, 8> deps;
  if (!x.pending.empty())
    rowDeps(g, deps);
  return llvm::any_of(
             x.pending,
             [&](const Exchanges::Pending &p) { return deps.contains(p.g); }) ||
         llvm::any_of(x.deferred,
                      [&](linalg::GenericOp d) { return deps.contains(d); });
}

LogicalResult RowKernel::emitRegisterPhases(
    OpBuilder &kb, Location loc, Value tid, Value colThread,
    ArrayRef<Value> rowIdx, int64_t t, int64_t numCols,
    SmallVector<std::pair<Value, Value>> &rowOutputs) {
  ChunkPlaces places = placeChunks(kb, loc, colThread, rowIdx, t, numCols);
  bool ragged = places.ragged;
  ArrayRef<bool> mayPass = places.mayPass;
  ArrayRef<Value> valid = places.valid, inRow = places.inRow;
  // Chunks that may pass the row's end load under their test.
  chunkInside.assign(chunks, Value());
  if (ragged)
    for (int64_t k = 0; k < chunks; ++k)
      if (shifted ? mayPass[k] : (k + 1) * t * width > numCols)
        chunkInside[k] = valid[k];
  llvm::scope_exit done([&] { chunkInside.clear(); });
  // (guards hold in the lanes past the row: they read padding)
  liveChunks.assign(shifted ? inRow : valid);
  llvm::scope_exit noLanes([&] { liveChunks.clear(); });
  phaseBlock = kb.getInsertionBlock();
  sharedThread = colThread;
  Cache cache; // one for the kernel: phases share what they computed
  Exchanges x = planExchanges(numCols);
  SmallVector<BlockExps> blockExps;
  // A ragged row's chunks past its end load under a test: the first
  // phase's loads of every chunk first, before any chunk's fold, so that
  // they are in flight together (loaded where first used, the last chunk's
  // load waited for the fold of those before its test). Up to 4 chunks a
  // thread: with 8 (row_chunks=8), a shifted softmax over clusters of 8
  // spilled 140 bytes a thread instead of 12.
  if (ragged && chunks <= 4)
    if (auto first = llvm::find_if(
            generics,
            [](linalg::GenericOp g) { return g.getNumReductionLoops() > 0; });
        first != generics.end() &&
        failed(prefetchInputs(kb, loc, {*first}, places.points, rowIdx.size(),
                              /*ordered=*/false, cache)))
      return failure();
  for (linalg::GenericOp g : generics) {
    if (g.getNumReductionLoops() > 0) {
      if (failed(emitReductionPhase(kb, loc, tid, g, places, rowIdx, numCols, x,
                                    cache, blockExps, rowOutputs)))
        return failure();
    } else if (isRowSpace(g)) {
      if (waitsForExchange(g, x)) {
        x.deferred.push_back(g);
        continue;
      }
      if (failed(evalRowSpace(kb, loc, g, rowIdx, rowOutputs)))
        return failure();
    }
  }
  assert(x.pending.empty() && "a reduction's cluster exchange left pending");
  assert(x.deferred.empty() && "a row-space op left waiting for an exchange");
  if (failed(storeChunks(kb, loc, places, cache)))
    return failure();
  // A later phase's exp(e - m) is the paired sum's exp(e - m_b) times
  // exp(m_b - m), one exp a block instead of one an element (a chunk in
  // shared memory has exp(e - m_b) stored over e in its slot).
  for (const BlockExps &be : blockExps) {
    Value m = rowValueBefore(be.maxBuffer, be.maxPosition + 1);
    if (m && m.getDefiningOp())
      reuseBlockExps(phaseBlock->getParentOp(), be.blockMax, be.blockRef, m);
  }
  return success();
}

/// Where `exp(e - m)` (m the row's max, broadcast over a vector's lanes or
/// not) follows `t = exp(e - r_b)` of the same value e, `r_b` the block's
/// reference for its max m_b (m_b, or 0 where m_b is -inf: e is then -inf
/// and t 0), and t dominates it: replaces it with t * c, c = exp(m_b - m)
/// (1 where they are equal: both +inf), or exp(-inf - m) where m_b is -inf
/// (0, or NaN where m is -inf or NaN, as exp(e - m) is). A chunk in shared
/// memory is a new load (a new e) in each phase: where the thread's slot is
/// only ever read back into exp(e - m), t is stored over e in the slot and
/// the later loads are scaled in place of their exps.
void RowKernel::reuseBlockExps(Operation *scope, Value blockMax,
                               Value blockRef, Value m) {
  auto scalarOf = [](Value v) {
    if (auto b = v.getDefiningOp<vector::BroadcastOp>())
      return b.getSource();
    return v;
  };
  SmallVector<math::ExpOp> exps;
  scope->walk([&](math::ExpOp exp) { exps.push_back(exp); });
  llvm::DenseMap<Value, Value> againstBlock; // e -> exp(e - r_b)
  SmallVector<std::pair<math::ExpOp, Value>> againstRow; // (exp, e)
  for (math::ExpOp exp : exps) {
    auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
    if (!sub)
      continue;
    Value ref = scalarOf(sub.getRhs());
    if (ref == blockRef)
      againstBlock.try_emplace(sub.getLhs(), exp.getResult());
    else if (ref == m)
      againstRow.push_back({exp, sub.getLhs()});
  }
  if (againstBlock.empty() || againstRow.empty())
    return;
  DominanceInfo dom(scope);
  // A chunk kept in shared memory is loaded again by each later phase (a
  // new value of e): where every later load of its slot only feeds
  // exp(e - m), the slot takes exp(e - r_b) in place of e once the sum has
  // it (this thread's own slot: no barrier), and the later phases scale it.
  using Slot = std::tuple<Value, int64_t, Value>; // (view, chunk, thread)
  auto slotOf = [](Value e) -> std::optional<Slot> {
    auto load = e.getDefiningOp<memref::LoadOp>();
    APInt chunk;
    if (!load || !load.getMemRef().getDefiningOp<memref::ViewOp>() ||
        load.getIndices().size() != 2 ||
        !matchPattern(load.getIndices()[0], m_ConstantInt(&chunk)))
      return std::nullopt;
    return Slot{load.getMemRef(), chunk.getSExtValue(), load.getIndices()[1]};
  };
  // (in program order: the stores below are made in a fixed order)
  SmallVector<std::pair<Slot, Value>> slotExps; // slot, exp(e - r_b) of its e
  for (math::ExpOp exp : exps) {
    auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
    if (!sub || scalarOf(sub.getRhs()) != blockRef ||
        exp->getBlock() != phaseBlock)
      continue;
    if (std::optional<Slot> slot = slotOf(sub.getLhs()))
      slotExps.push_back({*slot, exp.getResult()});
  }
  llvm::SmallDenseSet<Value> rewritable; // later loads of those slots
  for (auto [slot, t] : slotExps) {
    bool ok = true;
    SmallVector<Value> later;
    scope->walk([&](memref::LoadOp load) {
      if (load.getMemRef() != std::get<0>(slot))
        return;
      std::optional<Slot> at = slotOf(load.getResult());
      // a load that may read this slot from another thread (or an unknown
      // chunk) would see exp(e - r_b): keep e there
      if (!at || (std::get<1>(*at) == std::get<1>(slot) &&
                  std::get<2>(*at) != std::get<2>(slot))) {
        ok = false;
        return;
      }
      if (*at != slot || !dom.properlyDominates(t, load))
        return;
      later.push_back(load.getResult());
      for (Operation *user : load->getUsers()) {
        auto sub = dyn_cast<arith::SubFOp>(user);
        ok &= sub && sub.getLhs() == load.getResult() &&
              scalarOf(sub.getRhs()) == m &&
              llvm::all_of(sub->getUsers(),
                           [](Operation *u) { return isa<math::ExpOp>(u); });
      }
    });
    if (!ok || later.empty())
      continue;
    rewritable.insert(later.begin(), later.end());
    // the slot takes exp(e - r_b) where the sum computed it
    OpBuilder sb(t.getContext());
    sb.setInsertionPointAfterValue(t);
    auto [view, chunk, thread] = slot;
    memref::StoreOp::create(
        sb, t.getLoc(), t, view,
        ValueRange{arith::ConstantIndexOp::create(sb, t.getLoc(), chunk),
                   thread});
  }
  for (auto [exp, e] : againstRow)
    if (rewritable.contains(e))
      againstBlock[e] = e; // (the load now reads exp(e - r_b))
  Value scale;
  for (auto [exp, e] : againstRow) {
    Value t = againstBlock.lookup(e);
    if (!t || t.getType() != exp.getType() ||
        (t != e && !dom.properlyDominates(t, exp)))
      continue;
    Location loc = exp.getLoc();
    if (!scale) {
      OpBuilder cb(m.getContext());
      cb.setInsertionPointAfter(m.getDefiningOp());
      Type type = m.getType();
      Value ninf = floatConstant(cb, loc, type, 0, -1);
      Value none = arith::CmpFOp::create(cb, loc, arith::CmpFPredicate::OEQ,
                                         blockMax, ninf);
      scale = arith::SelectOp::create(
          cb, loc, none,
          math::ExpOp::create(cb, loc,
                              arith::SubFOp::create(cb, loc, ninf, m)),
          rescale(cb, loc, blockMax, m));
    }
    OpBuilder b(exp);
    Value c = isa<VectorType>(exp.getType())
                  ? vector::BroadcastOp::create(b, loc, exp.getType(), scale)
                        .getResult()
                  : scale;
    auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
    exp.replaceAllUsesWith(
        arith::MulFOp::create(b, loc, t, c, arith::FastMathFlags::contract)
            .getResult());
    exp.erase();
    if (sub && sub->use_empty())
      sub.erase();
  }
}

LogicalResult
RowKernel::finishReduction(OpBuilder &kb, Location loc, linalg::GenericOp g,
                           const Combiner &comb, Value total,
                           ArrayRef<Value> initIdx,
                           SmallVector<std::pair<Value, Value>> &rowOutputs) {
  Value init = g.getDpsInits()[0];
  Cache rowCache;
  auto initValue = valueAt(kb, loc, init, position[g],
                           g.getMatchingIndexingMap(g.getDpsInitOperand(0)),
                           initIdx, rowCache);
  if (failed(initValue))
    return failure();
  Value result = comb.combine(kb, g, *initValue, total);
  rowValues[init].push_back({position[g], result});
  if (usedOutside(init))
    addRowOutput(rowOutputs, init, result);
  return success();
}

LogicalResult
RowKernel::evalRowSpace(OpBuilder &kb, Location loc, linalg::GenericOp g,
                        ArrayRef<Value> rowIdx,
                        SmallVector<std::pair<Value, Value>> &rowOutputs) {
  Cache rowCache;
  auto values = evalBody(kb, loc, g, rowIdx, rowCache);
  if (failed(values))
    return failure();
  for (auto [init, v] : llvm::zip(g.getDpsInits(), *values)) {
    rowValues[init].push_back({position[g], v});
    if (usedOutside(init))
      addRowOutput(rowOutputs, init, v);
  }
  return success();
}

void RowKernel::storeColumns(OpBuilder &outer, Location loc, Value value,
                             Value buffer, AffineMap map, ArrayRef<Value> idx) {
  // (the last row tile's threads past the last row store nothing)
  OpBuilder b = rowInside ? scf::IfOp::create(outer, loc, rowInside,
                                              /*withElse=*/false)
                                .getThenBodyBuilder()
                          : outer;
  auto at = [&](int64_t lane, OpBuilder *ib = nullptr) {
    OpBuilder &ab = ib ? *ib : b;
    SmallVector<Value> r;
    for (AffineExpr e : map.getResults()) {
      unsigned pos = cast<AffineDimExpr>(e).getPosition();
      Value x = idx[pos];
      if (lane && pos == idx.size() - 1)
        x = arith::AddIOp::create(
            ab, loc, x, arith::ConstantIndexOp::create(ab, loc, lane));
      r.push_back(x);
    }
    return r;
  };
  // (one aligned vector store when the buffer is contiguous along the
  // innermost column, as loadFromMemory reads: through the identity or a
  // permutation that keeps that loop last, x - mean stored over NCHW)
  auto type = cast<MemRefType>(buffer.getType());
  unsigned uses = 0;
  for (AffineExpr e : map.getResults())
    uses += e.isFunctionOfDim(idx.size() - 1);
  auto vectorStore = [&](OpBuilder &sb) {
    Type elem = type.getElementType();
    unsigned bytes = std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
    vector::StoreOp::create(sb, loc, value, buffer, at(0, &sb),
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(width * bytes));
  };
  if (shifted && width > 1) {
    // One aligned vector where the chunk lies in the row of a buffer in the
    // shifted layout, else each lane in the row on its own.
    auto found = shiftedChunks.find(idx.back());
    assert(found != shiftedChunks.end() && "a store at an unrecorded chunk");
    ShiftedChunk chunk = found->second;
    OpBuilder lb = b;
    if (alignedWithRows(buffer, map, idx, chunk)) {
      if (matchPattern(chunk.whole, m_One()))
        return vectorStore(b);
      auto whole = scf::IfOp::create(b, loc, chunk.whole, /*withElse=*/true);
      OpBuilder tb = whole.getThenBodyBuilder();
      vectorStore(tb);
      lb = whole.getElseBodyBuilder();
    }
    for (int64_t lane = 0; lane < width; ++lane) {
      Value inRow = vector::ExtractOp::create(lb, loc, chunk.lanes, lane);
      OpBuilder sb = scf::IfOp::create(lb, loc, inRow, /*withElse=*/false)
                         .getThenBodyBuilder();
      memref::StoreOp::create(sb, loc,
                              vector::ExtractOp::create(sb, loc, value, lane),
                              buffer, at(lane, &sb));
    }
    return;
  }
  if (width == 1) {
    memref::StoreOp::create(b, loc, value, buffer, at(0));
  } else if (uses == 1 && alignedColumns(type, map, idx.size() - 1)) {
    vectorStore(b);
  } else {
    for (int64_t lane = 0; lane < width; ++lane)
      memref::StoreOp::create(b, loc,
                              vector::ExtractOp::create(b, loc, value, lane),
                              buffer, at(lane));
  }
}

void RowKernel::rowDepsOf(Value buffer, unsigned pos,
                          llvm::SmallPtrSetImpl<Operation *> &deps) {
  auto w = writerBefore(buffer, pos);
  if (!w)
    return;
  if (w->first.getNumReductionLoops() > 0 || isRowSpace(w->first))
    deps.insert(w->first);
  else
    rowDeps(w->first, deps);
}

void RowKernel::rowDeps(linalg::GenericOp g,
                        llvm::SmallPtrSetImpl<Operation *> &deps) {
  // (a full-space generic's, once: chains of them are walked from every
  // reader)
  if (!position.contains(g) || !isFullSpace(g) ||
      g.getNumReductionLoops() > 0) {
    inputRowDeps(g, std::nullopt, deps);
    return;
  }
  auto known = fullRowDeps.find(g);
  if (known == fullRowDeps.end()) {
    llvm::SmallPtrSet<Operation *, 8> own;
    inputRowDeps(g, std::nullopt, own);
    known = fullRowDeps.try_emplace(g, own.begin(), own.end()).first;
  }
  deps.insert(known->second.begin(), known->second.end());
}

void RowKernel::inputRowDeps(linalg::GenericOp g, std::optional<unsigned> skip,
                             llvm::SmallPtrSetImpl<Operation *> &deps) {
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->getOperandNumber() != skip &&
        isa<MemRefType>(in->get().getType()) &&
        !g.getBody()->getArgument(in->getOperandNumber()).use_empty())
      rowDepsOf(in->get(), position[g], deps);
}

std::optional<std::pair<linalg::GenericOp, unsigned>>
RowKernel::identityWriter(BlockArgument arg, linalg::GenericOp g) {
  if (arg.getOwner() != g.getBody() ||
      arg.getArgNumber() >= g.getNumDpsInputs())
    return std::nullopt;
  OpOperand *in = g.getDpsInputOperand(arg.getArgNumber());
  AffineMap map = g.getMatchingIndexingMap(in);
  if (!isa<MemRefType>(in->get().getType()) || !map.isPermutation())
    return std::nullopt;
  auto w = writerBefore(in->get(), position[g]);
  if (!w || w->first.getNumReductionLoops() > 0 || !isFullSpace(w->first) ||
      w->first.getMatchingIndexingMap(w->first.getDpsInitOperand(w->second)) !=
          map)
    return std::nullopt;
  return w;
}

RowKernel::Source RowKernel::sourceOf(Value v, linalg::GenericOp g) {
  while (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto w = identityWriter(arg, g)) {
      g = w->first;
      v = g.getBody()->getTerminator()->getOperand(w->second);
      continue;
    }
    if (arg.getOwner() != g.getBody() ||
        arg.getArgNumber() >= g.getNumDpsInputs())
      return Source{v, {}, {}, nullptr, g};
    OpOperand *in = g.getDpsInputOperand(arg.getArgNumber());
    if (!isa<MemRefType>(in->get().getType()))
      return Source{in->get(), {}, {}, nullptr, g};
    auto w = writerBefore(in->get(), position[g]);
    return Source{{},
                  in->get(),
                  g.getMatchingIndexingMap(in),
                  w ? w->first.getOperation() : nullptr,
                  g};
  }
  return Source{v, {}, {}, nullptr, g};
}

bool RowKernel::sameValue(Value a, linalg::GenericOp ga, Value b,
                          linalg::GenericOp gb, SameMemo &memo,
                          unsigned depth) {
  return memoizedSame(memo, a, ga, b, gb, depth, [&] {
    Source sa = sourceOf(a, ga), sb = sourceOf(b, gb);
    if (sa.buffer || sb.buffer)
      return sa.buffer == sb.buffer && sa.map == sb.map &&
             sa.writer == sb.writer;
    return sa.value == sb.value ||
           sameComputation(sa.value, sb.value, [&](Value x, Value y) {
             return sameValue(x, sa.owner, y, sb.owner, memo, depth + 1);
           });
  });
}

std::optional<RowKernel::Online> RowKernel::onlinePartner(linalg::GenericOp g) {
  if (!online || contraction)
    return std::nullopt;
  Value term = sumTerm(g);
  if (!term)
    return std::nullopt;
  auto exp = term.getDefiningOp<math::ExpOp>();
  if (!exp || !term.hasOneUse())
    return std::nullopt;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  if (!sub || !sub->hasOneUse())
    return std::nullopt;
  // r: computed from m's block argument alone, feeding only the subtraction.
  std::optional<Center> ref = rowFunction(sub.getRhs(), g, sub);
  if (!ref)
    return std::nullopt;
  BlockArgument q = ref->r;
  Value maxBuffer = g.getDpsInputOperand(q.getArgNumber())->get();
  if (!isa<MemRefType>(maxBuffer.getType()))
    return std::nullopt;
  auto w = writerBefore(maxBuffer, position[g]);
  if (!w || w->first.getNumReductionLoops() == 0)
    return std::nullopt;
  linalg::GenericOp max = w->first;
  std::optional<Combiner> mc = findCombiner(max);
  if (!mc || !isa<arith::MaximumFOp, arith::MaxNumFOp>(mc->op))
    return std::nullopt;
  Type type = cast<MemRefType>(maxBuffer.getType()).getElementType();
  if (cast<MemRefType>(g.getDpsInits()[0].getType()).getElementType() != type ||
      sub.getType() != type || term.getType() != type)
    return std::nullopt;
  // e: the same value the max reduces (the sum's terms are then <= 1, so
  // rescaling never overflows where the two-pass sum would not).
  Value maxTerm = mc->termOf(max);
  if (!sameValue(sub.getLhs(), g, maxTerm, max))
    return std::nullopt;
  // m reaches the sum through q alone.
  llvm::SmallPtrSet<Operation *, 8> deps;
  inputRowDeps(g, q.getArgNumber(), deps);
  if (deps.contains(max))
    return std::nullopt;
  return Online{max, maxBuffer, *ref, Value()};
}

std::optional<RowKernel::Centered>
RowKernel::centeredPartner(linalg::GenericOp v,
                           llvm::SmallPtrSetImpl<Operation *> &deps) {
  if (!online || contraction)
    return std::nullopt;
  bool squares = true;
  Value d = centeredValue(v, squares);
  if (!d)
    return std::nullopt;
  auto sub = d.getDefiningOp<arith::SubFOp>();
  if (!sub || sub.getType() != d.getType())
    return std::nullopt;
  std::optional<Center> center = matchCenter(sub, v);
  if (!center)
    return std::nullopt;
  BlockArgument q = center->r;
  Value qBuffer = v.getDpsInputOperand(q.getArgNumber())->get();
  auto w = writerBefore(qBuffer, position[v]);
  if (!w || (w->first.getNumReductionLoops() == 0 && !isRowSpace(w->first)))
    return std::nullopt;
  // What evaluating e reads: every other input.
  inputRowDeps(v, q.getArgNumber(), deps);
  if (deps.contains(w->first))
    return std::nullopt;
  return Centered{qBuffer, w->first, d, squares, *center, Value(), Value()};
}

SmallVector<SmallVector<linalg::GenericOp>> RowKernel::planPasses() {
  SmallVector<SmallVector<linalg::GenericOp>> passes;
  llvm::SmallPtrSet<Operation *, 8> planned;
  onlineSums.clear();
  centeredSums.clear();
  for (linalg::GenericOp g : generics) {
    if (g.getNumReductionLoops() == 0 || planned.contains(g))
      continue;
    SmallVector<linalg::GenericOp> members{g};
    for (linalg::GenericOp h : generics.drop_front(position[g] + 1)) {
      if (contraction || h.getNumReductionLoops() == 0 || planned.contains(h))
        continue;
      llvm::SmallPtrSet<Operation *, 8> deps;
      rowDeps(h, deps);
      std::optional<Online> on = onlinePartner(h);
      if (on && !llvm::is_contained(members, on->max))
        on.reset();
      auto ready = [&](Operation *d) {
        return position[d] < position[g] || (on && d == on->max);
      };
      if (!llvm::all_of(deps, ready)) {
        // A sum of squares around a row value this pass computes: folded
        // as a count, mean and centered sum of squares.
        llvm::SmallPtrSet<Operation *, 8> eDeps;
        std::optional<Centered> c = centeredPartner(h, eDeps);
        if (!c || !llvm::all_of(eDeps, [&](Operation *d) {
              return position[d] < position[g];
            }))
          continue;
        centeredSums[h] = *c;
        members.push_back(h);
        continue;
      }
      if (on)
        onlineSums[h] = *on;
      members.push_back(h);
    }
    planned.insert(members.begin(), members.end());
    passes.push_back(std::move(members));
  }
  return passes;
}

SmallVector<std::pair<linalg::GenericOp, unsigned>>
RowKernel::fullSpaceOutputs() {
  SmallVector<std::pair<linalg::GenericOp, unsigned>> outputs;
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() == 0 && !isRowSpace(g))
      for (auto [i, init] : llvm::enumerate(g.getDpsInits()))
        if (usedOutside(init) &&
            writerBefore(init, generics.size())->first == g)
          outputs.push_back({g, unsigned(i)});
  return outputs;
}

/// One column loop over this thread's columns that folds the partials of
/// every reduction in `members`, `batch` vectors per trip (the last trip
/// masked when the row does not divide). An online sum's partial is kept
/// relative to its max's running partial: s' = s * exp(m - m') +
/// sum(exp(e - m')), the terms evaluated with m' in place of the max. A
/// centered sum of squares keeps e's running mean and centered sum of
/// squares M2 (per lane), e evaluated with 0 in place of q: each trip's
/// own mean and M2 (k values at most) merge into them with Chan et al.'s
/// update, delta = mean_trip - mean, M2 += M2_trip + delta^2 n k / (n + k).
/// How many of columns colStart, colStart + step, ... are below numCols, as
/// a float of type `elem`.
static Value countOf(OpBuilder &b, Location loc, Value colStart, int64_t step,
                     int64_t numCols, Type elem) {
  auto cIdx = kfuse::indexConstants(b, loc);
  Value end = cIdx(numCols);
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       colStart, end);
  Value n = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, end, colStart),
                            cIdx(step - 1)),
      cIdx(step));
  n = arith::SelectOp::create(b, loc, inside, n, cIdx(0));
  return arith::UIToFPOp::create(
      b, loc, elem, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), n));
}

Value RowKernel::centeredTerm(OpBuilder &b, Location loc, linalg::GenericOp g,
                              const Centered &centered, ArrayRef<Value> point,
                              unsigned numRowIdx, Cache &cache,
                              int64_t chunk) {
  Value zero = floatConstant(b, loc, centered.squared.getType(), 0.0);
  rowValues[centered.qBuffer].push_back({position[centered.qWriter], zero});
  SmallVector<Value> loopIdx = orderLoops(b, loc, g, point.take_front(numRowIdx),
                                          point.drop_front(numRowIdx));
  IRMapping mapping;
  auto v = evalBody(b, loc, g, loopIdx, cache,
                    vectorized(loopIdx) ? splat(b, loc, zero) : zero, chunk,
                    &mapping);
  rowValues[centered.qBuffer].pop_back();
  return failed(v) ? Value() : mapping.lookup(centered.squared);
}

std::tuple<Value, Value, Value> RowKernel::foldCentered(
    OpBuilder &b, Location loc, linalg::GenericOp g, const Centered &centered,
    ArrayRef<SmallVector<Value>> points, unsigned numRowIdx,
    ArrayRef<Value> valid, Cache &cache, Value shift, Value mean, Value m2,
    Value iv, Value colStart, int64_t step, ArrayRef<Value> lanesIn,
    Value seen) {
  Type type = mean.getType();
  Type elem = getElementTypeOrSelf(type);
  Value zero = floatConstant(b, loc, type, 0.0);
  // e - shift at each point (exact where e is within a factor 2 of the
  // shift, a value of the row: the running mean stays small). (Each point
  // its own entry of the cache: e computed by a full-space op of the
  // kernel, a padded row's gather, is the point's, not the trip's first's.)
  SmallVector<Value> es;
  for (auto [j, point] : llvm::enumerate(points)) {
    Value e = centeredTerm(b, loc, g, centered, point, numRowIdx, cache, j);
    if (!e)
      return {};
    es.push_back(arith::SubFOp::create(b, loc, e, shift));
  }
  bool perLane = !lanesIn.empty();
  auto inRow = [&](unsigned j, Value v) {
    Value ok = perLane ? lanesIn[j] : valid.empty() ? Value() : valid[j];
    return ok ? arith::SelectOp::create(b, loc, ok, v, zero).getResult() : v;
  };
  // The trip's count (per lane: shifted chunks have lanes outside the row),
  // mean and M2.
  Value count = floatConstant(b, loc, elem, double(es.size()));
  if (perLane) {
    count = zero;
    for (Value ok : lanesIn)
      count = arith::AddFOp::create(
          b, loc, count, arith::UIToFPOp::create(b, loc, type, ok));
  } else if (!valid.empty()) {
    count = floatConstant(b, loc, elem, 1.0);
    for (Value ok : ArrayRef<Value>(valid).drop_front())
      count = arith::AddFOp::create(
          b, loc, count,
          arith::SelectOp::create(b, loc, ok, floatConstant(b, loc, elem, 1.0),
                                  floatConstant(b, loc, elem, 0.0)));
  }
  // (a lane that folds nothing in this trip, at the row's ends, keeps its
  // mean and M2)
  Value some = perLane ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                               count, zero)
                             .getResult()
                       : Value();
  auto whereSome = [&](Value v) {
    return some ? arith::SelectOp::create(b, loc, some, v, zero).getResult()
                : v;
  };
  auto lanes = [&](Value v) {
    return isa<VectorType>(v.getType()) ? v : splat(b, loc, v);
  };
  Value sum = inRow(0, es[0]);
  for (unsigned j = 1; j < es.size(); ++j)
    sum = arith::AddFOp::create(b, loc, sum, inRow(j, es[j]));
  Value tripMean =
      valid.empty() && !perLane
          ? arith::MulFOp::create(
                b, loc, sum, floatConstant(b, loc, type, 1.0 / es.size()))
                .getResult()
          : whereSome(
                arith::DivFOp::create(b, loc, sum, lanes(count)).getResult());
  Value tripM2;
  for (auto [j, e] : llvm::enumerate(es)) {
    Value dev = arith::SubFOp::create(b, loc, e, tripMean);
    Value sq = inRow(j, arith::MulFOp::create(b, loc, dev, dev));
    tripM2 = tripM2 ? arith::AddFOp::create(b, loc, tripM2, sq).getResult() : sq;
  }
  // Merged into the running ones, n columns of this lane folded so far.
  Value n = perLane
                ? seen
                : arith::UIToFPOp::create(
                      b, loc, elem,
                      arith::IndexCastUIOp::create(
                          b, loc, b.getI64Type(),
                          arith::DivUIOp::create(
                              b, loc,
                              arith::SubIOp::create(b, loc, iv, colStart),
                              arith::ConstantIndexOp::create(b, loc, step))))
                      .getResult();
  Value ratio = whereSome(arith::DivFOp::create(
      b, loc, count, arith::AddFOp::create(b, loc, n, count)));
  Value delta = arith::SubFOp::create(b, loc, tripMean, mean);
  Value newMean = arith::AddFOp::create(
      b, loc, mean, arith::MulFOp::create(b, loc, delta, lanes(ratio)));
  Value weight = arith::MulFOp::create(b, loc, n, ratio);
  Value newM2 = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, m2, tripM2),
      arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, delta, delta),
          lanes(weight)));
  return {newMean, newM2, perLane ? count : Value()};
}

LogicalResult RowKernel::prefetchInputs(OpBuilder &b, Location loc,
                                        ArrayRef<linalg::GenericOp> roots,
                                        ArrayRef<SmallVector<Value>> points,
                                        unsigned rowDims, bool ordered,
                                        Cache &cache) {
  llvm::SmallPtrSet<Operation *, 8> seen;
  SmallVector<linalg::GenericOp> readers(roots.begin(), roots.end());
  for (size_t i = 0; i < readers.size(); ++i)
    for (OpOperand *in : readers[i].getDpsInputOperands())
      if (auto w = writerBefore(in->get(), position[readers[i]]))
        if (isFullSpace(w->first) && w->first.getNumReductionLoops() == 0 &&
            seen.insert(w->first).second)
          readers.push_back(w->first);
  for (auto [j, point] : llvm::enumerate(points))
    for (linalg::GenericOp g : readers)
      for (OpOperand *in : g.getDpsInputOperands()) {
        if (!isa<MemRefType>(in->get().getType()) ||
            writerBefore(in->get(), position[g]) ||
            g.getBody()->getArgument(in->getOperandNumber()).use_empty())
          continue;
        // (a full-space producer among them runs over the rows, then the
        // columns, in order already)
        SmallVector<Value> loopIdx =
            ordered && g.getNumReductionLoops() > 0
                ? orderLoops(b, loc, g,
                             ArrayRef<Value>(point).take_front(rowDims),
                             ArrayRef<Value>(point).drop_front(rowDims))
                : SmallVector<Value>(point);
        if (failed(valueAt(b, loc, in->get(), position[g],
                           g.getMatchingIndexingMap(in), loopIdx, cache, j)))
          return failure();
      }
  return success();
}

RowKernel::ChunkPlaces RowKernel::placeEntries(OpBuilder &lb, Location loc,
                                               scf::ForOp loop,
                                               ArrayRef<Value> rowIdx,
                                               int64_t step, int64_t k,
                                               int64_t numCols, bool masked,
                                               Value end, Value firstAligned) {
  auto cIdx = kfuse::indexConstants(loc);
  ChunkPlaces places;
  places.ragged = masked;
  SmallVector<SmallVector<Value>> &points = places.points;
  SmallVector<Value> &valid = places.valid; // per batch entry, when masked
  SmallVector<Value> &inRow = places.inRow; // (shifted: its lanes in the row)
  for (int64_t j = 0; j < k; ++j) {
    Value col = loop.getInductionVar();
    if (shifted) {
      Value v = j > 0 ? arith::AddIOp::create(lb, loc, col, cIdx(lb, j * step))
                            .getResult()
                      : col;
      Value at = arith::SubIOp::create(lb, loc, v, rowShift);
      col = at;
      if (j > 0) {
        Value ok =
            arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, v, end);
        col = arith::SelectOp::create(lb, loc, ok, at, firstAligned);
        valid.push_back(ok);
      } else {
        valid.push_back(Value()); // (the trip's first chunk is in the row)
      }
      inRow.push_back(shiftedChunk(lb, loc, rowIdx, col, numCols,
                                   /*head=*/j == 0, /*tail=*/true, at));
    } else if (j > 0) {
      col = arith::AddIOp::create(lb, loc, col, cIdx(lb, j * step));
      if (masked) {
        Value ok = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult,
                                         col, cIdx(lb, numCols));
        col = arith::SelectOp::create(lb, loc, ok, col, cIdx(lb, 0));
        valid.push_back(ok);
      }
    } else if (masked) {
      valid.push_back(Value()); // (the trip's first vector is in the row)
    }
    SmallVector<Value> idx(rowIdx);
    llvm::append_range(idx, kfuse::delinearize(lb, loc, col, colShape));
    points.push_back(idx);
  }
  return places;
}

LogicalResult RowKernel::storeReadyOutputs(OpBuilder &lb, Location loc,
                                           const ChunkPlaces &entries,
                                           Cache &cache) {
  ArrayRef<SmallVector<Value>> points = entries.points;
  ArrayRef<Value> valid = entries.valid;
  bool masked = entries.ragged;
  int64_t k = points.size();
  for (auto [g, i] : fullSpaceOutputs()) {
    if (!readsNoRowValue(g))
      continue;
    Value buffer = g.getDpsInits()[i];
    AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(i));
    for (int64_t j = 0; j < k; ++j) {
      auto v = valueAt(lb, loc, buffer, position[g] + 1, outMap, points[j],
                       cache, j);
      if (failed(v))
        return failure();
      OpBuilder sb = lb;
      if (masked && valid[j])
        sb = scf::IfOp::create(lb, loc, valid[j], /*withElse=*/false)
                 .getThenBodyBuilder();
      storeColumns(sb, loc, *v, buffer, outMap, points[j]);
    }
    storedInPass.insert({g.getOperation(), unsigned(i)});
  }
  return success();
}

void RowKernel::finishPass(OpBuilder &kb, Location loc, Value tid,
                           scf::ForOp loop, ArrayRef<linalg::GenericOp> members,
                           const PassSlots &slots, Value colStart, int64_t step,
                           int64_t numCols) {
  // Block totals: a lane reduction, then across the block's threads.
  for (auto [i, g] : llvm::enumerate(members)) {
    if (onlineSums.count(g))
      continue; // (with its max, below)
    if (auto c = centeredSums.find(g); c != centeredSums.end()) {
      // Each lane's count is this thread's trips over the row; the row's
      // mean, then its M2: sum(M2_l + n_l (mean_l - mean)^2), the means
      // relative to the shift.
      Value mean = loop.getResult(i), m2 = loop.getResult(slots.m2.lookup(g));
      Type elem = getElementTypeOrSelf(mean.getType());
      if (perThread && width == 1) {
        c->second.offset = mean;
        totals[g] = m2;
        continue;
      }
      Value n =
          shifted
              ? loop.getResult(slots.seen.lookup(g))
              : splat(kb, loc, countOf(kb, loc, colStart, step, numCols, elem));
      Value sum = arith::MulFOp::create(kb, loc, mean, n);
      if (width > 1)
        sum = vector::ReductionOp::create(kb, loc, vector::CombiningKind::ADD,
                                          sum);
      if (!perThread)
        sum = blockCombine(kb, loc, tid, sum, gpu::AllReduceOperation::ADD);
      Value rowMean = arith::DivFOp::create(
          kb, loc, sum, floatConstant(kb, loc, elem, double(numCols)));
      Value delta =
          arith::SubFOp::create(kb, loc, mean, splat(kb, loc, rowMean));
      Value spread = arith::AddFOp::create(
          kb, loc, m2,
          arith::MulFOp::create(kb, loc, n,
                                arith::MulFOp::create(kb, loc, delta, delta)));
      if (width > 1)
        spread = vector::ReductionOp::create(
            kb, loc, vector::CombiningKind::ADD, spread);
      if (!perThread)
        spread =
            blockCombine(kb, loc, tid, spread, gpu::AllReduceOperation::ADD);
      c->second.offset = rowMean;
      totals[g] = spread;
      continue;
    }
    Value part = loop.getResult(i);
    Value lanes = part;
    if (width > 1)
      part = vector::ReductionOp::create(
          kb, loc, gpu::convertReductionKind(slots.combs[i].kind), part);
    Value total = perThread
                      ? part
                      : blockCombine(kb, loc, tid, part, slots.combs[i].kind);
    totals[g] = total;
    for (linalg::GenericOp s : members) {
      auto on = onlineSums.find(s);
      if (on == onlineSums.end() || on->second.max != g)
        continue;
      // The sum's lanes rescaled to the row's max, then added up.
      on->second.maxTotal = total;
      Value sum =
          arith::MulFOp::create(kb, loc, loop.getResult(slots.of.lookup(s)),
                                rescale(kb, loc, lanes, splat(kb, loc, total)));
      if (width > 1)
        sum = vector::ReductionOp::create(kb, loc, vector::CombiningKind::ADD,
                                          sum);
      totals[s] = perThread ? sum
                            : blockCombine(kb, loc, tid, sum,
                                           gpu::AllReduceOperation::ADD);
    }
  }
}

int64_t RowKernel::streamingTrip(int64_t trips) const {
  // (a thread per row: about `threadBatch` loads in flight per thread and
  // trip, see perThreadTrip; one for contractions, whose loads the threads
  // of a warp share)
  // (row tiles: scalars, as many in flight as `batch` vectors)
  // (a block per row whose row takes a thread at most 2 * batch vectors:
  // all of them in one trip, every load in flight at once: a finishing
  // kernel's 1024 partials, 32 threads x 8 vectors, one trip to L2, not two)
  // (row-trip: a block per row's chunks a trip as asked)
  if (perThread && !contraction)
    return perThreadTrip(trips);
  return std::clamp<int64_t>(trips, 1,
                             contraction          ? 1
                             : rowsPerBlock > 1   ? batch * 4
                             : tripChunks > 0     ? tripChunks
                             : trips <= 2 * batch ? trips
                                                  : batch);
}

LogicalResult RowKernel::beginStreamingPass(OpBuilder &kb, Location loc,
                                            StreamingPass &pass) {
  auto cIdx = kfuse::indexConstants(loc);
  PassSlots &slots = pass.slots;
  SmallVector<Value> &inits = pass.inits;
  for (linalg::GenericOp g : pass.members) {
    slots.of[g] = inits.size();
    slots.combs.push_back(*findCombiner(g));
    Type accType =
        cast<MemRefType>(g.getDpsInits()[0].getType()).getElementType();
    inits.push_back(
        splat(kb, loc,
              arith::ConstantOp::create(
                  kb, loc, neutral(kb, slots.combs.back().kind, accType))));
  }
  pass.end =
      shifted ? arith::AddIOp::create(kb, loc, rowShift, cIdx(kb, pass.numCols))
                    .getResult()
              : cIdx(kb, pass.numCols);
  // (shifted: where an entry past the row's end loads, the row's first
  // aligned chunk)
  pass.firstAligned =
      shifted ? arith::RemUIOp::create(
                    kb, loc,
                    arith::SubIOp::create(kb, loc, cIdx(kb, width), rowShift),
                    cIdx(kb, width))
                    .getResult()
              : Value();
  // (a centered sum's running M2, after every member's slot, and its
  // shift: e at the row's first column (shifted: at its first aligned
  // chunk's first lane), splatted, the same in every lane and thread;
  // shifted: also the columns each lane folded)
  for (linalg::GenericOp g : pass.members)
    if (auto c = centeredSums.find(g); c != centeredSums.end()) {
      slots.m2[g] = inits.size();
      inits.push_back(inits[slots.of[g]]); // (0: the neutral of a sum)
      if (shifted) {
        slots.seen[g] = inits.size();
        inits.push_back(inits[slots.of[g]]);
      }
      SmallVector<Value> first(pass.rowIdx);
      if (shifted) {
        first.push_back(pass.firstAligned);
        shiftedChunk(kb, loc, pass.rowIdx, pass.firstAligned, pass.numCols,
                     /*head=*/false, /*tail=*/true);
      } else {
        first.append(colShape.size(), cIdx(kb, 0));
      }
      Cache once;
      Value e = centeredTerm(kb, loc, g, c->second, first, pass.rowIdx.size(),
                             once, 0);
      if (!e)
        return failure();
      if (isa<VectorType>(e.getType()))
        e = vector::ExtractOp::create(kb, loc, e, 0);
      c->second.shift = e;
      pass.shifts[g] = splat(kb, loc, e);
    }
  // The first pass stores the full-space results that read no row value
  // (dx = dy * f(x) beside its bias gradient dx.sum(0), in a split's
  // partials kernel): with the members' loads, instead of a later column
  // loop loading the row again.
  pass.storeReady = !firstPassEmitted && !shifted && !contraction;
  firstPassEmitted = true;
  return success();
}

FailureOr<Value> RowKernel::foldStreamingMember(
    OpBuilder &lb, Location loc, const StreamingPass &pass, linalg::GenericOp g,
    const ChunkPlaces &places, bool ragged, Cache &cache, ValueRange accs,
    ArrayRef<Value> next) {
  const PassSlots &slots = pass.slots;
  Value acc = accs[slots.of.lookup(g)];
  Value override;
  auto on = onlineSums.find(g);
  if (on != onlineSums.end()) {
    // Rescale to the trip's new running max, by an exp as approximate
    // as the terms' (online sums are fast numerics'): fusion-fast-exp's
    // ex2.approx, not a correctly rounded exp's 10 instructions a trip.
    Value m = accs[slots.of.lookup(on->second.max)],
          mNew = next[slots.of.lookup(on->second.max)];
    // (a factor below 2^-126 scales a sum of at most the row's terms to
    // below 2^-95, beside the new max's own term 1: flushed, nothing lost)
    acc = arith::MulFOp::create(
        lb, loc, acc,
        rescale(lb, loc, m, mNew,
                arith::FastMathFlags::afn | arith::FastMathFlags::contract,
                /*flush=*/true));
    // Terms against a max of -inf (every e so far -inf) are 0, not NaN;
    // a row whose max ends -inf gets its NaN when the sum is finished.
    Type t = m.getType();
    Value none = arith::CmpFOp::create(lb, loc, arith::CmpFPredicate::OEQ, mNew,
                                       floatConstant(lb, loc, t, 0, -1));
    override = arith::SelectOp::create(lb, loc, none,
                                       floatConstant(lb, loc, t, 0.0), mNew);
    rowValues[on->second.maxBuffer].push_back(
        {position[on->second.max], override});
    bodyOverrides[on->second.ref.value] = override;
  }
  ArrayRef<SmallVector<Value>> points = places.points;
  // An online sum's terms exp(e - m'), m' the running max of e: the sum
  // holds the max's own term 1, and a term below 2^-126 is lost in its
  // rounding whether flushed or not (see kfuse::kFlushSubnormals).
  Value term = on != onlineSums.end() ? sumTerm(g) : Value();
  for (int64_t j = 0; j < pass.k; ++j) {
    SmallVector<Value> loopIdx = orderLoops(
        lb, loc, g, ArrayRef<Value>(points[j]).take_front(pass.rowIdx.size()),
        ArrayRef<Value>(points[j]).drop_front(pass.rowIdx.size()));
    IRMapping emitted;
    auto v = evalBody(lb, loc, g, loopIdx, cache, acc, j, &emitted);
    if (failed(v))
      return failure();
    if (Value t = term ? emitted.lookupOrNull(term) : Value())
      if (auto exp = t.getDefiningOp<math::ExpOp>())
        exp->setAttr(kfuse::kFlushSubnormals, lb.getUnitAttr());
    acc = shifted
              ? arith::SelectOp::create(lb, loc, places.inRow[j], (*v)[0], acc)
                    .getResult()
          : ragged && places.valid[j]
              ? arith::SelectOp::create(lb, loc, places.valid[j], (*v)[0], acc)
                    .getResult()
              : (*v)[0];
  }
  if (override) {
    rowValues[on->second.maxBuffer].pop_back();
    bodyOverrides.erase(on->second.ref.value);
  }
  return acc;
}

FailureOr<scf::ForOp> RowKernel::emitColumnLoop(OpBuilder &kb, Location loc,
                                                const StreamingPass &pass,
                                                Value lower, Value upper,
                                                ValueRange loopInits,
                                                bool ragged) {
  auto cIdx = kfuse::indexConstants(loc);
  const PassSlots &slots = pass.slots;
  auto loop = scf::ForOp::create(kb, loc, lower, upper,
                                 cIdx(kb, pass.step * pass.k), loopInits);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  ChunkPlaces places =
      placeEntries(lb, loc, loop, pass.rowIdx, pass.step, pass.k, pass.numCols,
                   ragged, pass.end, pass.firstAligned);
  ArrayRef<SmallVector<Value>> points = places.points;
  ArrayRef<Value> valid = places.valid, inRow = places.inRow;
  // (guards hold in the lanes past the row: they read padding)
  liveChunks.assign(shifted ? inRow : valid);
  llvm::scope_exit noLanes([&] { liveChunks.clear(); });
  Cache cache; // one trip: every member shares what the others computed
  // Shifted chunks: every entry's loads first, in entry order, each under
  // its test, then the members' bodies, so that a trip's loads are in
  // flight together. (Loaded where first used, each entry's fold came
  // between its load's branch and the next entry's: one load in flight a
  // thread, cross-entropy over 50257 logits at 0.58 of the copy's
  // bandwidth on an H200, 0.69 in single floats.) The inputs of the
  // members and of the full-space intermediates they read, as evalBody
  // would load them (valueAt keeps them for the bodies).
  // A block per row over rows the trips do not divide: the entries that
  // may lie past the row's end load under a test of it (see entryInside),
  // every entry's loads first too, for the same reason. (Not tiles nor a
  // thread per row: their trips hold many scalar entries, and their loads,
  // all in flight at once, spilled registers; past the end they load the
  // row's first column again, selected away.)
  bool guarded = ragged && !shifted && !perThread && rowsPerBlock == 1;
  if (guarded)
    entryInside.assign(valid.begin(), valid.end());
  llvm::scope_exit noEntries([&] {
    entryInside.clear();
    entryLoads.clear();
  });
  if ((shifted || guarded) &&
      failed(prefetchInputs(lb, loc, pass.members, points, pass.rowIdx.size(),
                            /*ordered=*/true, cache)))
    return failure();
  ValueRange accs = loop.getRegionIterArgs();
  SmallVector<Value> next(accs.begin(), accs.end());
  for (linalg::GenericOp g : pass.members) {
    unsigned slot = slots.of.lookup(g);
    if (auto c = centeredSums.find(g); c != centeredSums.end()) {
      Value seen = shifted ? accs[slots.seen.lookup(g)] : Value();
      auto [mean, m2, count] = foldCentered(
          lb, loc, g, c->second, points, pass.rowIdx.size(), valid, cache,
          pass.shifts.lookup(g), accs[slot], accs[slots.m2.lookup(g)],
          loop.getInductionVar(), pass.colStart, pass.step, inRow, seen);
      if (!mean)
        return failure();
      next[slot] = mean;
      next[slots.m2.lookup(g)] = m2;
      if (shifted)
        next[slots.seen.lookup(g)] =
            arith::AddFOp::create(lb, loc, seen, count);
      continue;
    }
    FailureOr<Value> acc = foldStreamingMember(lb, loc, pass, g, places, ragged,
                                               cache, accs, next);
    if (failed(acc))
      return failure();
    next[slot] = *acc;
  }
  if (pass.storeReady && failed(storeReadyOutputs(lb, loc, places, cache)))
    return failure();
  scf::YieldOp::create(lb, loc, next);
  return loop;
}

LogicalResult
RowKernel::emitStreamingPass(OpBuilder &kb, Location loc, Value tid,
                             ArrayRef<Value> rowIdx, Value colStart,
                             int64_t step, int64_t numCols,
                             ArrayRef<linalg::GenericOp> members) {
  auto cIdx = kfuse::indexConstants(loc);
  StreamingPass pass;
  pass.members = members;
  pass.rowIdx = rowIdx;
  pass.colStart = colStart;
  pass.step = step;
  pass.numCols = numCols;
  // (shifted: over virtual columns, up to n + rowShift)
  int64_t span = shifted ? numCols + width - 1 : numCols;
  int64_t trips = (span + step - 1) / step;
  int64_t k = pass.k = streamingTrip(trips);
  bool masked = shifted || numCols % (step * k) != 0;
  if (failed(beginStreamingPass(kb, loc, pass)))
    return failure();
  // Rows the trips do not divide, a block per row: the trips whose every
  // entry lies in the row run without the tests (no guarded loads, no
  // selects), up to numCols - (k - 1) step, then the rest (one trip at
  // most) with them. Cross-entropy over 50257 columns, single floats 4 a
  // trip: a third fewer PTX instructions issued (bench/issue_counts.py:
  // 13.0 against 19.3 warp-instructions per 128 B). The row's warps each
  // save a tested trip for every trip but their last, and the warp that
  // the bound passes through runs one trip both ways: peeled where the
  // warps' trips number 3 and more beyond their last (not a row one trip
  // covers, where every warp's only trip is its last). A thread per row
  // runs the same trips in every thread: peeled where it runs two or more
  // (a split's partials over NHWC's 392 rows of a slice, 16 a trip: 24
  // untested trips, then one).
  int64_t iterations = (trips + k - 1) / k;
  int64_t rowWarps = (step / width + 31) / 32;
  bool peel =
      masked && !shifted && k > 1 && peelTrips &&
      (perThread ? iterations >= 2
                 : rowsPerBlock == 1 && rowWarps * (iterations - 1) >= 3);
  FailureOr<scf::ForOp> loop = failure();
  if (peel) {
    int64_t untested = std::max<int64_t>(numCols - (k - 1) * step, 0);
    FailureOr<scf::ForOp> whole =
        emitColumnLoop(kb, loc, pass, colStart, cIdx(kb, untested), pass.inits,
                       /*ragged=*/false);
    if (failed(whole))
      return failure();
    // (where it ended: the first of its columns at or past `untested`)
    Value covered = arith::SubIOp::create(
        kb, loc, arith::MaxUIOp::create(kb, loc, cIdx(kb, untested), colStart),
        colStart);
    Value tripsRun =
        arith::CeilDivUIOp::create(kb, loc, covered, cIdx(kb, step * k));
    Value rest = arith::AddIOp::create(
        kb, loc, colStart,
        arith::MulIOp::create(kb, loc, tripsRun, cIdx(kb, step * k)));
    loop = emitColumnLoop(kb, loc, pass, rest, pass.end, whole->getResults(),
                          /*ragged=*/true);
  } else {
    loop =
        emitColumnLoop(kb, loc, pass, colStart, pass.end, pass.inits, masked);
  }
  if (failed(loop))
    return failure();
  finishPass(kb, loc, tid, *loop, members, pass.slots, colStart, step, numCols);
  return success();
}

void RowKernel::chooseRowTiles() {
  // A thread per row reads its row once per pass: fine for a reduction,
  // but phases that store full-space results would each read it again.
  // Row tiles keep the row in registers instead (softmax over the
  // channels of NCHW: one read, not three), and serve rows too few to
  // fill the GPU with threads. A tile has a sector's worth of rows for
  // the widest element (8 of f32), no more than there are rows.
  // (a thread holding its whole row in registers when the row is short:
  // a softmax over the leading axis of x[6, 70000])
  if (rowsFill && (fullSpaceOutputs().empty() || totalCols <= 32)) {
    perThread = true;
    if (!fullSpaceOutputs().empty())
      chunks = totalCols;
  } else {
    // (elements in memory: inputs the group reads, results it stores;
    // intermediates stay in registers, maybe wider)
    unsigned widest = 1;
    auto widen = [&](Value v) {
      if (auto m = dyn_cast<MemRefType>(v.getType()))
        widest =
            std::max<unsigned>(widest, (m.getElementTypeBitWidth() + 7) / 8);
    };
    for (linalg::GenericOp g : generics)
      for (OpOperand *in : g.getDpsInputOperands())
        if (!writerBefore(in->get(), position[g]))
          widen(in->get());
    for (auto [g, i] : fullSpaceOutputs())
      widen(g.getDpsInits()[i]);
    rowsPerBlock =
        tileRows > 0 ? tileRows : std::clamp<int64_t>(32 / widest, 1, 32);
    while (rowsPerBlock > 1 && rowsPerBlock / 2 >= totalRows)
      rowsPerBlock /= 2;
  }
}

void RowKernel::chooseVectors(ArrayRef<SmallVector<linalg::GenericOp>> passes) {
  // Register mode when a thread's share of a row fits in a few vectors.
  // The vector width follows the widest element read or written along
  // the columns (row-space operands such as labels are scalars).
  unsigned widest = 1;
  unsigned inner = rowShape.size() + colShape.size() - 1;
  for (linalg::GenericOp g : generics)
    for (OpOperand &o : g->getOpOperands())
      if (auto m = dyn_cast<MemRefType>(o.get().getType()))
        if (isFullSpace(g) &&
            g.getMatchingIndexingMap(&o).isFunctionOfDim(inner))
          widest =
              std::max<unsigned>(widest, (m.getElementTypeBitWidth() + 7) / 8);
  // Where rows do not all start on a boundary of the widest vector (a
  // width no multiple of it, or a view of such rows; and one column
  // loop, nothing summed over the rows, a buffer in the rows' layout),
  // chunks follow memory instead of the row: see `shifted`. Rows that
  // store results take a warp's worth of vectors at least: the row's
  // first and last chunks store lane by lane (a softmax over 33 columns
  // stores fewer sectors a float at a time). Otherwise vectors as wide
  // as every row's start allows: narrower ones move whole sectors a
  // request, wider ones would go lane by lane (a lane a request, each
  // sector asked for once a lane).
  int64_t natural = std::min<int64_t>(16 / widest, rowAlignment());
  int64_t widestVector = std::min<int64_t>(16 / widest, 8);
  // (a group that streams by choice, see `streams` below, of 4-byte
  // elements or wider: single halves of an odd row, 64 bytes a warp, ask
  // for 1.4x their sectors, single floats 1.05x)
  bool streamsByChoice = chunksPerThread == 0 ||
                         (passes.size() == 1 && fullSpaceOutputs().empty());
  shifted = shiftChunks && (shiftStreams || !streamsByChoice || widest < 4) &&
            colShape.size() == 1 && rowsPerBlock == 1 &&
            natural < widestVector && totalCols >= widestVector &&
            (fullSpaceOutputs().empty() || totalCols >= 32 * widestVector) &&
            columnSums.empty() && !contraction && readsRowLayout() &&
            allInRowLayout();
  width = shifted ? widestVector : natural;
}

void RowKernel::chooseTileThreads(bool streams) {
  // Row tiles: scalars (a row's columns are apart in memory), four per
  // vector chunk the aim would give a block per row; column threads a
  // power of two, the block whole warps.
  width = 1;
  int64_t tile = rowsPerBlock;
  auto colThreads = [&](int64_t aim) {
    return std::clamp<int64_t>(llvm::PowerOf2Ceil((totalCols + aim - 1) / aim),
                               32 / tile, 1024 / tile);
  };
  int64_t c = colThreads(4 * (streams ? kStreamAim : chunksPerThread));
  chunks = streams ? 0 : (totalCols + c - 1) / c;
  if (chunks > 4 * chunksInRegisters(tile * c)) {
    c = colThreads(4 * kStreamAim);
    chunks = 0;
  }
  // Tiles too few for a block on every SM: more column threads (down
  // to 4 columns each).
  int64_t tiles = (totalRows + tile - 1) / tile;
  while (tiles < smCount && tile * c < 1024 && totalCols >= 8 * c) {
    c *= 2;
    if (chunks)
      chunks = (totalCols + c - 1) / c;
  }
  threads = tile * c;
}

RowKernel::ThreadBudget RowKernel::threadBudget() {
  ThreadBudget budget(*this);
  // (shifted: virtual columns, up to n + rowShift)
  budget.span = shifted ? totalCols + width - 1 : totalCols;
  // (a block per row: its share of the SM's registers, `occupancy`
  // blocks of it an SM; blocks of at most 1024 / occupancy threads. Not
  // beside column sums, whose partials take registers of their own.)
  budget.rowOccupancy = rowsPerBlock == 1 && columnSums.empty() ? occupancy : 1;
  budget.mostThreads = 1024 / budget.rowOccupancy;
  budget.clusterThreads = clusterBlockThreads(maxCluster, budget.rowOccupancy);
  // Chunks a thread of a block may keep in shared memory beyond its
  // registers (block per row, nothing folded over the rows; blocks of 512
  // threads or fewer, meant to share an SM, their share of the budget):
  // only for 4-byte elements in whole vectors, rows of one column
  // dimension or of several over a buffer laid out as the rows (a group
  // norm's (C/G, H, W): 0 spills). With a block's 64 registers a thread,
  // ptxas spilled 50 to 500 bytes a thread on softmaxes, layer norms and
  // RMS norms over 70001 floats (shifted) or of f16 (8 or 4 chunks in
  // registers), 60 to 150 on f64 softmaxes, 4 to 24 on NCHW batch norm's
  // channels of (n, h, w), whatever the chunks in registers.
  if (sharedRowBytes > 0 && columnSums.empty() && !contraction &&
      rowsPerBlock == 1 && !shifted &&
      (colShape.size() == 1 || (layout.identity && readsRowLayout())))
    budget.heldInputs = sharedRowInputs(budget.heldBytes);
  if (budget.heldBytes != 4 * budget.heldInputs)
    budget.heldInputs = 0;
  return budget;
}

std::pair<int64_t, int64_t>
RowKernel::ThreadBudget::shape(int64_t cols, int64_t aim, int64_t most) const {
  int64_t width = k.width;
  int64_t wanted = (cols + width * aim - 1) / (width * aim);
  int64_t t = std::clamp<int64_t>((wanted + 31) / 32 * 32, 32, most);
  return std::make_pair(t, (cols + t * width - 1) / (t * width));
}

int64_t RowKernel::ThreadBudget::sharePerBlock(int64_t n) const {
  return k.shifted ? (span + n * k.width - 1) / (n * k.width) * k.width
                   : k.totalCols / n;
}

int64_t RowKernel::ThreadBudget::room(int64_t threads) const {
  return chunksInRegisters(threads * rowOccupancy);
}

int64_t RowKernel::ThreadBudget::sharedRoom(int64_t threads) const {
  if (!heldInputs)
    return 0;
  int64_t budget = k.sharedRowBytes / std::max<int64_t>(1, 1024 / threads);
  return budget / (threads * k.width * heldBytes);
}

int64_t RowKernel::ThreadBudget::sharedRegs(int64_t threads,
                                            int64_t blocks) const {
  return blocks > 1 ? std::min(room(threads), kClusterRoom) - 3
                    : room(threads) - 2;
}

int64_t RowKernel::ThreadBudget::clusterRoom(int64_t threads) const {
  return std::min(room(threads), kClusterRoom);
}

bool RowKernel::packsColumnSums(bool streams) const {
  return !columnSums.empty() && !streams && !contraction && packRows != 1 &&
         foldRows != 1 && rowSegment() % 2 == 0 &&
         llvm::all_equal(llvm::map_range(columnSums, [](const ColumnSum &c) {
           return cast<MemRefType>(c.terms.getType()).getElementType();
         }));
}

void RowKernel::chooseCluster(const ThreadBudget &budget, int64_t t) {
  // Too long for one block's registers: spread the row over a cluster
  // of 2..maxCluster blocks (the fewest that keep `chunksPerThread`
  // chunks, else the fewest that fit), each block holding an equal
  // whole-vector share. Where clusters may exceed CUDA's portable 8
  // blocks, blocks have at most 512 threads (two fit an SM, so one
  // loads while the other waits at a cluster barrier).
  for (bool atAim : {true, false}) {
    for (int64_t n = 2; n <= maxCluster && cluster == 1; n *= 2) {
      if (!shifted && totalCols % (n * width) != 0)
        continue;
      auto [nt, nc] = budget.shape(budget.sharePerBlock(n), chunksPerThread,
                                   budget.clusterThreads);
      if (nc <= (atAim ? chunksPerThread : budget.clusterRoom(nt)))
        cluster = n;
    }
    if (cluster > 1)
      break;
  }
  // With rows in shared memory: one block, or the fewest blocks of a
  // cluster, whose registers and shared memory hold their share,
  // where fewer than registers alone would take (a row of 262144
  // floats over 4 blocks, not 8; 65536 in one block, not 4), as
  // long as the rows' blocks still give every SM one where the
  // registers' would (32 rows of 131072: 8 blocks each, not 2).
  int64_t fewest = 0;
  if (budget.heldInputs &&
      chunks <= budget.sharedRegs(t, 1) + budget.sharedRoom(t))
    fewest = 1;
  for (int64_t n = 2; n <= maxCluster && !fewest && budget.heldInputs; n *= 2) {
    if (!shifted && totalCols % (n * width) != 0)
      continue;
    auto [nt, nc] = budget.shape(budget.sharePerBlock(n), chunksPerThread,
                                 budget.clusterThreads);
    if (nc <= budget.clusterRoom(nt))
      break;
    if (nc <= budget.sharedRegs(nt, n) + budget.sharedRoom(nt))
      fewest = n;
  }
  // (async exchange: a cluster whose blocks hold their share in
  // registers stays, since its exchanges cost no cluster barrier; the
  // 262144-wide softmax on an H200, 2026-11-27: 159.5 us over 8 blocks
  // of registers, 165.5 over 4 with shared memory; with barriers
  // 174.8 and 169.3, bench/RESULTS.md)
  if (fewest && (cluster == 1 || (!(asyncExchange && fewest > 1) &&
                                  totalRows * fewest >=
                                      std::min(smCount, totalRows * cluster))))
    cluster = fewest;
}

void RowKernel::settleThreads(const ThreadBudget &budget, bool streams,
                              int64_t t) {
  if (streams) {
    // Each thread folds about `kStreamAim` vectors of the row per pass, in
    // trips of `batch`.
    chunks = 0;
    threads = t;
    // Rows too few to fill the device at that aim (a split's 144 slices
    // of 4096 floats: blocks of 64 threads, two warps an SM, each thread
    // four round trips to memory): more threads a row, until a thread's
    // share takes one trip (2 x `batch` vectors at most, see
    // emitStreamingPass), while the rows' threads are fewer than 8
    // warps an SM. (A model, not yet timed. Not for shifted chunks,
    // whose blocks' shares stay as shaped, nor with row-trip's chunks a
    // trip.)
    if (exactThreads == 0 && !packColumnSums && columnSums.empty() &&
        !shifted && tripChunks == 0)
      while (threads * 2 <= budget.mostThreads &&
             totalRows * threads < smCount * 256 &&
             budget.span > threads * width * 2 * batch)
        threads *= 2;
  } else if (cluster > 1) {
    colsPerBlock = budget.sharePerBlock(cluster);
    std::tie(t, chunks) =
        budget.shape(colsPerBlock, chunksPerThread, budget.clusterThreads);
    threads = t;
    if (chunks > budget.clusterRoom(t))
      regChunks = budget.sharedRegs(t, cluster);
  } else if (chunks > budget.room(t) &&
             chunks > budget.sharedRegs(t, 1) + budget.sharedRoom(t)) {
    // Streaming mode, still `width` columns per access; rows this long
    // are few per SM, so give each the most threads.
    chunks = 0;
    threads = budget.mostThreads;
  } else {
    threads = t;
    if (chunks > budget.room(t))
      regChunks = budget.sharedRegs(t, 1);
  }
}

void RowKernel::chooseThreads(ArrayRef<SmallVector<linalg::GenericOp>> passes) {
  chooseVectors(passes);
  ThreadBudget budget = threadBudget();
  sharedSlotsAllowed = budget.heldInputs;
  bool streams = chunksPerThread == 0;
  // A group that reads its row in one pass anyway (one streaming pass
  // folds every reduction, an online max and sum included, and no
  // full-space result leaves the kernel) streams: registers would keep
  // nothing for a later phase, and fewer of them per thread keep more
  // threads loading (cross-entropy over 32000 columns: 1.12x faster on an
  // H100 than in registers, bench/RESULTS.md).
  if (!streams && passes.size() == 1 && fullSpaceOutputs().empty())
    streams = true;
  if (rowsPerBlock > 1) {
    chooseTileThreads(streams);
    return;
  }
  auto [t, c] = budget.shape(
      budget.span, streams ? kStreamAim : chunksPerThread, budget.mostThreads);
  if (exactThreads > 0) {
    t = exactThreads;
    c = (budget.span + t * width - 1) / (t * width);
  } else if (packsColumnSums(streams)) {
    // Wider rows: a block's worth of threads a row (`t`), several rows
    // a block where the partials' shared memory allows (see below).
    packColumnSums = true;
  }
  if (packColumnSums && (budget.span + 32 * width - 1) / (32 * width) <= 8) {
    // Column sums beside rows a warp's registers hold (8 vectors a
    // lane at most: the partials take as many more): a warp a row,
    // several rows a block (packed, see below), so that a block keeps
    // several rows in flight and folds several into each partial.
    // (A block a row of 768 floats keeps one row's 6 KB in flight;
    // filling the SMs then takes a block per 4 rows, partials a quarter
    // of the input: layer norm backward over [4096, 768] moves 1.35x
    // its unavoidable bytes, packed 1.09x.)
    t = 32;
    c = (budget.span + 32 * width - 1) / (32 * width);
  }
  chunks = c;
  if (!streams && chunks > budget.room(t))
    chooseCluster(budget, t);
  settleThreads(budget, streams, t);
}

int64_t RowKernel::chooseBlockThreads() {
  // Fewer threads than columns is pointless; keep whole warps.
  int64_t t =
      perThread || chunks || rowsPerBlock > 1 || exactThreads > 0
          ? threads
          : std::min<int64_t>(
                threads, std::max<int64_t>(32, (totalCols + 31) / 32 * 32));
  if (perThread && !contraction) {
    // Rows too few for a block of `t` on every SM: smaller blocks (whole
    // warps), and more loads in flight per thread. (exactThreads: a split's
    // finish whose blocks take the partials kernel's tiles of rows.)
    if (exactThreads > 0)
      t = exactThreads;
    else
      while (t > 32 && (totalRows + t - 1) / t < smCount)
        t /= 2;
    while (threadBatch < 32 && totalRows * threadBatch < smCount * 8192)
      threadBatch *= 2;
  }
  // Rows a warp covers: several a block, a warp each, as long as the
  // blocks still number twice the SMs. (Rows of 256 floats, a block of 32
  // threads each: at most 32 blocks an SM, half its threads, and a kernel
  // over 262144 of them took 1.24x the copy's time on an H200, torch's
  // 1.03x; 2 or 4 rows a block 1.02x, 8 1.04x, 32 1.03x, bench/RESULTS.md.)
  // Only where nothing but the warp's shuffles combines a row: no
  // cluster, no row in shared memory, no column sums, none of a split's
  // kernels but its store over (positions, rows) (the others take a block
  // as a slice: splitLongRows sets their packRows to 1).
  // Rows of fewer vectors than a warp has lanes, in a kernel that combines
  // nothing across them (no reduction: a split's store over (positions,
  // channels) of 64 floats a position), take a group of as many lanes as
  // their vectors (a power of two) and share each warp: 32 / t rows a warp
  // at least, whose loads and stores move 512 bytes a request, not half a
  // warp's 256 with the other lanes idle.
  bool packable = packRows != 1 && !perThread && !contraction &&
                  rowsPerBlock == 1 && cluster == 1 && t == 32 &&
                  exactThreads == 0 && columnSums.empty() && sharedLimit == 0;
  if (packable && !hasReductions() && !shifted && chunks == 1 &&
      totalCols < 32 * width && colShape.size() == 1)
    t = std::max<int64_t>(1,
                          llvm::PowerOf2Ceil((totalCols + width - 1) / width));
  if (packable) {
    // (groups narrower than a warp: a warp's rows at least; by default up
    // to 4 warps' worth)
    int64_t fewest = 32 / t;
    int64_t most = std::max(packRows > 1 ? packRows : 4 * fewest, fewest);
    packedRows = fewest;
    while (packedRows * 2 <= most &&
           (totalRows + packedRows * 2 - 1) / (packedRows * 2) >= 2 * smCount)
      packedRows *= 2;
  }
  return t;
}

int64_t RowKernel::chooseRun(int64_t t) {
  int64_t segment = rowSegment();
  // Packed column sums: `packedRows` rows a block, a group of `t` threads
  // (a warp, or several) each, then the groups' partials combined through
  // shared memory (a group's share: 32 KB for the block at most, 8 groups
  // at most; wider groups fill 512 threads a block, the fold target's
  // threads an SM). Runs that leave about 512 threads an SM: each thread
  // holds whole rows' vectors in flight, and the fewer blocks the smaller
  // the partials. The groups share the block's barriers (all take part in
  // each other's row combines): rows are whole runs, so every group
  // reaches every barrier. Groups wider than a warp: [4096, 2048] layer
  // norm backward, a block of 128 threads a row, moved 1.18x its
  // unavoidable bytes (512 blocks of 8 rows), 4 rows a block 1.05x.
  int64_t run = 1;
  if (packColumnSums && chunks > 0 && cluster == 1 && regChunks == chunks &&
      rowsPerBlock == 1 && !perThread && !contraction) {
    unsigned accBits = cast<MemRefType>(columnSums.front().terms.getType())
                           .getElementType()
                           .getIntOrFloatBitWidth();
    int64_t slotBytes = chunks * t * width * std::max<int64_t>(1, accBits / 8);
    int64_t most = std::min<int64_t>(
        {packRows > 1 ? packRows
         : t == 32    ? 8
                      : std::max<int64_t>(1, 512 / t),
         std::max<int64_t>(t == 32 ? 2 : 1, 32768 / slotBytes),
         std::max<int64_t>(1, 1024 / t)});
    // (warps: at least 2 a block, as long as the rows divide; wider groups
    // down to 1, a block a row)
    int64_t fewest = t == 32 ? 2 : 1;
    packedRows = most;
    while (packedRows > fewest &&
           (segment % packedRows != 0 || totalRows / packedRows < smCount))
      --packedRows;
    while (segment % packedRows != 0)
      --packedRows;
    if (foldRows > 0) {
      // (the largest divisor of the rows up to foldRows, over as many
      // groups as divide it)
      int64_t fold = largestDivisor(segment, foldRows);
      for (packedRows = std::min(most, fold); fold % packedRows != 0;)
        --packedRows;
      run = fold / packedRows;
    } else {
      int64_t groups = totalRows / packedRows;
      int64_t target = smCount * std::max<int64_t>(1, 512 / (t * packedRows));
      int64_t best = groups;
      for (int64_t s = 1; s <= groups && groups / s * 2 >= target; ++s)
        if ((segment / packedRows) % s == 0 &&
            std::abs(groups / s - target) <= std::abs(best - target)) {
          best = groups / s;
          run = s;
        }
    }
    if (packedRows == 1)
      packColumnSums = false, run = 1; // (a fold of a prime count of rows)
  } else {
    packColumnSums = false;
  }
  // Column sums in register mode: a block takes `run` consecutive rows
  // (a divisor of the rows, so that no row is partial) and folds their
  // terms in registers; blocks of `t` threads' worth of 512 per SM keep
  // the partials small beside the rows (8192 rows of 8192 on 132 SMs: 128
  // blocks of 64 rows; on an H200 layer norm backward took 257.4 us so,
  // 260.6 with 256 blocks of 32, 269.7 with 512 of 16, bench/RESULTS.md).
  if (!packColumnSums && !columnSums.empty() && chunks > 0 && cluster == 1 &&
      rowsPerBlock == 1 && !perThread && !contraction) {
    if (foldRows > 0) {
      run = largestDivisor(segment, foldRows);
    } else {
      int64_t target = smCount * std::max<int64_t>(1, 512 / t);
      int64_t best = totalRows;
      for (int64_t s = 1; s <= totalRows && totalRows / s * 2 >= target; ++s)
        if (segment % s == 0 &&
            std::abs(totalRows / s - target) <= std::abs(best - target)) {
          best = totalRows / s;
          run = s;
        }
    }
  }
  return run;
}

void RowKernel::choosePersist(int64_t t) {
  // Persistent kernel: rows over a cluster whose blocks hold their shares
  // in registers (exchanging with st.async), or over one block holding the
  // row in registers, each block's share of every row-varying input copied
  // whole into shared memory.
  // (fusion-generic-to-gpu takes row-persist only with clusters allowed,
  // row-cluster above 1: sm_90, whose cp.async.bulk the copies are)
  if (persistClusters != 0 && (cluster == 1 || asyncExchange) && chunks > 0 &&
      regChunks == chunks && !shifted && !perThread && rowsPerBlock == 1 &&
      packedRows == 1 && columnSums.empty() &&
      shareCols() * cluster == totalCols && shareCols() == chunks * t * width &&
      totalRows > std::max<int64_t>(1, persistClusters)) {
    int64_t bytes = 0;
    for (RowMajorInput &in : rowMajorInputs())
      if (heldInShared(in.reads.front().second)) {
        bytes += shareCols() * in.bytes;
        persist.inputs.push_back(std::move(in));
      }
    // (within the block's share of row-smem, as rows kept there are)
    persist.on = !persist.inputs.empty() &&
                 bytes <= sharedRowBytes / std::max<int64_t>(1, 1024 / t);
    if (!persist.on)
      persist.inputs.clear();
  }
}

int64_t RowKernel::rowsPast(unsigned kept) const {
  int64_t n = 1;
  for (int64_t d : ArrayRef<int64_t>(rowShape).drop_front(kept))
    n *= d;
  return n;
}

int64_t RowKernel::rowSegment() const {
  unsigned mostKept = 0;
  for (const ColumnSum &c : columnSums)
    mostKept = std::max(mostKept, c.kept);
  return rowsPast(mostKept);
}

gpu::LaunchOp RowKernel::createLaunch(OpBuilder &b, Location loc,
                                      int64_t blocks, int64_t t) {
  linalg::GenericOp first = generics.front();
  auto cIdx = kfuse::indexConstants(loc);
  Value one = cIdx(b, 1);
  auto func = first->getParentOfType<FunctionOpInterface>();
  // Cluster mode: one workgroup slot per reduction for its block total
  // (async exchange: a slot per block of the cluster, as integers, and the
  // mbarrier their arrival completes).
  SmallVector<Type> slotTypes;
  if (cluster > 1)
    for (linalg::GenericOp g : generics)
      if (g.getNumReductionLoops() > 0) {
        Type wide = combinedType(
            cast<MemRefType>(g.getDpsInits()[0].getType()).getElementType());
        auto workgroup = gpu::AddressSpaceAttr::get(
            b.getContext(), gpu::AddressSpace::Workgroup);
        if (asyncExchange) {
          // (persistent: twice over, by the parity of the block's rows)
          int64_t copies = persist.on ? 2 : 1;
          slotTypes.push_back(
              MemRefType::get({copies * cluster}, exchangeType(wide),
                              MemRefLayoutAttrInterface(), workgroup));
          slotTypes.push_back(MemRefType::get({copies}, b.getI64Type(),
                                              MemRefLayoutAttrInterface(),
                                              workgroup));
        } else {
          slotTypes.push_back(MemRefType::get(
              {1}, wide, MemRefLayoutAttrInterface(), workgroup));
        }
      }
  Value clusterSize = cluster > 1 ? cIdx(b, cluster) : Value();
  auto launch = gpu::LaunchOp::create(
      b, loc, cIdx(b, blocks), one, one, cIdx(b, t * packedRows), one, one,
      nullptr, nullptr, {}, slotTypes, {}, clusterSize,
      cluster > 1 ? one : Value(), cluster > 1 ? one : Value(),
      FlatSymbolRefAttr::get(b.getContext(), "kfuse_kernels"),
      FlatSymbolRefAttr::get(b.getContext(),
                             (func.getName() + "_" + name).str()));
  launchOp = launch;
  blockThreads = t * packedRows;
  if (occupancy > 1 && cluster == 1 && rowsPerBlock == 1 && !perThread &&
      columnSums.empty() && blockThreads * occupancy <= 1024) {
    // (the blocks an SM holds by registers, for ptxas: fusion-cluster-dims
    // moves it to the outlined kernel as nvvm.minctasm; cluster kernels get
    // theirs from the cluster's block size; blocks of a size given from
    // outside, a split's finish, keep their registers)
    setKernelHint(func, "kfuse.min_blocks_per_sm",
                  b.getI32IntegerAttr(occupancy));
  }
  if (persist.on)
    // (the most clusters worth launching, which fusion-cluster-dims puts on
    // the launch for the runtime: it launches as many of them as the
    // device holds at once)
    setKernelHint(func, "kfuse.persistent", b.getI64IntegerAttr(persistGrid()));
  Block &launchBody = launch.getBody().front();
  if (cluster > 1) {
    // (LaunchOp's builder leaves out the six cluster id and size arguments
    // that a launch with clusters has after the twelve grid and block ones.)
    unsigned expected =
        launch.getNumConfigRegionAttributes() + unsigned(slotTypes.size());
    for (unsigned i = 0; launchBody.getNumArguments() < expected; ++i)
      launchBody.insertArgument(gpu::LaunchOp::kNumConfigRegionAttributes + i,
                                b.getIndexType(), loc);
  }
  return launch;
}

void RowKernel::initMbarriers(OpBuilder &kb, Location loc, Value tid, Value row,
                              int64_t t) {
  if (persist.on) {
    // The staged inputs' views of the dynamic shared memory, chunk k of
    // thread t at the share's columns (k t_n + t) * width on, as in
    // memory; the mbarrier the copies complete.
    auto workgroup = gpu::AddressSpaceAttr::get(kb.getContext(),
                                                gpu::AddressSpace::Workgroup);
    persist.bar = launchOp.addWorkgroupAttribution(
        MemRefType::get({1}, kb.getI64Type(), MemRefLayoutAttrInterface(),
                        workgroup),
        loc);
    for (const RowMajorInput &in : persist.inputs) {
      Type elem = cast<MemRefType>(in.buffer.getType()).getElementType();
      persist.views.push_back(sharedView(
          loc, MemRefType::get({chunks, t}, VectorType::get({width}, elem)),
          shareCols() * in.bytes));
    }
  }
  if (cluster > 1 && asyncExchange)
    initExchange(kb, loc, tid); // (the staging mbarrier's too)
  if (persist.on) {
    if (cluster > 1) {
      // (every block's mbarriers initialized before any st.async)
      NVVM::ClusterWaitOp::create(kb, loc, kb.getUnitAttr());
      clusterReady = true;
    } else {
      // (a block a row: thread 0 initializes the staging mbarrier, the
      // barrier shows it to every thread)
      OpBuilder ib = scf::IfOp::create(kb, loc, isZero(kb, loc, tid),
                                       /*withElse=*/false)
                         .getThenBodyBuilder();
      NVVM::MBarrierInitOp::create(
          ib, loc, sharedAddress(ib, loc, persist.bar),
          arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), 1),
          /*predicate=*/Value());
      NVVM::FenceMbarrierInitOp::create(ib, loc);
      gpu::BarrierOp::create(kb, loc);
    }
    // Thread 0 copies the share of the cluster's (or block's) first row,
    // where it has one: a grid of more clusters than rows leaves some idle.
    stageRow(kb, loc, tid, row);
  }
}

Operation *RowKernel::beginPersistLoop(OpBuilder &kb, Location loc, Value tid,
                                       Value &row) {
  int64_t numRows = totalRows;
  auto cIdx = kfuse::indexConstants(loc);
  // Cluster `row` of the n the launch has takes rows row, row + n, ...:
  // the k-th waits for its shares' copies (phase k of the staging
  // mbarrier), takes them into registers, and once every thread has (a
  // barrier) thread 0 copies the next row's; exchanges use the slots of
  // parity k. (n is the grid's, %nclusterid.x, not a constant: the
  // runtime may launch fewer clusters than the plan, those the device
  // holds at once; without clusters, the grid's blocks.)
  // (only the row lives across the loop: n is read from its special
  // register where it is used, and k = row / n as cid < n; a trip count
  // and n live across it cost the group norm's cluster kernel, at 64
  // registers, 12 bytes more of spills, ptxas)
  auto clusters = [&](OpBuilder &ob) -> Value {
    return arith::IndexCastUIOp::create(
        ob, loc, ob.getIndexType(),
        NVVM::ClusterDimXOp::create(ob, loc, ob.getI32Type()));
  };
  Type indexType = kb.getIndexType();
  auto loop =
      scf::WhileOp::create(kb, loc, TypeRange{indexType}, ValueRange{row});
  {
    Block *before =
        OpBuilder(loop).createBlock(&loop.getBefore(), {}, {indexType}, {loc});
    OpBuilder wb = OpBuilder::atBlockBegin(before);
    Value r = before->getArgument(0);
    scf::ConditionOp::create(wb, loc,
                             arith::CmpIOp::create(wb, loc,
                                                   arith::CmpIPredicate::ult, r,
                                                   cIdx(wb, numRows)),
                             ValueRange{r});
  }
  Block *after =
      OpBuilder(loop).createBlock(&loop.getAfter(), {}, {indexType}, {loc});
  row = after->getArgument(0);
  {
    OpBuilder yb = OpBuilder::atBlockEnd(after);
    scf::YieldOp::create(
        yb, loc,
        ValueRange{
            arith::AddIOp::create(yb, loc, row, clusters(yb)).getResult()});
    kb.setInsertionPoint(after->getTerminator());
  }
  Value k = arith::DivUIOp::create(kb, loc, row, clusters(kb));
  persist.buffer = arith::AndIOp::create(kb, loc, k, cIdx(kb, 1));
  auto parity = [&](Value v) -> Value {
    return arith::IndexCastOp::create(kb, loc, kb.getI32Type(), v);
  };
  persist.stageParity = parity(persist.buffer);
  persist.phase = parity(arith::AndIOp::create(
      kb, loc, arith::ShRUIOp::create(kb, loc, k, cIdx(kb, 1)), cIdx(kb, 1)));
  waitPhase(kb, loc, sharedAddress(kb, loc, persist.bar), persist.stageParity);
  // (every view of a staged input finds its chunks loaded)
  for (auto [i, in] : llvm::enumerate(persist.inputs))
    for (int64_t c = 0; c < chunks; ++c) {
      Value v = memref::LoadOp::create(kb, loc, persist.views[i],
                                       ValueRange{cIdx(kb, c), tid});
      for (auto [buffer, map] : in.reads)
        loaded[std::make_tuple(buffer.getAsOpaquePointer(),
                               const_cast<void *>(map.getAsOpaquePointer()),
                               c)] = v;
    }
  gpu::BarrierOp::create(kb, loc);
  stageRow(kb, loc, tid, arith::AddIOp::create(kb, loc, row, clusters(kb)));
  return loop;
}

LogicalResult RowKernel::emitStreamingReductions(
    OpBuilder &kb, Location loc, Value tid, ArrayRef<Value> rowIdx,
    Value colStart, int64_t colStride,
    ArrayRef<SmallVector<linalg::GenericOp>> passes,
    SmallVector<std::pair<Value, Value>> &rowOutputs) {
  int64_t numCols = totalCols;
  for (linalg::GenericOp g : generics) {
    if (g.getNumReductionLoops() > 0) {
      for (ArrayRef<linalg::GenericOp> members : passes)
        if (members.front() == g &&
            failed(emitStreamingPass(kb, loc, tid, rowIdx, colStart, colStride,
                                     numCols, members)))
          return failure();
      Combiner comb = *findCombiner(g);
      Value total = totals[g];
      if (auto on = onlineSums.find(g); on != onlineSums.end()) {
        // sum(exp(e - r)) from the pass's sum against its max M, r
        // computed from the row's max m (its init folded in).
        Value m = rowValueBefore(on->second.maxBuffer, position[g]);
        total = onlineSum(kb, loc, total, on->second.maxTotal,
                          on->second.ref.of(kb, loc, m));
      }
      if (auto c = centeredSums.find(g); c != centeredSums.end()) {
        // sum((e - q)^2) = M2 + n (mean - q)^2, q now known.
        Value q = rowValueBefore(c->second.qBuffer, position[c->first]);
        if (!q)
          return g.emitError() << "kfuse: kernel '" << name
                               << "' reads a row value before computing it";
        q = c->second.center.of(kb, loc, q);
        // (mean - q as (shift - q) + offset: exact where q is within a
        // factor 2 of the shift, however large both are)
        Value off = arith::AddFOp::create(
            kb, loc, arith::SubFOp::create(kb, loc, c->second.shift, q),
            c->second.offset);
        Value n = floatConstant(kb, loc, total.getType(), double(numCols));
        // (sum(e - q) = n (mean - q))
        total =
            c->second.squares
                ? arith::AddFOp::create(
                      kb, loc, total,
                      arith::MulFOp::create(
                          kb, loc, n, arith::MulFOp::create(kb, loc, off, off)))
                      .getResult()
                : arith::MulFOp::create(kb, loc, n, off).getResult();
      }
      // (trailing reductions: the row indices are the leading loops, and a
      // scalar is wanted, not a vector)
      SmallVector<Value> initIdx = width > 1 ? SmallVector<Value>(rowIdx)
                                             : orderLoops(kb, loc, g, rowIdx);
      if (failed(finishReduction(kb, loc, g, comb, total, initIdx, rowOutputs)))
        return failure();
    } else if (isRowSpace(g)) {
      if (failed(evalRowSpace(kb, loc, g, rowIdx, rowOutputs)))
        return failure();
    }
  }
  return success();
}

LogicalResult RowKernel::storeFullSpaceOutputs(OpBuilder &kb, Location loc,
                                               ArrayRef<Value> rowIdx,
                                               Value colStart, Value colStep) {
  int64_t numCols = totalCols;
  auto cIdx = kfuse::indexConstants(loc);
  // Full-space results leave in one column loop (a thread per row: in
  // trips of `threadBatch` columns, every value of a trip computed before
  // its stores, so that the loads are in flight together).
  SmallVector<std::pair<linalg::GenericOp, unsigned>> fullOutputs;
  for (auto [g, i] : fullSpaceOutputs())
    if (!storedInPass.contains({g.getOperation(), i}))
      fullOutputs.push_back({g, i});
  if (!fullOutputs.empty()) {
    int64_t k = perThread && !contraction ? perThreadTrip(numCols) : 1;
    bool masked = numCols % k != 0;
    Value step = k == 1 ? colStep : cIdx(kb, k);
    // (shifted: virtual columns up to n + rowShift, one chunk a trip)
    assert((!shifted || k == 1) && "shifted chunks with a thread per row");
    auto loop = scf::ForOp::create(
        kb, loc, colStart,
        shifted ? arith::AddIOp::create(kb, loc, rowShift, cIdx(kb, numCols))
                      .getResult()
                : cIdx(kb, numCols),
        step);
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    struct Pending {
      linalg::GenericOp g;
      unsigned result;
      Value value, ok; // (ok: the column is in the row, if masked)
      SmallVector<Value> idx;
    };
    SmallVector<Pending> stores;
    for (int64_t j = 0; j < k; ++j) {
      Value col = loop.getInductionVar(), ok;
      if (shifted) {
        col = arith::SubIOp::create(lb, loc, col, rowShift);
        shiftedChunk(lb, loc, rowIdx, col, numCols, /*head=*/true,
                     /*tail=*/true);
      } else if (j > 0) {
        col = arith::AddIOp::create(lb, loc, col, cIdx(lb, j));
        if (masked) {
          ok = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, col,
                                     cIdx(lb, numCols));
          col = arith::SelectOp::create(lb, loc, ok, col, cIdx(lb, 0));
        }
      }
      SmallVector<Value> idx(rowIdx);
      llvm::append_range(idx, kfuse::delinearize(lb, loc, col, colShape));
      Cache cache;
      for (auto [g, i] : fullOutputs) {
        Value buffer = g.getDpsInits()[i];
        AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(i));
        auto v = valueAt(lb, loc, buffer, position[g] + 1, outMap, idx, cache);
        if (failed(v))
          return failure();
        stores.push_back({g, i, *v, ok, idx});
      }
    }
    for (Pending &p : stores) {
      OpBuilder sb = lb;
      if (p.ok)
        sb = scf::IfOp::create(lb, loc, p.ok, /*withElse=*/false)
                 .getThenBodyBuilder();
      storeColumns(sb, loc, p.value, p.g.getDpsInits()[p.result],
                   p.g.getMatchingIndexingMap(p.g.getDpsInitOperand(p.result)),
                   p.idx);
    }
  }
  return success();
}

void RowKernel::storeRowOutputs(OpBuilder &kb, Location loc, Value colThread,
                                ArrayRef<Value> rowIdx,
                                ArrayRef<std::pair<Value, Value>> rowOutputs) {
  if (rowOutputs.empty())
    return;
  OpBuilder ib = kb;
  if (!perThread) {
    // (the first column thread of each row of a tile)
    Value isFirst = isZero(kb, loc, colThread);
    if (cluster > 1) // (the first block of the cluster stores)
      isFirst = arith::AndIOp::create(kb, loc, isFirst, isZero(kb, loc, rank));
    if (rowInside)
      isFirst = arith::AndIOp::create(kb, loc, isFirst, rowInside);
    ib = scf::IfOp::create(kb, loc, isFirst, /*withElse=*/false)
             .getThenBodyBuilder();
  }
  for (auto [buffer, v] : rowOutputs) {
    // Stored through the writer's output map (a projected permutation).
    SmallVector<Value> at(rowIdx);
    if (auto w = writerBefore(buffer, generics.size())) {
      SmallVector<Value> loopIdx = orderLoops(ib, loc, w->first, rowIdx);
      at.clear();
      for (AffineExpr e :
           w->first
               .getMatchingIndexingMap(w->first.getDpsInitOperand(w->second))
               .getResults())
        at.push_back(loopIdx[cast<AffineDimExpr>(e).getPosition()]);
    }
    memref::StoreOp::create(ib, loc, v, buffer, at);
  }
}

void RowKernel::storeColumnPartials(OpBuilder &kb, Location loc,
                                    scf::ForOp runLoop, Value runBlock,
                                    Value tid, int64_t t) {
  int64_t numCols = totalCols;
  auto cIdx = kfuse::indexConstants(loc);
  // Each thread stores its columns' partials: row `runBlock` of each
  // column sum's partials.
  bool ragged = numCols % (t * width) != 0;
  // (the block's place in a column sum's partials: [kept index...,
  // block of it], then the columns)
  auto partialAt = [&](OpBuilder &pb, const ColumnSum &c) {
    SmallVector<Value> idx{runBlock};
    if (c.kept == 0)
      return idx;
    Value per = cIdx(pb, rowsPast(c.kept) / rowsPerPartial);
    idx = kfuse::delinearize(pb, loc,
                             arith::DivUIOp::create(pb, loc, runBlock, per),
                             ArrayRef<int64_t>(rowShape).take_front(c.kept));
    idx.push_back(arith::RemUIOp::create(pb, loc, runBlock, per));
    return idx;
  };
  auto identityOf = [&](const ColumnSum &c) {
    return AffineMap::getMultiDimIdentityMap(c.kept + 1 + colShape.size(),
                                             kb.getContext());
  };
  if (packColumnSums) {
    // The groups' partials through shared memory: each group (a warp, or
    // `t` threads) stores its chunks as row `packWarp` of a [groups,
    // chunks * t] buffer (one for every column sum, in turn), and every
    // thread of the block adds up the groups' values of a slot (chunk k
    // thread l: columns from (k * t + l) * width on) and stores the
    // block's partial.
    Value blockTid = launchOp.getThreadIds().x;
    int64_t slots = chunks * t;
    Value scratch;
    for (auto [i, c] : llvm::enumerate(columnSums)) {
      Type valType = runLoop.getResult(i * chunks).getType();
      if (!scratch ||
          cast<MemRefType>(scratch.getType()).getElementType() != valType)
        scratch = launchOp.addWorkgroupAttribution(
            MemRefType::get({packedRows, slots}, valType,
                            MemRefLayoutAttrInterface(),
                            gpu::AddressSpaceAttr::get(
                                kb.getContext(), gpu::AddressSpace::Workgroup)),
            loc);
      else
        gpu::BarrierOp::create(kb, loc); // (the last sum's reads done)
      for (int64_t k = 0; k < chunks; ++k)
        memref::StoreOp::create(
            kb, loc, runLoop.getResult(i * chunks + k), scratch,
            ValueRange{packWarp,
                       arith::AddIOp::create(kb, loc, tid, cIdx(kb, k * t))});
      gpu::BarrierOp::create(kb, loc);
      vector::CombiningKind vk = gpu::convertReductionKind(c.kind);
      for (int64_t first = 0; first < slots; first += blockThreads) {
        Value slot = arith::AddIOp::create(kb, loc, blockTid, cIdx(kb, first));
        Value col = arith::MulIOp::create(kb, loc, slot, cIdx(kb, width));
        OpBuilder sb = kb;
        if (first + blockThreads > slots || ragged) {
          // (slots * width >= numCols: the slots past the columns too)
          Value ok = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                           col, cIdx(kb, numCols));
          sb = scf::IfOp::create(kb, loc, ok, /*withElse=*/false)
                   .getThenBodyBuilder();
        }
        Value v;
        for (int64_t w = 0; w < packedRows; ++w) {
          Value x = memref::LoadOp::create(sb, loc, scratch,
                                           ValueRange{cIdx(sb, w), slot});
          v = v ? vector::makeArithReduction(sb, loc, vk, v, x) : x;
        }
        SmallVector<Value> idx = partialAt(sb, c);
        llvm::append_range(idx, kfuse::delinearize(sb, loc, col, colShape));
        storeColumns(sb, loc, v, c.partial, identityOf(c), idx);
      }
    }
  }
  for (auto [i, c] : llvm::enumerate(packColumnSums ? ArrayRef<ColumnSum>()
                                                    : ArrayRef(columnSums)))
    for (int64_t k = 0; k < chunks; ++k) {
      Value col = arith::MulIOp::create(
          kb, loc, arith::AddIOp::create(kb, loc, tid, cIdx(kb, k * t)),
          cIdx(kb, width));
      OpBuilder sb = kb;
      if (ragged) {
        Value ok = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                         col, cIdx(kb, numCols));
        sb = scf::IfOp::create(kb, loc, ok, /*withElse=*/false)
                 .getThenBodyBuilder();
      }
      SmallVector<Value> idx = partialAt(sb, c);
      llvm::append_range(idx, kfuse::delinearize(sb, loc, col, colShape));
      storeColumns(sb, loc, runLoop.getResult(i * chunks + k), c.partial,
                   identityOf(c), idx);
    }
}

RowKernel::LaunchShape RowKernel::chooseShape() {
  LaunchShape shape;
  int64_t numRows = 1, numCols = 1;
  for (int64_t d : rowShape)
    numRows *= d;
  for (int64_t d : colShape)
    numCols *= d;
  totalRows = numRows;
  totalCols = numCols;
  if (alongRows && !perThread)
    chooseRowTiles();
  // The passes a streaming kernel would make (and the online sums they pair,
  // which only streaming reads): also whether one pass serves the group.
  shape.passes = planPasses();
  if (!perThread)
    chooseThreads(shape.passes);
  // (chunks past the registers' in shared memory only where set above)
  if (regChunks == 0 || rowsPerBlock > 1 || perThread)
    regChunks = chunks;
  else if (regChunks < chunks)
    sharedLimit = sharedRowBytes / std::max<int64_t>(1, 1024 / threads);
  int64_t t = shape.threads = chooseBlockThreads();
  shape.run = chooseRun(t);
  choosePersist(t);
  shape.blocks = perThread ? (numRows + t - 1) / t
                 : rowsPerBlock > 1
                     ? (numRows + rowsPerBlock - 1) / rowsPerBlock
                 : packedRows > 1 ? (numRows + packedRows - 1) / packedRows
                 : persist.on     ? persistGrid() * cluster
                                  : numRows * cluster;
  accumulating = shape.run * (packColumnSums ? packedRows : 1) > 1;
  if (accumulating)
    shape.blocks = numRows / (shape.run * (packColumnSums ? packedRows : 1));
  rowsPerPartial = accumulating ? numRows / shape.blocks : 1;
  return shape;
}

void RowKernel::allocateColumnPartials(OpBuilder &b, Location loc) {
  for (ColumnSum &c : columnSums) {
    c.partial = c.independent ? Value() : c.terms;
    if (!accumulating)
      continue;
    // [kept..., blocks of a kept index, columns...]
    SmallVector<int64_t> shape(rowShape.begin(), rowShape.begin() + c.kept);
    shape.push_back(rowsPast(c.kept) / rowsPerPartial);
    llvm::append_range(shape, colShape);
    c.partial = memref::AllocOp::create(
        b, loc,
        MemRefType::get(shape,
                        cast<MemRefType>(c.terms.getType()).getElementType()));
  }
}

RowKernel::ThreadPlace RowKernel::placeThread(OpBuilder &kb, Location loc,
                                              gpu::LaunchOp launch, int64_t t) {
  auto cIdx = kfuse::indexConstants(loc);
  ThreadPlace at;
  Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  if (cluster > 1) {
    // Consecutive blocks form a cluster; the cluster is the row.
    rank = arith::RemUIOp::create(kb, loc, row, cIdx(kb, cluster));
    row = arith::DivUIOp::create(kb, loc, row, cIdx(kb, cluster));
    colBase = arith::MulIOp::create(kb, loc, rank, cIdx(kb, colsPerBlock));
    for (auto [i, buffer] : llvm::enumerate(launch.getWorkgroupAttributions()))
      (asyncExchange && i % 2 ? mbars : slots).push_back(buffer);
  }
  initMbarriers(kb, loc, tid, row, t);
  if (packedRows > 1) {
    // Packed rows: warp w of the block on row block * packedRows + w, its
    // lane the column thread (packed column sums: group w of `t` threads).
    Value warp = arith::DivUIOp::create(kb, loc, tid, cIdx(kb, t));
    tid = arith::RemUIOp::create(kb, loc, tid, cIdx(kb, t));
    if (packColumnSums)
      packWarp = warp; // (the row is the run's, below)
    else
      row = arith::AddIOp::create(
          kb, loc, arith::MulIOp::create(kb, loc, row, cIdx(kb, packedRows)),
          warp);
    if (!packColumnSums && totalRows % packedRows != 0) {
      rowInside = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, row,
                                        cIdx(kb, totalRows));
      row = arith::MinUIOp::create(kb, loc, row, cIdx(kb, totalRows - 1));
    }
  }
  at.colStart = arith::MulIOp::create(kb, loc, tid, cIdx(kb, width));
  at.colStep = cIdx(kb, t * width);
  at.colThread = tid;
  at.colThreads = t;
  if (perThread) {
    // Thread per row: a guarded row index, and every column to itself.
    row = arith::AddIOp::create(
        kb, loc, arith::MulIOp::create(kb, loc, row, cIdx(kb, t)), tid);
    Value inside = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                         row, cIdx(kb, totalRows));
    auto guard = scf::IfOp::create(kb, loc, inside, /*withElse=*/false);
    kb.setInsertionPoint(guard.thenBlock()->getTerminator());
    at.colStart = cIdx(kb, 0);
    at.colStep = cIdx(kb, 1);
    at.colThread = cIdx(kb, 0);
    at.colThreads = 1;
  }
  if (rowsPerBlock > 1) {
    // Row tiles: thread tid on row tid % L of the tile, column thread tid / L.
    Value tile = cIdx(kb, rowsPerBlock);
    at.colThread = arith::DivUIOp::create(kb, loc, tid, tile);
    at.colThreads = t / rowsPerBlock;
    row = arith::AddIOp::create(kb, loc,
                                arith::MulIOp::create(kb, loc, row, tile),
                                arith::RemUIOp::create(kb, loc, tid, tile));
    if (totalRows % rowsPerBlock != 0) {
      rowInside = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, row,
                                        cIdx(kb, totalRows));
      row = arith::MinUIOp::create(kb, loc, row, cIdx(kb, totalRows - 1));
    }
    at.colStart = at.colThread;
    at.colStep = cIdx(kb, at.colThreads);
  }
  at.row = row;
  at.tid = tid;
  return at;
}

scf::ForOp RowKernel::beginRun(OpBuilder &kb, Location loc, Value &row,
                               int64_t run) {
  auto cIdx = kfuse::indexConstants(loc);
  SmallVector<Value> inits;
  for (ColumnSum &c : columnSums) {
    Type accType = cast<MemRefType>(c.terms.getType()).getElementType();
    Value n =
        splat(kb, loc,
              arith::ConstantOp::create(kb, loc, neutral(kb, c.kind, accType)));
    inits.append(chunks, n);
  }
  auto runLoop = scf::ForOp::create(kb, loc, cIdx(kb, 0), cIdx(kb, run),
                                    cIdx(kb, 1), inits);
  kb.setInsertionPointToStart(runLoop.getBody());
  Value runBlock = row;
  row = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, runBlock, cIdx(kb, run)),
      runLoop.getInductionVar());
  if (packColumnSums)
    row = arith::AddIOp::create(
        kb, loc, arith::MulIOp::create(kb, loc, row, cIdx(kb, packedRows)),
        packWarp);
  columnPartials.assign(runLoop.getRegionIterArgs().begin(),
                        runLoop.getRegionIterArgs().end());
  return runLoop;
}

SmallVector<Value> RowKernel::beginRow(OpBuilder &kb, Location loc, Value row) {
  auto cIdx = kfuse::indexConstants(loc);
  SmallVector<Value> rowIdx = kfuse::delinearize(kb, loc, row, rowShape);
  if (prefetchRows > 0 && chunks > 0 && !perThread && rowsPerBlock == 1 &&
      packedRows == 1 && !accumulating && !shifted &&
      totalRows > prefetchRows && shareCols() * cluster == totalCols) {
    prefetch.row = row;
  }
  rowLoads.block = kb.getInsertionBlock();
  rowLoads.after = kb.getInsertionPoint() == rowLoads.block->begin()
                       ? nullptr
                       : &*std::prev(kb.getInsertionPoint());
  rowLoads.rowIdx = rowIdx;
  if (shifted) {
    // (the shift from each index's stride modulo the width: no product
    // of a row's full position)
    rowStart = cIdx(kb, 0);
    Value shift = cIdx(kb, layout.offset % width);
    for (auto [d, idx] : llvm::enumerate(rowIdx)) {
      if (rowShape[d] == 1)
        continue;
      rowStart = arith::AddIOp::create(
          kb, loc, rowStart,
          arith::MulIOp::create(kb, loc, idx, cIdx(kb, layout.strides[d])));
      if (layout.strides[d] % width != 0)
        shift = arith::AddIOp::create(
            kb, loc, shift,
            arith::MulIOp::create(kb, loc, idx,
                                  cIdx(kb, layout.strides[d] % width)));
    }
    rowShift = arith::RemUIOp::create(kb, loc, shift, cIdx(kb, width));
  }
  return rowIdx;
}

LogicalResult
RowKernel::emitRow(OpBuilder &kb, Location loc, gpu::LaunchOp launch,
                   const ThreadPlace &at, ArrayRef<Value> rowIdx,
                   ArrayRef<SmallVector<linalg::GenericOp>> passes) {
  SmallVector<std::pair<Value, Value>> rowOutputs; // buffer, value
  if (chunks > 0) {
    if (failed(emitRegisterPhases(
            kb, loc, at.tid, at.colThread, rowIdx, at.colThreads,
            cluster > 1 ? colsPerBlock : totalCols, rowOutputs)))
      return failure();
    if (sharedBytes > 0) {
      // (the rows' shared memory is the launch's dynamic shared memory)
      OpBuilder lb(launch);
      launch.getDynamicSharedMemorySizeMutable().assign(
          arith::ConstantIntOp::create(lb, loc, sharedBytes, 32));
    }
  } else {
    if (failed(emitStreamingReductions(kb, loc, at.tid, rowIdx, at.colStart,
                                       perThread ? 1 : at.colThreads * width,
                                       passes, rowOutputs)) ||
        failed(storeFullSpaceOutputs(kb, loc, rowIdx, at.colStart, at.colStep)))
      return failure();
  }
  storeRowOutputs(kb, loc, at.colThread, rowIdx, rowOutputs);
  return success();
}

void RowKernel::endLaunch(gpu::LaunchOp launch, Location loc) {
  Block &launchBody = launch.getBody().front();
  OpBuilder tb = OpBuilder::atBlockEnd(&launchBody);
  // (async exchange: every reduction of a cluster kernel exchanges, the first
  // one waiting on the start barrier; nothing is read remotely at the exit)
  assert((cluster == 1 || !asyncExchange || clusterReady) &&
         "a cluster kernel without an exchange");
  if (cluster > 1 && !asyncExchange) {
    // No block may exit while another still reads its slots. Each block
    // arrives once it has read the last of them (before its output stores,
    // which the arrive's release would otherwise wait for) and waits just
    // before it exits.
    Operation *read = lastCombined ? lastCombined.getDefiningOp() : nullptr;
    OpBuilder ab = tb;
    if (read && read->getBlock() == &launchBody)
      ab.setInsertionPointAfter(read);
    NVVM::ClusterArriveOp::create(ab, loc, ab.getUnitAttr());
    NVVM::ClusterWaitOp::create(tb, loc, tb.getUnitAttr());
  }
  gpu::TerminatorOp::create(tb, loc);
}

LogicalResult RowKernel::emit() {
  if (failed(analyze()))
    return failure();
  findLayout();
  Location loc = generics.front()->getLoc();
  LaunchShape shape = chooseShape();
  int64_t t = shape.threads;
  OpBuilder b(generics.back());
  b.setInsertionPointAfter(generics.back());
  allocateColumnPartials(b, loc);
  gpu::LaunchOp launch = createLaunch(b, loc, shape.blocks, t);
  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  ThreadPlace at = placeThread(kb, loc, launch, t);
  // (column sums: the block's run of rows, carrying the partials)
  Value row = at.row;
  scf::ForOp runLoop =
      accumulating ? beginRun(kb, loc, row, shape.run) : scf::ForOp();
  Operation *persistLoop =
      persist.on ? beginPersistLoop(kb, loc, at.tid, row) : nullptr;
  SmallVector<Value> rowIdx = beginRow(kb, loc, row);
  if (failed(emitRow(kb, loc, launch, at, rowIdx, shape.passes)))
    return failure();
  if (persistLoop)
    kb.setInsertionPointAfter(persistLoop);
  if (accumulating) {
    // (the next row's block combines reuse the workgroup buffers)
    if (t > 32)
      gpu::BarrierOp::create(kb, loc);
    scf::YieldOp::create(kb, loc, columnPartials);
    kb.setInsertionPointAfter(runLoop);
    storeColumnPartials(kb, loc, runLoop, at.row, at.tid, t);
  }
  endLaunch(launch, loc);
  for (linalg::GenericOp g : llvm::reverse(generics))
    g.erase();
  kfuse::reuseReadOnlyLoads(launch);
  kfuse::hoistReadOnlyLoads(launch);
  return success();
}

} // namespace

FailureOr<gpu::LaunchOp> kfuse::row::emitSplitKernel(
    ArrayRef<linalg::GenericOp> generics, StringRef name,
    const RowKernelOptions &options, bool threadPerRow, bool alongRows,
    bool rowsFill,
    std::optional<std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>> space) {
  RowKernel kernel(generics, name, options, threadPerRow, alongRows,
                   rowsFill);
  if (space)
    kernel.withSpace(space->first, space->second);
  if (failed(kernel.emit()))
    return failure();
  return kernel.launch();
}

static linalg::GenericOp firstReduction(ArrayRef<linalg::GenericOp> generics) {
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0)
      return g;
  return nullptr;
}

/// Which run of reduction loops mergeReductionLoops merges.
enum class LoopRun {
  Leading, // the longest run starting at the first reduction loop
  Whole,   // every reduction loop (they must trail)
  Trailing // the longest run ending at the last loop (reductions trail)
};

/// A group with some of its loops merged: copies of its generics over the
/// merged loops, inserted before the originals, reading collapsed views.
struct MergedLoops {
  ArrayRef<linalg::GenericOp> original;
  SmallVector<linalg::GenericOp> generics; // the group, copies in place
  SmallVector<Operation *> views;

  /// Kernels were emitted from the copies: the originals go, and the views
  /// no kernel reads.
  void replaceOriginal() {
    for (linalg::GenericOp g : llvm::reverse(original))
      if (!llvm::is_contained(generics, g))
        g.erase();
    for (Operation *view : llvm::reverse(views))
      if (view->use_empty())
        view->erase();
  }
  /// Not used: the copies and views go, the group stays as it was.
  void discard() {
    for (linalg::GenericOp g : llvm::reverse(generics))
      if (!llvm::is_contained(original, g))
        g.erase();
    for (Operation *view : llvm::reverse(views))
      view->erase();
  }
};

namespace {
/// mergeReductionLoops' steps: which run of loops merges (chooseRun), then
/// each generic over the reductions' loops copied over the merged loops
/// (copy: its operands through collapsed views or divided-back indices,
/// its linalg.index ops remapped).
class LoopMerge {
public:
  LoopMerge(ArrayRef<linalg::GenericOp> generics, LoopRun which,
            bool prefixInputs)
      : generics(generics), which(which), prefixInputs(prefixInputs) {}

  std::optional<MergedLoops> run();

private:
  /// Where an operand map reads the run [s, s + n): the result position of
  /// its first loop (-1: it does not read the run) and how many of the
  /// run's loops it reads from there on, in order (n; fewer where
  /// `prefixInputs` allows reading a leading part of the run).
  struct RunRead {
    int at;
    unsigned len;
  };

  /// Whether `g` runs over the reductions' loops (a reduction over them, or
  /// an elementwise op over the same extents).
  bool overLoops(linalg::GenericOp g) const {
    return g.getStaticLoopRanges() == ArrayRef<int64_t>(loops) &&
           (g.getNumReductionLoops() == 0 ||
            g.getIteratorTypesArray() == iters);
  }
  /// The first loop of a run of k loops.
  unsigned startOf(unsigned k) const {
    return which == LoopRun::Trailing ? unsigned(iters.size()) - k
                                      : firstReductionLoop;
  }
  std::optional<RunRead> runAt(AffineMap map, unsigned n) const;
  bool merges(unsigned n);
  bool chooseRun();
  AffineMap prefixMap(AffineMap map, RunRead read) const;
  linalg::GenericOp copy(linalg::GenericOp g);
  void remapIndices(linalg::GenericOp g) const;

  ArrayRef<linalg::GenericOp> generics;
  LoopRun which;
  bool prefixInputs;
  linalg::GenericOp first;
  /// The first reduction's loop extents and iterator types.
  SmallVector<int64_t> loops;
  SmallVector<utils::IteratorType> iters;
  unsigned firstReductionLoop = 0;
  /// The merged run [s, s + k).
  unsigned s = 0, k = 0;
  /// The loops' dimensions after the merge, and how many loops remain.
  SmallVector<AffineExpr> remap;
  unsigned numLoops = 0;
  /// One view per buffer and position: a full-space intermediate's writer
  /// and readers then name the same buffer.
  llvm::DenseMap<std::pair<Value, int>, Value> viewOf;
  SmallVector<Operation *> views;
};
} // namespace

/// How `map` reads the run of n loops from s; nothing when it reads the
/// run otherwise (not as consecutive dimensions in order).
std::optional<LoopMerge::RunRead> LoopMerge::runAt(AffineMap map,
                                                   unsigned n) const {
  int at = -1;
  unsigned len = 0;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (at >= 0 && int(i) < at + int(len))
      continue; // (checked with the run's first)
    bool inRun = false;
    for (unsigned d = s; d < s + n; ++d)
      inRun |= e.isFunctionOfDim(d);
    if (!inRun)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (at >= 0 || !dim || dim.getPosition() != s)
      return std::nullopt;
    len = 1;
    while (len < n && i + len < map.getNumResults() &&
           map.getResult(i + len) == getAffineDimExpr(s + len, e.getContext()))
      ++len;
    if (len < n && !prefixInputs)
      return std::nullopt;
    at = i;
  }
  return RunRead{at, len};
}

/// Whether the run of n loops from startOf(n) merges in every generic over
/// the loops.
bool LoopMerge::merges(unsigned n) {
  s = startOf(n);
  for (linalg::GenericOp g : generics) {
    if (!overLoops(g))
      continue;
    for (OpOperand &o : g->getOpOperands()) {
      std::optional<RunRead> read = runAt(g.getMatchingIndexingMap(&o), n);
      if (!read)
        return false;
      auto type = dyn_cast<MemRefType>(o.get().getType());
      if (read->at < 0)
        continue;
      if (read->len == n && (!type || !type.getLayout().isIdentity()))
        return false;
      // (a leading part of the run: read through the merged index
      // divided back, so only from a buffer no op of the group writes)
      if (read->len < n && (!type || g.isDpsInit(&o) ||
                            llvm::any_of(
                                generics,
                                [&](linalg::GenericOp w) {
                                  return llvm::is_contained(w.getDpsInits(),
                                                            o.get());
                                })))
        return false;
    }
  }
  return true;
}

/// Sets the run [s, s + k) to merge: the longest `which` allows, of two
/// loops or more. False where none merges.
bool LoopMerge::chooseRun() {
  first = firstReduction(generics);
  if (!first)
    return false;
  loops = first.getStaticLoopRanges();
  iters = first.getIteratorTypesArray();
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0 && !overLoops(g))
      return false;
  firstReductionLoop =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  unsigned run = 0;
  while (firstReductionLoop + run < iters.size() &&
         iters[firstReductionLoop + run] == utils::IteratorType::reduction)
    ++run;
  if (which != LoopRun::Leading && (firstReductionLoop + run != iters.size() ||
                                    !kfuse::reductionsTrail(first)))
    return false;
  s = firstReductionLoop;
  k = run;
  while (k >= 2 && !merges(k)) {
    if (which == LoopRun::Whole)
      return false;
    --k;
  }
  if (k < 2)
    return false;
  s = startOf(k);
  return true;
}

/// An operand map reading a leading part of the run: its loops' indices
/// recovered from the merged one, m floordiv (extent of the rest),
/// delinearized.
AffineMap LoopMerge::prefixMap(AffineMap map, RunRead read) const {
  MLIRContext *ctx = map.getContext();
  auto [at, len] = read;
  AffineExpr m = getAffineDimExpr(s, ctx);
  int64_t below = 1;
  for (unsigned d = s + len; d < s + k; ++d)
    below *= loops[d];
  SmallVector<AffineExpr> part(len);
  for (unsigned j = len; j-- > 0;) {
    AffineExpr e = m.floorDiv(below);
    part[j] = j == 0 ? e : e % loops[s + j];
    below *= loops[s + j];
  }
  SmallVector<AffineExpr> results;
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    results.push_back(int(i) >= at && int(i) < at + int(len)
                          ? part[i - at]
                          : e.replaceDims(remap));
  return AffineMap::get(numLoops, 0, results, ctx);
}

/// linalg.index of a merged loop becomes its part of the merged index;
/// those of later loops move down.
void LoopMerge::remapIndices(linalg::GenericOp g) const {
  SmallVector<linalg::IndexOp> indices;
  g.getBody()->walk([&](linalg::IndexOp i) { indices.push_back(i); });
  for (linalg::IndexOp i : indices) {
    unsigned d = i.getDim();
    OpBuilder ib(i);
    Value index;
    if (d >= s && d < s + k) {
      Value linear = linalg::IndexOp::create(ib, i.getLoc(), s);
      index = kfuse::delinearize(ib, i.getLoc(), linear,
                                 ArrayRef<int64_t>(loops).slice(s, k))[d - s];
    } else if (d >= s + k) {
      index = linalg::IndexOp::create(ib, i.getLoc(), d - k + 1);
    } else {
      continue;
    }
    i.replaceAllUsesWith(index);
    i.erase();
  }
}

/// `g` over the merged loops, inserted before it.
linalg::GenericOp LoopMerge::copy(linalg::GenericOp g) {
  MLIRContext *ctx = g.getContext();
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<Value> ins, outs;
  SmallVector<AffineMap> maps;
  for (OpOperand &o : g->getOpOperands()) {
    AffineMap map = g.getMatchingIndexingMap(&o);
    RunRead read = *runAt(map, k);
    auto [at, len] = read;
    if (at >= 0 && len < k) {
      (g.isDpsInit(&o) ? outs : ins).push_back(o.get());
      maps.push_back(prefixMap(map, read));
      continue;
    }
    SmallVector<AffineExpr> results;
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (at < 0 || int(i) <= at || int(i) >= at + int(k))
        results.push_back(e.replaceDims(remap));
    Value v = o.get();
    if (at >= 0) {
      Value &view = viewOf[{v, at}];
      if (!view) {
        auto type = cast<MemRefType>(v.getType());
        SmallVector<ReassociationIndices> assoc;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (d <= at || d >= at + int(k))
            assoc.push_back({d});
          else
            assoc.back().push_back(d);
        // (before the first generic that uses it: the buffer dominates it)
        view = memref::CollapseShapeOp::create(b, loc, v, assoc);
        views.push_back(view.getDefiningOp());
      }
      v = view;
    }
    (g.isDpsInit(&o) ? outs : ins).push_back(v);
    maps.push_back(AffineMap::get(numLoops, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> newIters(iters.begin(),
                                            iters.begin() + s + 1);
  newIters.append(iters.begin() + s + k, iters.end());
  if (g.getNumReductionLoops() == 0)
    newIters.assign(numLoops, utils::IteratorType::parallel);
  auto ng =
      linalg::GenericOp::create(b, loc, TypeRange{}, ins, outs, maps, newIters);
  IRMapping m;
  g.getRegion().cloneInto(&ng.getRegion(), m);
  for (NamedAttribute a : g->getDiscardableAttrs())
    ng->setAttr(a.getName(), a.getValue());
  remapIndices(ng);
  return ng;
}

std::optional<MergedLoops> LoopMerge::run() {
  if (!chooseRun())
    return std::nullopt;
  MLIRContext *ctx = first.getContext();
  for (unsigned d = 0; d < loops.size(); ++d)
    remap.push_back(getAffineDimExpr(d < s       ? d
                                     : d < s + k ? s
                                                 : d - k + 1,
                                     ctx));
  numLoops = loops.size() - k + 1;
  SmallVector<linalg::GenericOp> result;
  for (linalg::GenericOp g : generics)
    result.push_back(overLoops(g) ? copy(g) : g);
  return MergedLoops{generics, std::move(result), std::move(views)};
}

/// A reduction over several adjacent loops (x.sum() of a matrix, a mean over
/// (n, h, w) of an NHWC tensor) split into slices: the first of those loops
/// alone may be too short for enough slices (64 images) or, split along the
/// columns, the split wants one reduction loop. When every operand reads the
/// run of reduction loops [first, first + k) as consecutive dimensions of an
/// identity-layout buffer, in order, those loops are one loop over a
/// collapsed view (memref.collapse_shape, no copy). Returns the group with
/// each generic over the reductions' loops replaced by such a copy, inserted
/// before it, over the longest such run `which` allows, and the views it
/// creates; nothing when no run of two or more loops merges. linalg.index of
/// a merged loop becomes its part of the merged index.
static std::optional<MergedLoops>
mergeReductionLoops(ArrayRef<linalg::GenericOp> generics, LoopRun which,
                    bool prefixInputs = false) {
  return LoopMerge(generics, which, prefixInputs).run();
}

/// splitLongRows on the group with its adjacent reduction loops merged
/// (mergeReductionLoops) where they merge and the split then applies; else
/// on the group as it is.
static std::optional<LogicalResult>
splitMergedRows(ArrayRef<linalg::GenericOp> generics, StringRef name,
                const RowKernelOptions &options, bool alongRows) {
  if (std::optional<MergedLoops> merged = mergeReductionLoops(
          generics, alongRows ? LoopRun::Leading : LoopRun::Whole)) {
    std::optional<LogicalResult> split =
        splitLongRows(merged->generics, name, options, alongRows);
    if (split) {
      // (the split kernels replaced the copies)
      merged->replaceOriginal();
      return split;
    }
    merged->discard();
  }
  return splitLongRows(generics, name, options, alongRows);
}

/// Register and streaming modes load and store chunks of consecutive
/// columns within the innermost column loop, so its extent bounds the
/// vector width: group norm over 14 x 14 images reads (k, h, w) rows 2
/// floats at a time. Where the trailing column loops merge into one
/// (mergeReductionLoops: every operand reads them as consecutive dimensions
/// of an identity-layout buffer, in order, or, for inputs no op of the
/// group writes, a leading part of them: group norm's per-channel weights
/// read k but not h and w) and the merged loop takes wider chunks (14 x 14:
/// 196, 4 floats; 7 x 7 with 4 channels a group: 196; with `shiftChunks`,
/// any width once every column loop is merged into one: 7 x 7 with 3
/// channels a group, 147, takes shifted chunks of 4), the group with those
/// loops merged; otherwise nothing. Row tiles (inputs contiguous along the
/// rows) load scalars, and contractions have their own kernels: neither
/// merges.
static std::optional<MergedLoops>
mergeColumnsForVectors(ArrayRef<linalg::GenericOp> generics, bool alongRows,
                       bool shiftChunks) {
  if (alongRows || llvm::any_of(generics, [&](linalg::GenericOp g) {
        return contractionIn(g, generics);
      }))
    return std::nullopt;
  linalg::GenericOp first = firstReduction(generics);
  if (!first || !kfuse::reductionsTrail(first))
    return std::nullopt;
  int64_t inner = first.getStaticLoopRanges().back();
  if (chunkWidthIn(inner) >= 4)
    return std::nullopt;
  // (the width chunks of the merged loop take, the widest where one column
  // loop is left for shifted chunks to take; none: not merged)
  auto widthOf = [&](const std::optional<MergedLoops> &m) -> int64_t {
    if (!m)
      return 0;
    linalg::GenericOp red = firstReduction(m->generics);
    int64_t natural = chunkWidthIn(red.getStaticLoopRanges().back());
    return shiftChunks && natural < 4 && red.getNumReductionLoops() == 1
               ? 8
               : natural;
  };
  // Loops every operand reads whole first (inputs read per chunk); else
  // longer runs that inputs read a leading part of (per-channel weights of
  // a group norm over 7 x 7 images: read lane by lane at (k*49 + hw) / 49).
  std::optional<MergedLoops> merged =
      mergeReductionLoops(generics, LoopRun::Trailing);
  if (widthOf(merged) < 4) {
    std::optional<MergedLoops> longer = mergeReductionLoops(
        generics, LoopRun::Trailing, /*prefixInputs=*/true);
    if (widthOf(longer) > widthOf(merged))
      std::swap(merged, longer);
    if (longer)
      longer->discard();
  }
  if (widthOf(merged) > chunkWidthIn(inner))
    return merged;
  if (merged)
    merged->discard();
  return std::nullopt;
}

/// A reduction over trailing loops that reduces leading axes of what it
/// reads (a sum over the rows of a matrix: what the planner places on a row
/// kernel's columns, see kfuse::isColumnReduction, here on buffers).
static bool sumsColumns(linalg::GenericOp g) {
  return kfuse::reductionsTrail(g) && kfuse::reducesLeadingAxes(g);
}

/// The column loops of a kernel with column sums `sums`: the reduced loops
/// of its row reductions (the generics' first reduction that is not a
/// column sum).
static unsigned kernelColumns(ArrayRef<linalg::GenericOp> generics,
                              ArrayRef<linalg::GenericOp> sums) {
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() > 0 && !llvm::is_contained(sums, g))
      return g.getNumReductionLoops();
  return linalg::GenericOp(sums.front()).getNumParallelLoops();
}

namespace {
/// A kernel whose row reductions come with column sums (a layer norm's
/// backward pass: dx needs each row's statistics, dw and db sum over the
/// rows). Each column sum C over (columns | rows) becomes a full-space op
/// computing its terms in the row kernel (termsOf), and a kernel after it
/// that sums the terms (in register mode: the blocks' partial sums) into
/// C's output (finishSum); the ops that initialize C's output move with
/// it, and the column epilogues run after it.
class ColumnSumKernels {
public:
  ColumnSumKernels(ArrayRef<linalg::GenericOp> generics, StringRef kernelName,
                   const RowKernelOptions &options)
      : generics(generics), kernelName(kernelName), options(options),
        ctx(generics.front()->getContext()) {}

  LogicalResult emit();

private:
  /// The ops writing a column sum's output before it: its initial value.
  bool initializes(linalg::GenericOp g) const {
    return g.getNumReductionLoops() == 0 &&
           llvm::all_of(g.getDpsInits(), [&](Value v) {
             return llvm::any_of(sums, [&](linalg::GenericOp c) {
               return c.getDpsInits()[0] == v;
             });
           });
  }
  void findEpilogues();
  LogicalResult termsOf(linalg::GenericOp g);
  linalg::GenericOp finishSum(OpBuilder &b, linalg::GenericOp c, Value partial,
                              unsigned kept) const;

  ArrayRef<linalg::GenericOp> generics;
  StringRef kernelName;
  const RowKernelOptions &options;
  MLIRContext *ctx;
  /// The column sums, and the ops over the columns after them.
  SmallVector<linalg::GenericOp> sums, epilogues;
  /// The row kernel's generics, and those of the kernel after it.
  SmallVector<linalg::GenericOp> rowKernel, later;
  /// Each column sum's terms in the row kernel, in the order of `sums`
  /// (emit() builds them in the generics' order, as `sums` is).
  SmallVector<RowKernel::ColumnSum> columnSums;
};
} // namespace

/// Column epilogues: ops over the columns reading what the column sums (or
/// earlier epilogues) write, such as a mean's division or an f16 sum's
/// rounding; they run after the sums, in the kernel adding up the terms.
void ColumnSumKernels::findEpilogues() {
  llvm::DenseSet<Value> columnValues;
  for (linalg::GenericOp g : sums)
    columnValues.insert(g.getDpsInits()[0]);
  for (linalg::GenericOp g : generics)
    if (g.getNumReductionLoops() == 0 && !initializes(g) &&
        llvm::any_of(g.getDpsInputs(),
                     [&](Value v) { return columnValues.contains(v); })) {
      epilogues.push_back(g);
      columnValues.insert(g.getDpsInits().begin(), g.getDpsInits().end());
    }
}

/// Column sum `g`'s terms: a full-space op E in the row kernel writing each
/// term `g` would add to a new buffer over (rows..., columns...).
LogicalResult ColumnSumKernels::termsOf(linalg::GenericOp g) {
  std::optional<Combiner> comb = findCombiner(g);
  if (!comb)
    return g.emitError()
           << "kfuse cannot generate code for 'linalg.generic' yet: the "
              "column sum of kernel '"
           << kernelName
           << "' is not `acc = acc op f(inputs)` with an associative op";
  // Its loops are (kept..., columns... | summed rows...): the kernel's
  // rows are (kept..., summed...), so the kept loops are the parallel
  // ones beyond the kernel's columns (none: a sum over every row).
  unsigned kernelCols = kernelColumns(generics, sums);
  if (g.getNumParallelLoops() < kernelCols)
    return g.emitError() << "kfuse cannot generate code for 'linalg.generic' "
                            "yet: a column sum of kernel '"
                         << kernelName << "' runs over fewer loops than its "
                         << "columns";
  unsigned kept = g.getNumParallelLoops() - kernelCols;
  unsigned numCols = kernelCols;
  unsigned numRows = g.getNumLoops() - numCols; // (kept and summed)
  SmallVector<int64_t> loops = g.getStaticLoopRanges();
  // The terms over (rows..., columns...): (kept, summed, columns).
  SmallVector<int64_t> shape(loops.begin(), loops.begin() + kept);
  shape.append(loops.begin() + kept + numCols, loops.end());
  shape.append(loops.begin() + kept, loops.begin() + kept + numCols);
  auto kernelLoop = [&](unsigned d) {
    return d < kept             ? d
           : d < kept + numCols ? numRows + (d - kept)
                                : d - numCols;
  };
  SmallVector<AffineExpr> toKernel;
  for (unsigned d = 0; d < numCols + numRows; ++d)
    toKernel.push_back(getAffineDimExpr(kernelLoop(d), ctx));
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(g.getMatchingIndexingMap(in).replaceDimsAndSymbols(
        toKernel, {}, numCols + numRows, 0));
  maps.push_back(AffineMap::getMultiDimIdentityMap(numCols + numRows, ctx));
  Type accType =
      cast<MemRefType>(g.getDpsInits()[0].getType()).getElementType();
  OpBuilder b(generics.front());
  auto alloc =
      memref::AllocOp::create(b, g.getLoc(), MemRefType::get(shape, accType));
  b.setInsertionPoint(g);
  Value term = comb->termOf(g);
  auto e = linalg::GenericOp::create(
      b, g.getLoc(), TypeRange{}, g.getDpsInputs(), ValueRange{alloc}, maps,
      SmallVector<utils::IteratorType>(numCols + numRows,
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping m;
        for (auto [arg, v] : llvm::zip(g.getBody()->getArguments().drop_back(),
                                       args.drop_back()))
          m.map(arg, v);
        for (Operation &op : g.getBody()->without_terminator()) {
          if (&op == comb->op)
            continue;
          if (auto index = dyn_cast<linalg::IndexOp>(op)) {
            unsigned d = index.getDim();
            m.map(index.getResult(),
                  linalg::IndexOp::create(nb, nl, kernelLoop(d)));
            continue;
          }
          nb.clone(op, m);
        }
        linalg::YieldOp::create(nb, nl, m.lookupOrDefault(term));
      });
  for (NamedAttribute a : g->getDiscardableAttrs())
    e->setAttr(a.getName(), a.getValue());
  rowKernel.push_back(e);
  bool independent = llvm::none_of(g.getDpsInputs(), [&](Value v) {
    return llvm::any_of(rowKernel, [&](linalg::GenericOp w) {
      return llvm::is_contained(w.getDpsInits(), v);
    });
  });
  columnSums.push_back({alloc, comb->kind, independent, alloc, kept});
  return success();
}

/// The sum of column sum `c`'s partials (or terms) into its output, at
/// `b`. The partials are [kept..., lead..., columns...], lead the blocks of
/// a kept index or the summed rows of stored terms; the sum's parallel
/// loops are (kept..., columns...).
linalg::GenericOp ColumnSumKernels::finishSum(OpBuilder &b, linalg::GenericOp c,
                                              Value partial,
                                              unsigned kept) const {
  unsigned numCols = c.getNumParallelLoops();
  auto type = cast<MemRefType>(partial.getType());
  unsigned lead = type.getRank() - numCols;
  unsigned n = numCols + lead;
  SmallVector<AffineExpr> read, out;
  for (unsigned d = 0; d < kept; ++d)
    read.push_back(getAffineDimExpr(d, ctx));
  for (unsigned d = 0; d < lead; ++d)
    read.push_back(getAffineDimExpr(numCols + d, ctx));
  for (unsigned d = 0; d < numCols; ++d) {
    if (d >= kept)
      read.push_back(getAffineDimExpr(d, ctx));
    out.push_back(getAffineDimExpr(d, ctx));
  }
  SmallVector<utils::IteratorType> iters(numCols,
                                         utils::IteratorType::parallel);
  iters.append(lead, utils::IteratorType::reduction);
  Combiner comb = *findCombiner(c);
  auto finish = linalg::GenericOp::create(
      b, c.getLoc(), TypeRange{}, ValueRange{partial},
      ValueRange{c.getDpsInits()[0]},
      ArrayRef<AffineMap>{AffineMap::get(n, 0, read, ctx),
                          AffineMap::get(n, 0, out, ctx)},
      iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, comb.combine(nb, c, args[1], args[0]));
      });
  for (NamedAttribute a : c->getDiscardableAttrs())
    finish->setAttr(a.getName(), a.getValue());
  return finish;
}

LogicalResult ColumnSumKernels::emit() {
  for (linalg::GenericOp g : generics)
    if (sumsColumns(g))
      sums.push_back(g);
  findEpilogues();
  for (linalg::GenericOp g : generics) {
    if (initializes(g))
      later.push_back(g);
    else if (llvm::is_contained(epilogues, g))
      continue;
    else if (!llvm::is_contained(sums, g))
      rowKernel.push_back(g);
    else if (failed(termsOf(g)))
      return failure();
  }
  bool alongRows = contiguousAlongRows(rowKernel);
  RowKernel emitter(rowKernel, kernelName, options, /*threadPerRow=*/false,
                    alongRows, rowsFillThreads(rowKernel, options.smCount));
  emitter.columnSums = columnSums;
  if (failed(emitter.emit()))
    return failure();
  // The sums of the partials (or terms), after the row kernel.
  OpBuilder b(ctx);
  b.setInsertionPointAfter(emitter.launch());
  for (linalg::GenericOp g : later)
    g->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  for (auto [k, c] : llvm::enumerate(sums)) {
    Value partial = emitter.columnSums[k].partial;
    if (!partial) {
      // (left to the later kernel as it is)
      c->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      later.push_back(c);
      columnSums[k].terms.getDefiningOp()->erase();
      continue;
    }
    later.push_back(finishSum(b, c, partial, columnSums[k].kept));
    c.erase();
    if (partial != columnSums[k].terms)
      columnSums[k].terms.getDefiningOp()->erase();
  }
  // (after the last of them; the insertion point may be an epilogue itself)
  Operation *last = later.empty() ? emitter.launch().getOperation()
                                  : later.back().getOperation();
  for (linalg::GenericOp g : epilogues) {
    if (g != last)
      g->moveAfter(last);
    last = g;
    later.push_back(g);
  }
  std::string name = (kernelName + "_columns").str();
  for (linalg::GenericOp g : later)
    g->setAttr(kfuse::kKernelAttr, StringAttr::get(ctx, name));
  return kfuse::emitRowKernel(later, name, options);
}

/// A kernel whose row reductions come with column sums (see
/// ColumnSumKernels).
static LogicalResult emitWithColumnSums(ArrayRef<linalg::GenericOp> generics,
                                        StringRef kernelName,
                                        const RowKernelOptions &options) {
  return ColumnSumKernels(generics, kernelName, options).emit();
}

bool kfuse::reducesInParallel(linalg::GenericOp g) {
  return g.getNumReductionLoops() == 0 || findCombiner(g).has_value();
}

/// A copy of float sum `g` whose body computes, in place of its input
/// #`arg`, what `w` yields as its result #`result` (w: an elementwise
/// generic over g's loops that wrote that input at the point g reads it,
/// its inputs unchanged since): g's other inputs, then w's, read through
/// w's maps (w's loops are g's). Inserted before g, which is erased. (The
/// input replaced stays, unread, where no other operand gives a loop its
/// extent: a padded row computed by gathers, over rows and columns, whose
/// other inputs run over the rows alone.)
static linalg::GenericOp inlineWriter(linalg::GenericOp g, unsigned arg,
                                      linalg::GenericOp w, unsigned result) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  inputsBut(g, arg, inputs, maps);
  for (OpOperand *in : w.getDpsInputOperands()) {
    inputs.push_back(in->get());
    maps.push_back(w.getMatchingIndexingMap(in));
  }
  llvm::SmallBitVector bounded(g.getNumLoops());
  for (auto [v, map] : llvm::zip(inputs, maps))
    if (isa<ShapedType>(v.getType()))
      for (AffineExpr e : map.getResults())
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          bounded.set(dim.getPosition());
  for (OpOperand &init : g.getDpsInitsMutable())
    for (AffineExpr e : g.getMatchingIndexingMap(&init).getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        bounded.set(dim.getPosition());
  bool keep = !bounded.all();
  if (keep) {
    inputs.push_back(g.getDpsInputOperand(arg)->get());
    maps.push_back(g.getMatchingIndexingMap(g.getDpsInputOperand(arg)));
  }
  unsigned own = g.getNumDpsInputs() - 1;
  for (OpOperand &init : g.getDpsInitsMutable())
    maps.push_back(g.getMatchingIndexingMap(&init));
  OpBuilder b(g);
  auto fused = linalg::GenericOp::create(
      b, g.getLoc(), TypeRange(), inputs, g.getDpsInits(), maps,
      g.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location, ValueRange args) {
        IRMapping m;
        Block *wb = w.getBody(), *gb = g.getBody();
        for (unsigned i = 0; i < w.getNumDpsInputs(); ++i)
          m.map(wb->getArgument(i), args[own + i]);
        for (Operation &op : wb->without_terminator())
          nb.clone(op, m);
        Value computed =
            m.lookupOrDefault(wb->getTerminator()->getOperand(result));
        unsigned next = 0;
        for (unsigned i = 0; i < g.getNumDpsInputs(); ++i)
          m.map(gb->getArgument(i), i == arg ? computed : args[next++]);
        for (unsigned i = 0; i < g.getNumDpsInits(); ++i)
          m.map(gb->getArgument(g.getNumDpsInputs() + i),
                args[inputs.size() + i]);
        for (Operation &op : *gb)
          nb.clone(op, m);
      });
  fused->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  g.erase();
  return fused;
}

/// The row emitters find a centred sum of squares (sum((e - q)^2), q a
/// row value) and an online sum of exponentials (sum(exp(e - m)), m a row
/// max) in the sum's own body: there they fold the sum in the same pass
/// as the value it is centred on. Where the difference (or its
/// exponential) is another generic's result that the sum reads where it
/// was written, as fusion-fuse-group-bodies leaves a long value that
/// several row-space ops share, the sum gets a copy of that body in place
/// of the read. (The writer stays for its other readers.)
static SmallVector<linalg::GenericOp>
inlineCenteredWriters(ArrayRef<linalg::GenericOp> generics) {
  SmallVector<linalg::GenericOp> result(generics);
  for (unsigned pos = 0; pos < result.size(); ++pos)
    for (unsigned level = 0; level < 4; ++level) {
      linalg::GenericOp g = result[pos];
      Value term = g.getNumReductionLoops() ? sumTerm(g) : Value();
      if (!term || !term.hasOneUse())
        break;
      Value d = squaredValue(term);
      Value read = d ? d : term;
      if (auto exp = read.getDefiningOp<math::ExpOp>())
        read = exp.getOperand();
      auto a = dyn_cast<BlockArgument>(read);
      if (!a || a.getOwner() != g.getBody() ||
          a.getArgNumber() >= g.getNumDpsInputs())
        break;
      OpOperand *in = g.getDpsInputOperand(a.getArgNumber());
      auto w = lastWriterBefore(result, in->get(), pos);
      if (!w || !isa<MemRefType>(in->get().getType()))
        break;
      auto [writer, k] = *w;
      AffineMap map = g.getMatchingIndexingMap(in);
      Value yielded = writer.getBody()->getTerminator()->getOperand(k);
      if (auto exp = yielded.getDefiningOp<math::ExpOp>();
          exp && !d && read == term)
        yielded = exp.getOperand();
      unsigned at = llvm::find(result, writer) - result.begin();
      // (the writer's inputs unchanged between it and g, its output not
      // read as an accumulator)
      bool unchanged = llvm::all_of(writer.getDpsInputs(), [&](Value v) {
        auto before = lastWriterBefore(result, v, at);
        auto now = lastWriterBefore(result, v, pos);
        return (!before && !now) ||
               (before && now && before->first == now->first);
      });
      if (!yielded.getDefiningOp<arith::SubFOp>() ||
          writer.getNumReductionLoops() > 0 || !map.isPermutation() ||
          writer.getMatchingIndexingMap(writer.getDpsInitOperand(k)) != map ||
          writer.getStaticLoopRanges() != g.getStaticLoopRanges() ||
          !llvm::all_of(writer.getRegionOutputArgs(),
                        [](BlockArgument o) { return o.use_empty(); }) ||
          !unchanged ||
          llvm::any_of(writer.getBody()->without_terminator(),
                       [](Operation &op) { return op.getNumRegions() > 0; }))
        break;
      result[pos] = inlineWriter(g, a.getArgNumber(), writer, k);
    }
  return result;
}

LogicalResult kfuse::emitRowKernel(ArrayRef<linalg::GenericOp> generics,
                                   StringRef kernelName,
                                   const RowKernelOptions &options) {
  SmallVector<linalg::GenericOp> own = inlineCenteredWriters(generics);
  generics = own;
  // (a reduction that streams no input, a count recomputed for every row
  // beside a column sum, reads along whichever loops its siblings do)
  if (llvm::any_of(generics, sumsColumns) &&
      llvm::any_of(generics, [&](linalg::GenericOp g) {
        return g.getNumReductionLoops() > 0 && kfuse::reductionsTrail(g) &&
               !sumsColumns(g) && streamsAnInput(g) &&
               !contractionIn(g, generics);
      }))
    return emitWithColumnSums(generics, kernelName, options);
  bool alongRows = contiguousAlongRows(generics);
  if (auto split =
          splitMergedRows(generics, kernelName, options, alongRows))
    return *split;
  if (std::optional<MergedLoops> merged =
          mergeColumnsForVectors(generics, alongRows, options.shiftChunks)) {
    if (failed(RowKernel(merged->generics, kernelName, options,
                         /*threadPerRow=*/false, alongRows,
                         rowsFillThreads(merged->generics, options.smCount))
                   .emit()))
      return failure();
    merged->replaceOriginal();
    return success();
  }
  return RowKernel(generics, kernelName, options, /*threadPerRow=*/false,
                   alongRows, rowsFillThreads(generics, options.smCount))
      .emit();
}
