//===- RowKernelEmitter.h - one GPU kernel for a reduction group -*- C++
//-*-===//

#ifndef KFUSE_TRANSFORMS_ROWKERNELEMITTER_H
#define KFUSE_TRANSFORMS_ROWKERNELEMITTER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kfuse {

/// How a reduction group's kernels are shaped (fusion-generic-to-gpu's row
/// options and the target).
struct RowKernelOptions {
  /// Threads per block of thread-per-row kernels (block-per-row kernels
  /// size their blocks from the row width).
  int64_t threads = 256;
  /// Vector chunks of its row each thread keeps in registers; 0 streams
  /// every row instead.
  int64_t chunksPerThread = 4;
  /// Column sums beside row reductions (register mode): each block folds a
  /// run of consecutive rows, the largest divisor of the rows up to this
  /// (0: runs that leave about 512 threads per SM; 1: every term stored).
  int64_t foldRows = 0;
  /// > 1: rows too long for one block's registers spread over a
  /// thread-block cluster of up to that many blocks (sm_90 and later).
  int64_t maxCluster = 0;
  /// Blocks of a block-per-row kernel an SM holds at once by registers (1,
  /// 2 or 4): blocks of at most 1024 / occupancy threads, each thread
  /// keeping what its share of the registers holds; a cluster's blocks have
  /// 1024 / occupancy threads (512 at most where clusters may exceed 8
  /// blocks), and keep 8 vectors a thread in registers at most. Not
  /// kernels that also sum columns (their partials take registers). Kernels
  /// ask ptxas for it (nvvm.minctasm, set by fusion-cluster-dims: from the
  /// cluster's block size, or the host function's kfuse.min_blocks_per_sm).
  int64_t occupancy = 1;
  /// > 0: a row kernel that holds its rows on chip (register mode, a block
  /// or a cluster per row) asks the L2 for the same share of the row this
  /// many rows on (cp.async.bulk.prefetch, sm_90 and later) once its own
  /// share is in registers, so that the memory keeps reading while the
  /// block combines and stores: the block that takes that row later finds
  /// it in L2. About the rows a GPU runs at once, or twice that.
  int64_t prefetchRows = 0;
  /// > 0: a row over a cluster whose blocks hold their shares in registers
  /// (st.async exchanges), or in one block's registers, runs as a
  /// persistent kernel of at most this many clusters (blocks, where the
  /// launch has no clusters), each taking rows cid, cid + n, ... (n: the
  /// grid's clusters):
  /// each block's share of its next row is copied into shared memory
  /// (cp.async.bulk, completing an mbarrier) while it combines and stores
  /// the current one. The launch is marked `kfuse.persistent` with this
  /// bound, and the runtime launches as many of its clusters as the device
  /// holds at once (an H100 holds 15 of 8 blocks of 1024 threads), if
  /// fewer. -1: at most a cluster a row (the device's count, whatever it
  /// is, where the runtime can ask it).
  int64_t persistClusters = 0;
  /// A streaming pass may fold `m = max(e)` and `sum(exp(e - m))` together
  /// (fast numerics).
  bool online = false;
  /// The blocks of a cluster send their totals to each other with st.async,
  /// completing an mbarrier in the receiving block, instead of publishing
  /// them with a cluster barrier.
  bool asyncExchange = false;
  /// Cluster mode: reductions that do not read each other's results cross
  /// the cluster in one exchange, and (with `online`) so do a max m =
  /// max(e) and a later sum of exp(e - r(m)) (each block's sum against the
  /// block's own max, rescaled to the row's max as the blocks' sums are
  /// combined), and a sum and a later sum of squares around its mean (each
  /// block's around its own mean, combined with Chan et al.'s formula);
  /// false: an exchange per reduction.
  bool jointExchange = true;
  /// Rows whose width is no multiple of the widest vector (softmax over
  /// 50257 logits) move whole aligned vectors anyway, chunks following
  /// memory rather than the row (masked lanes at the row's ends); false:
  /// narrower vectors, down to single elements.
  bool shiftChunks = true;
  /// With shiftChunks, rows of 4-byte or wider elements of a group that
  /// streams by choice (one pass serves it, or chunksPerThread is 0) shift
  /// too; false: only rows held in registers, and streamed rows of
  /// narrower elements. (Cross-entropy over 50257 logits, streamed: 103 us
  /// shifted, 87 us in single floats on an H200, bench/RESULTS.md.)
  bool shiftStreams = false;
  /// Register mode: bytes of dynamic shared memory a block may keep its
  /// share of a row's inputs in, beyond what its registers hold (0: rows
  /// in registers only). A row too long for one block's registers then
  /// takes one block (or fewer blocks of a cluster) with the chunks past
  /// the registers' in shared memory, each thread storing and reloading
  /// its own.
  int64_t sharedRowBytes = 0;
  /// Each wave of a row split into slices along its columns is finished by
  /// the last block of its partials kernel to store its slice's partial
  /// (an atomic count a row), not by a kernel of its own; rows split into
  /// slices of rows likewise by the last block of each tile of rows, where
  /// the finish runs a thread per row.
  bool lastBlockFinish = true;
  /// A long row that no good number of slices divides (a prime length) is
  /// split into equal slices of a multiple of 8 columns and a tail of the
  /// rest, reduced by one more block (along rows: slices of equal rows and
  /// a shorter tail); false: slices that divide the row only.
  bool splitTail = true;
  /// A split along rows (statistics over the leading axes, NHWC batch
  /// normalization) stores its full-space results in a kernel over
  /// (positions, rows): a position's rows are its columns, read and stored
  /// as vectors (consecutive in memory), and each row value is read at
  /// its column; a split along a row's columns (x / ||x||) stores them
  /// over pieces of the slices, blocks of 256 threads x 2 vectors. False:
  /// over the slices, as the reductions are folded (along rows a thread per
  /// slice and row, a scalar a thread per position).
  bool transposeStore = true;
  /// > 0: the block size of block-per-row and thread-per-row kernels,
  /// instead of the one chosen from the row width or the rows (a split
  /// row's finish, run by the partials kernel's last block with all its
  /// threads).
  int64_t exactThreads = 0;
  /// The SMs the launch shapes aim to fill (splits of long rows, thread per
  /// row or block per row, block sizes, loads in flight).
  int64_t smCount = 132;
  /// Rows a warp covers (block per row, 32 threads a row) share a block, a
  /// warp each, up to this many (0: up to 4 where the blocks still number
  /// twice the SMs, up to 8 beside column sums, for rows of up to 8
  /// vectors a lane; 1: a block per row). Fewer, larger blocks: a block per
  /// row of 256 floats gives a grid of one warp blocks, which an SM holds
  /// at most 32 of (half its threads), and the GPU's block launches bound
  /// the kernel.
  int64_t packRows = 0;
  /// Row tiles (rows contiguous in memory, a reduction over a strided axis:
  /// a softmax over the channels of NCHW): the rows a block's tile holds, a
  /// power of two up to 32 (0: a 32-byte sector of each column, 8 rows of
  /// f32; 32 rows of f32 read whole 128-byte lines).
  int64_t tileRows = 0;
  /// Streaming mode, a block per row: chunks each thread loads per trip of
  /// the column loop (0: 4, or the whole share up to 8).
  int64_t tripChunks = 0;
  /// Streaming mode over rows its trips do not divide (a block per row, or
  /// a thread per row): the trips whose entries all lie in the row run
  /// untested, the last one tested (false: every trip tests its entries
  /// against the row's end).
  bool peelTrips = true;
};

