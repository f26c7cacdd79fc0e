//===- RowKernelUtils.h - what the row kernel emitters share ---*- C++ -*-===//
//
// Helpers of the row kernel emitter (RowKernelEmitter.cpp) that the split of
// long rows into partials and finishing kernels (SplitLongRows.cpp) uses too:
// reduction combiners, the centred and online sums' parts, comparisons of
// terms, and builders of constants and PTX statements.
//
//===----------------------------------------------------------------------===//

#ifndef KFUSE_TRANSFORMS_ROWKERNELUTILS_H
#define KFUSE_TRANSFORMS_ROWKERNELUTILS_H

#include "transforms/RowKernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <tuple>
#include <utility>

namespace kfuse::row {

/// Whether `g` reads an input through every loop (each element once).
bool streamsAnInput(mlir::linalg::GenericOp g);

/// Whether reduction `g` of a group needs the contraction kernel (a thread
/// per output point): it reuses inputs across rows
/// (kfuse::needsContractionKernel) and no reduction of the group over the
/// same loops streams an input. A count recomputed for every row beside a
/// sum that streams x, sum_s m[b, s] next to sum_s x[b, s, h] m[b, s]
/// (fusion-lift-broadcast-reductions), reads only elements that the sum
/// loads too: the group's rows are still rows.
bool contractionIn(mlir::linalg::GenericOp g,
                   llvm::ArrayRef<mlir::linalg::GenericOp> generics);

/// The associative combiner of a reduction body `acc' = acc (op) f(inputs)`.
struct Combiner {
  mlir::gpu::AllReduceOperation kind;
  mlir::Operation *op; // the combining op in the body

