//===- Utils.h - helpers shared by kfuse passes -----------------*- C++ -*-===//

#ifndef KFUSE_TRANSFORMS_UTILS_H
#define KFUSE_TRANSFORMS_UTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/IR/Value.h"

namespace kfuse {

/// A linalg.generic with only parallel loops, tensor operands of static
/// shape, and a body of ops that act element by element (so it can run as
/// one vectorized loop nest).
bool isElementwiseGeneric(mlir::Operation *op);

/// Whether `v` is computed (through reshapes and elementwise ops) from the
/// result of a reduction (false where 16 ops do not tell).
bool fromReduction(mlir::Value v);

/// Whether every parallel loop of `generic` comes before its reduction
/// loops (rows, then the reduced columns).
bool reductionsTrail(mlir::linalg::GenericOp generic);

/// A linalg.generic over tensors of static shape whose reduction loops (at
/// least one) all come after its parallel loops, whose indexing maps are
/// projected permutations, whose reduced inputs are indexed by every row
/// loop (not a contraction), and whose body acts element by element: a
/// reduction over trailing dimensions ("rows") that fusion can group.
bool isRowReductionGeneric(mlir::Operation *op);

/// Whether every input of `generic` indexed by all of its loops through a
/// permutation (its full-space reads, at least one) has a parallel loop as
/// its innermost index: its reduced loops step over whole rows in memory.
bool reducesLeadingAxes(mlir::linalg::GenericOp generic);

/// A row reduction (isRowReductionGeneric) that reducesLeadingAxes
/// (`x.sum(axis=0)` of a matrix, the weight gradient of a layer norm, the
/// channel statistics of an NHWC tensor). Beside reductions along rows,
/// fusion places such a reduction's parallel loops on the columns of their
/// kernel and its reduced loops on the rows (a column sum).
bool isColumnReduction(mlir::Operation *op);

/// A row reduction that is not a column reduction: what defines the rows of
/// a row group that also holds column sums.
bool isReductionAlongRows(mlir::Operation *op);

/// A linalg.generic with reduction loops that is not a row reduction: a
/// contraction (generalized matmul, batch_matmul, convolution), a reduction
/// over leading dimensions... It has one output, indexed by its parallel
/// loops through a projected permutation, and an elementwise body. Fusion
/// keeps its inputs as group inputs and may attach elementwise epilogues.
bool isContractionGeneric(mlir::Operation *op);

/// True if `generic` reuses inputs across rows (an input it reduces over is
/// not indexed by every parallel loop, so its elements feed many outputs)
/// other than as a matrix-vector product does: one input indexed by every loop
/// (streamed: read once) and the reused ones broadcast along the rows, every
/// map a projected permutation. A matrix-vector product runs as a row
/// reduction, a block per row reading its row coalesced and the vector from
/// cache (a thread per row would read rows with a stride, and a few rows
/// would leave the GPU idle); a matmul or a convolution, which stream no
/// input, as a contraction, a thread per output.
bool needsContractionKernel(mlir::linalg::GenericOp generic);

/// Whether `map`'s results are (d0, ..., d(n-1)): the first n loops, in
/// order (how a row value is written, and read along the rows).
bool isLeadingLoopsMap(mlir::AffineMap map, unsigned n);

/// Static extents of the parallel loops, in loop order (the output space).
llvm::SmallVector<int64_t> parallelExtents(mlir::linalg::GenericOp generic);

/// An elementwise generic, a row reduction or a contraction: what fusion
/// groups contain.
bool isFusibleGeneric(mlir::Operation *op);

/// True if the body reads a tensor defined outside the generic with
/// tensor.extract (a gather, such as a rewritten tensor.pad).
bool hasGatherReads(mlir::linalg::GenericOp generic);

/// An elementwise generic with no tensor inputs and no gathers (a generalized
/// linalg.fill): free to recompute wherever its value is needed.
bool isFillLike(mlir::Operation *op);

/// A pure op without regions whose results are all scalars (integers,
/// indices, floats): an element read from a tensor with tensor.extract
/// (torch-mlir's reads of 0-d tensors), arithmetic on such elements, a
/// constant.
bool isScalarComputation(mlir::Operation *op);

/// The op a one-result generic combines its accumulator with, when its
/// yielded value is `acc (op) other` for an op with a neutral element
/// (arith::getNeutralElement) and the body reads the accumulator nowhere
/// else; null otherwise.
mlir::Operation *accumulatorCombiner(mlir::linalg::GenericOp g);

/// A fill written as a generic (as normalization leaves fills): `dest`, a
/// tensor or a memref, gets `scalar` everywhere. On a tensor the generic
/// returns the filled tensor.
mlir::linalg::GenericOp fillGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value scalar, mlir::Value dest);