/// Lowers the bufferized generics of one reduction group (all tagged with
/// the same `fusion.kernel`, in program order) to one gpu.launch, or to a
/// few when long rows are split; see RowKernelEmitter.cpp. Emits an error
/// and fails on groups it cannot map.
mlir::LogicalResult
emitRowKernel(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
              llvm::StringRef kernelName, const RowKernelOptions &options);

/// True when `g` reduces nothing, or reduces with a combiner the row
/// kernels can split across threads (`acc = acc op f(inputs)`, `op`
/// associative: add, mul, max, min, and, or, xor). Other reductions
/// (`acc = x - acc`, a Horner step) run in order: fusion-generic-to-gpu's
/// ordered kernels.
bool reducesInParallel(mlir::linalg::GenericOp g);

/// Runs the single-block kernel `fin` (one block, of part's threads; a full
/// reduction of what part's blocks store, such as the mean of a row
/// kernel's losses) in the last of part's blocks to finish, counted on an
/// atomic counter (see finishInLastBlock in RowKernelEmitter.cpp): one
/// launch instead of two. `fin` follows `part` in the same block with only
/// effect-free ops and allocations between. Returns false, changing
/// nothing, where the two launches do not have those shapes.
bool finishInLastBlockOf(mlir::gpu::LaunchOp part, mlir::gpu::LaunchOp fin);

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_ROWKERNELEMITTER_H