  /// The value `op` combines into the accumulator of `g`'s body.
  mlir::Value termOf(mlir::linalg::GenericOp g) const {
    mlir::Value acc = g.getBody()->getArguments().back();
    return op->getOperand(op->getOperand(0) == acc ? 1 : 0);
  }
  /// A copy of `op` at `b` combining `acc` with `term` (in the body's order).
  mlir::Value combine(mlir::OpBuilder &b, mlir::linalg::GenericOp g,
                      mlir::Value acc, mlir::Value term) const {
    mlir::IRMapping m;
    m.map(g.getBody()->getArguments().back(), acc);
    m.map(termOf(g), term);
    return b.clone(*op, m)->getResult(0);
  }
};

std::optional<Combiner> findCombiner(mlir::linalg::GenericOp g);

/// The neutral element of `kind` for `type`.
mlir::TypedAttr neutral(mlir::OpBuilder &b, mlir::gpu::AllReduceOperation kind,
                        mlir::Type type);

/// Threads per block of a cluster of up to `maxCluster` blocks: 1024 /
/// occupancy (row-occupancy), and 512 at most where clusters may exceed
/// CUDA's portable 8 blocks (two blocks an SM, so one loads while the other
/// waits for the cluster's totals).
int64_t clusterBlockThreads(int64_t maxCluster, int64_t occupancy);

/// Vector chunks a thread of a cluster's block keeps in registers at most:
/// 8 (64 registers) whatever the block's size, since 1024 threads' worth of
/// blocks share an SM (fusion-cluster-dims holds ptxas to that with
/// nvvm.minctasm).
constexpr int64_t kClusterRoom = 8;

/// The most consecutive columns (up to 8, a power of two) a vector chunk
/// holds in a row of `n`.
int64_t chunkWidthIn(int64_t n);

/// Whether `buffer` is an allocation (seen through views) that nothing but
/// `readers` touches, through the allocation or any view of it. A function
/// argument, or a view of one, is a program output: never private.
bool isPrivateTo(mlir::Value buffer,
                 llvm::ArrayRef<mlir::linalg::GenericOp> readers);

/// The last of `generics[0, pos)` that writes `buffer`, and which of its
/// results it is.
std::optional<std::pair<mlir::linalg::GenericOp, unsigned>>
lastWriterBefore(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
                 mlir::Value buffer, unsigned pos);

/// Appends `g`'s inputs but its operand #`skip`, and their maps.
void inputsBut(mlir::linalg::GenericOp g, unsigned skip,
               llvm::SmallVectorImpl<mlir::Value> &inputs,
               llvm::SmallVectorImpl<mlir::AffineMap> &maps);

/// Whether op results `a` and `b` come from ops that compute the same
/// function of their operands (the same name, attributes and result #, no
/// regions, no memory effects) over operands that `same` pairs up.
bool sameComputation(mlir::Value a, mlir::Value b,
                     llvm::function_ref<bool(mlir::Value, mlir::Value)> same);

/// Pairs (a in ga, b in gb) a structural comparison of two expressions has
/// answered: each pair is compared once, so expressions that reuse values
/// compare in time proportional to their pairs of ops, not to their paths.
using SameMemo = llvm::DenseMap<std::tuple<const void *, mlir::Operation *,
                                           const void *, mlir::Operation *>,
                                bool>;

/// How deep such a comparison follows the operands of two expressions (a
/// chain of elementwise ops before a softmax's max and its sum: 3 ops a
/// level of tanh(t) * a + b).
constexpr unsigned kMaxSameDepth = 256;

/// What a structural comparison answers for `a` in the body of `ga` and `b`
/// in the body of `gb`, `depth` operands down: false past kMaxSameDepth,
/// else `compare()`, asked once a pair (a pair counts as different while
/// it is being compared).
bool memoizedSame(SameMemo &memo, mlir::Value a, mlir::Operation *ga,
                  mlir::Value b, mlir::Operation *gb, unsigned depth,
                  llvm::function_ref<bool()> compare);

/// Whether `a` in the body of `ga` and `b` in the body of `gb`, two
/// generics of `generics` over the same loops, compute the same value at
/// every point: inputs read through the same map from the same buffer with
/// the same last writer before each, or the same side-effect-free ops over
/// such values.
bool sameTermIn(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
                llvm::DenseMap<mlir::Operation *, unsigned> &order,
                mlir::Value a, mlir::linalg::GenericOp ga, mlir::Value b,
                mlir::linalg::GenericOp gb, SameMemo &memo, unsigned depth = 0);

/// A row value q that a generic's body computes from one input argument r
/// (a memref's element read at the row) with side-effect-free ops: the
/// centre of `e - q` in a centered sum (r, or r / c or r * c for a constant
/// finite nonzero c), the reference of `exp(e - q)` in an online sum (r, or
/// torch's isinf(r) ? 0 : r).
struct Center {
  mlir::BlockArgument r;
  llvm::SmallVector<mlir::Operation *> ops; // computing q from r, in body order
  mlir::Value value; // q in the body (r itself without ops)
  /// q from the row value `rowValue` in place of r (the ops cloned, and
  /// the body's constants they read).
  mlir::Value of(mlir::OpBuilder &b, mlir::Location,
                 mlir::Value rowValue) const {
    mlir::IRMapping m;
    m.map(r, rowValue);
    for (mlir::Operation *op : ops) {
      for (mlir::Value v : op->getOperands())
        if (mlir::Operation *d = v.getDefiningOp();
            d && !m.contains(v) && d->getBlock() == r.getOwner() &&
            d->hasTrait<mlir::OpTrait::ConstantLike>())
          b.clone(*d, m);
      b.clone(*op, m);
    }
    return m.lookupOrDefault(value);
  }
};

/// `q` as a Center when ops of `at`'s body compute it from one input
/// argument alone (and constants or values from outside the body), feeding
/// nothing but `user` and each other.
std::optional<Center> rowFunction(mlir::Value q, mlir::linalg::GenericOp at,
                                  mlir::Operation *user);

/// Whether `idx` (a thread or lane id) is 0.
mlir::Value isZero(mlir::OpBuilder &b, mlir::Location loc, mlir::Value idx);

/// The address (i64) of `buffer`'s first element plus `offset` bytes.
mlir::Value byteAddress(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value buffer, mlir::Value offset = mlir::Value());

/// One PTX statement (or a braced block of them) with side effects.
mlir::Value ptx(mlir::OpBuilder &b, mlir::Location loc, mlir::Type result,
                mlir::ValueRange operands, mlir::StringRef text,
                mlir::StringRef constraints);

/// A float constant of the element type of `type`, splatted if `type` is a
/// vector. `special`: 0 for `value`, -1 for -inf, 1 for NaN.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value, int special = 0);

/// exp(from - to), exactly 1 where from == to (also where both are -inf or
/// +inf, whose difference is NaN): moves a sum of exp(e - from) to one of
/// exp(e - to). `flags` on the exp (afn: fusion-fast-exp's ex2.approx);
/// `flush`: a factor below 2^-126 may be 0 (kfuse::kFlushSubnormals: the
/// sum it scales is joined by a term of 1 right after).
mlir::Value
rescale(mlir::OpBuilder &b, mlir::Location loc, mlir::Value from,
        mlir::Value to,
        mlir::arith::FastMathFlags flags = mlir::arith::FastMathFlags::none,
        bool flush = false);

/// sum(exp(e - r)) from s = sum(exp(e - m)), m = max(e) (terms against a
/// max of -inf taken as 0): s exp(m - r), with what the two-pass sum gives
/// where m is infinite. A max of +inf gives exp(+inf - r) (s is NaN there,
/// from its own term exp(+inf - +inf)): +inf, or NaN where r is +inf or
/// NaN. A max of -inf (every e -inf) gives 0, or NaN where r is -inf or NaN
/// (exp(-inf - -inf)).
mlir::Value onlineSum(mlir::OpBuilder &b, mlir::Location loc, mlir::Value s,
                      mlir::Value m, mlir::Value r);

/// The term a float sum `g` adds to its accumulator each step (null when g
/// is not such a sum).
mlir::Value sumTerm(mlir::linalg::GenericOp g);

/// The value `term` squares: d for d * d, math.powf(d, 2.0) or
/// math.fpowi(d, 2) (`(x - mean) ** 2`); null otherwise.
mlir::Value squaredValue(mlir::Value term);

/// The value d a float sum `v` adds the square of (acc + d * d, or d ** 2,
/// d used only there; `squares` set) or adds itself (acc + d), for f32 or
/// f64 accumulators (the counts of a centered sum, up to the row's length,
/// are floats of that type); null otherwise.
mlir::Value centeredValue(mlir::linalg::GenericOp v, bool &squares);

/// The centre of a centered sum, `e - q` computed by `sub`: q = r, r / c or
/// r * c (a constant finite nonzero c), r read once.
std::optional<Center> matchCenter(mlir::arith::SubFOp sub,
                                  mlir::linalg::GenericOp at);

/// Whether the inputs a reduction group folds are contiguous along its rows
/// rather than along its columns: every input a reduction or a full-space
/// op reads at varying columns and rows has the innermost row loop as its
/// last index
/// (x[4096, 256].sum(0), batch statistics of an NHWC tensor, a bias
/// gradient). One block per row would read such a row's columns with a
/// stride, every warp load touching 32 sectors; a thread per row reads them
/// coalesced, consecutive threads on consecutive rows.
bool contiguousAlongRows(llvm::ArrayRef<mlir::linalg::GenericOp> generics);

/// Whether a reduction group whose inputs are contiguous along its rows
/// (see contiguousAlongRows) has enough rows to run a thread per row: 128
/// threads on each of `smCount` SMs. With fewer, a block per row is faster
/// despite its strided reads.
bool rowsFillThreads(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
                     int64_t smCount);

/// Lowers a group whose rows are too long, or too few, for one kernel to
/// fill the GPU as slices of its rows: partials kernels, finishing kernels
/// and a kernel storing its full-space results (SplitLongRows.cpp).
/// std::nullopt when the split does not apply.
std::optional<mlir::LogicalResult>
splitLongRows(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
              llvm::StringRef name, const RowKernelOptions &options,
              bool alongRows);

/// One kernel of a split group, emitted by the row kernel emitter: the
/// generics (tagged `name`) a thread per row or a block per row (or per
/// tile of rows: `alongRows`, with `rowsFill` rows to fill the SMs), over
/// `space`, (rows, columns), where given (a kernel without reductions).
mlir::FailureOr<mlir::gpu::LaunchOp> emitSplitKernel(
    llvm::ArrayRef<mlir::linalg::GenericOp> generics, llvm::StringRef name,
    const RowKernelOptions &options, bool threadPerRow, bool alongRows,
    bool rowsFill,
    std::optional<std::pair<llvm::ArrayRef<int64_t>, llvm::ArrayRef<int64_t>>>
        space = std::nullopt);

} // namespace kfuse::row

#endif // KFUSE_TRANSFORMS_ROWKERNELUTILS_H