/// Evaluates the body of an elementwise (or reduction) generic on
/// `width`-wide vectors (width 1: plain scalars). `mapping` must map the
/// block arguments; values defined outside the body are broadcast to every
/// lane; a memref.load (a bufferized gather) loads lane by lane; constants
/// become splats; `linalg.index` of loop `d` becomes `index(d).first` (+
/// 0..width-1 when `index(d).second`, the innermost loop). An op whose
/// results `mapping` maps already is not cloned (the caller's replacement for
/// a body value). `live` (i1, or vector<width x i1>: null where every lane
/// is a point of the iteration space) marks the lanes the caller keeps: a
/// fusion.guard holds in the others (their inputs are padding, their reads
/// at indices from it meaningless). Returns the yielded values, or failure
/// with `*failedOp` set to an op that does not act element by element.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> cloneBodyOnVectors(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Block &body,
    mlir::IRMapping &mapping, int64_t width,
    llvm::function_ref<std::pair<mlir::Value, bool>(unsigned)> index,
    mlir::Operation **failedOp, mlir::Value live = mlir::Value());

/// Row groups: how the loops of an elementwise op whose iteration space is
/// the group's full space in another order map onto that space (`full`: the
/// loops of the group's reductions, its `numRows` rows then its columns).
/// An NHWC tensor's `x - mean` runs over (n, h, w, c) while the reductions
/// of its batch statistics loop over (c | n, h, w). Orders follow from the
/// tensors ops share: a reduction or a full-space op reads a tensor through
/// a permutation, so an op that reads (or writes) the same tensor through a
/// permutation has its loops placed; placed ops place others in turn. Each
/// op placed must have matching extents and read the group's row values
/// (results of `ops` over the rows, or of reductions) along the rows in
/// order. Returns, for each elementwise op of `ops` placed this way, the
/// interchange vector that puts its loops in full-space order (new loop i
/// is its loop v[i], as linalg::interchangeGenericOp takes it); ops over
/// the rows or over the full space in order do not appear.
/// (`loopsOf`, where given, answers for getStaticLoopRanges.)
llvm::DenseMap<mlir::Operation *, llvm::SmallVector<unsigned>>
alignToRowSpace(llvm::ArrayRef<mlir::Operation *> ops,
                llvm::ArrayRef<int64_t> full, unsigned numRows,
                llvm::function_ref<llvm::SmallVector<int64_t>(mlir::Operation *)>
                    loopsOf = {});

/// Row-major indices of `linear` in a space of static `shape` (the first
/// index is not reduced modulo its extent).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::Value linear,
                                           llvm::ArrayRef<int64_t> shape);

/// Bytes a value of static shaped type occupies in memory (i1 takes a byte).
int64_t bytesOf(mlir::Value value);

/// The compute capability `chip` names (sm_90 and sm_90a: 90), or nullopt
/// where it is not of the form sm_<digits>, with at most one lower-case
/// letter after.
std::optional<unsigned> chipVersion(llvm::StringRef chip);

/// The SMs kernels are sized for: `smCount` when positive, else the full-size
/// part of `chip` (sm_80: 108, sm_86: 84, sm_89: 128, sm_90: 132); 0 for a
/// chip kfuse does not know.
int64_t resolveSmCount(llvm::StringRef chip, int64_t smCount);

/// resolveSmCount, or an error on `op` naming `pass` for a chip kfuse does
/// not know.
mlir::FailureOr<int64_t> resolveSmCount(mlir::Operation *op,
                                        llvm::StringRef pass,
                                        llvm::StringRef chip, int64_t smCount);

/// Applies `patterns` greedily to `op` until none applies, within a budget
/// of rewrites (200 per op, at least 10000; a program takes a few per op):
/// patterns that would undo each other without end (a bug in kfuse, as one
/// was) fail here instead of running until memory is exhausted. The caller
/// reports the failure. `topDown`: ops are visited producers first (elementwise
/// fusion: a producer fused into all its consumers, then gone, before they
/// are fused into theirs). Regions are not simplified between rounds (dead
/// block arguments, identical blocks: kfuse's IR has regions of several
/// blocks only once lowered to cf, and its canonicalizers skip it too, see
/// Pipelines.cpp): on a program of thousands of ops those walks took a
/// quarter of normalization's time. `changed` (if given) says whether any op
/// changed.
mlir::LogicalResult
applyPatternsWithBudget(mlir::Operation *op,
                        const mlir::FrozenRewritePatternSet &patterns,
                        bool topDown = false, bool *changed = nullptr);

/// Index constants at `loc`: `indexConstants(loc)(b, v)` is an
/// `arith.constant v : index` at `b`'s insertion point, and
/// `indexConstants(b, loc)(v)` one at the (current) insertion point of `b`.
inline auto indexConstants(mlir::Location loc) {
  return [loc](mlir::OpBuilder &b, int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  };
}
inline auto indexConstants(mlir::OpBuilder &b, mlir::Location loc) {
  return [&b, loc](int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  };
}

/// The buffer a view (subview, reshape, cast, a strided metadata's base) is
/// of: followed through ViewLikeOpInterface ops to the value they view.
mlir::Value viewRoot(mlir::Value v);

/// Merges, in the kernel body `root` (a gpu.launch), equal computations and
/// equal loads of a buffer nothing in `root` writes: a later one where an
/// earlier one dominates it reuses the earlier's value. A row kernel's
/// phases each evaluate the bodies they fuse, a gather among them (x +
/// table[ids], then a layer norm: the table read once per phase); barriers
/// between the phases keep CSE alone from merging the loads.
void reuseReadOnlyLoads(mlir::Operation *root);

/// The buffers (view roots) that ops in `root` may write: any use of a
/// buffer but a load or a view (stores, atomics, an address taken for
/// inline PTX, a branch or loop carrying it).
llvm::DenseSet<mlir::Value> writtenBuffers(mlir::Operation *root);

/// Moves, in the kernel body `root` (a gpu.launch), each scalar load of a
/// buffer nothing in `root` writes that follows the body's first loop but
/// addresses only what is known before it, an index loaded from memory
/// among it (a gather at a row's label, read once the row's sums are done),
/// to just before that loop, with the pure ops computing its indices: its
/// two loads' latency hides behind the loop's instead of delaying the
/// row's end.
void hoistReadOnlyLoads(mlir::Operation *root);

// Rewriting generics (the normalize passes: Normalize.cpp, GatherIndices.cpp).

/// The scalar a fill-like generic writes into `init` (a tensor every element
/// of which it sets to that value), or null.
mlir::Value filledWith(mlir::Value init);

/// Linalg infers a generic's loop ranges from the operands that index a loop
/// directly (a plain dimension in their map). True if `reader`, given
/// `operands` read through `maps` instead of its own, still has every loop so
/// indexed, by an operand whose extent is the loop's current range (a tensor
/// read at `i` over a smaller range would make linalg infer a wrong one).
bool keepsLoopRanges(mlir::linalg::GenericOp reader,
                     llvm::ArrayRef<mlir::Value> operands,
                     llvm::ArrayRef<mlir::AffineMap> maps);

/// True if linalg still finds every loop's range of `reader` without its
/// operand `dropped`.
bool stillCoveredWithout(mlir::linalg::GenericOp reader,
                         mlir::OpOperand *dropped);

/// A generic like `g` (loops, inits, attributes) that reads `inputs` through
/// `maps`; g's body moves into it, block arguments unchanged (the caller
/// makes them match the new inputs), and g is left for the caller to
/// replace.
mlir::linalg::GenericOp withInputs(mlir::PatternRewriter &rewriter,
                                   mlir::linalg::GenericOp g,
                                   mlir::ValueRange inputs,
                                   llvm::ArrayRef<mlir::AffineMap> maps);

/// The inputs of `reader` other than `input`, with their maps.
std::pair<llvm::SmallVector<mlir::Value>, llvm::SmallVector<mlir::AffineMap>>
inputsBut(mlir::linalg::GenericOp reader, mlir::OpOperand *input);

/// Replaces `reader` by the same generic without its input `input`: the
/// element the body read from it is `element(body)` instead, built at the
/// start of the new body.
void withoutInput(mlir::PatternRewriter &rewriter,
                  mlir::linalg::GenericOp reader, mlir::OpOperand *input,
                  llvm::function_ref<mlir::Value(mlir::Block *body)> element);

/// True if a gather (tensor.extract) in g's body reads at loop indices and
/// constants, seen through the reshapes of the tensor it reads
/// (GatherIndices.cpp makes such a gather an input).
bool readsAtLoopIndices(mlir::linalg::GenericOp g);

/// Whether `type` has a strided layout of static strides and offset; with
/// `unitInnermost`, its innermost stride 1 too (rows contiguous: a subview
/// of rows' columns, as row kernels address views with a bare pointer and
/// the type's own offset and strides).
bool hasStaticStrides(mlir::MemRefType type, bool unitInnermost = false);

/// Puts `griddepcontrol kind` at the start of kernel `func`, where the
/// action belongs (a wait first: nothing of the kernel runs before it; a
/// trigger after it), unless it is there already.
void addGridControl(mlir::gpu::GPUFuncOp func,
                    mlir::NVVM::GridDepActionKind kind);

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_UTILS_H
