//===- Pipelines.cpp - kfuse's named pass pipelines -----------------------===//
//
// Each compilation stage is one pipeline, built by one function from one
// options struct and registered by name. fuse-opt and the Python driver run
// these same pipelines (`fusion-plan{recompute=auto}`), so a stage is never
// written twice.
//
//   fusion-normalize      canonical linalg-on-tensors (named ops generalized,
//                         static pads as gathers, unit dimensions folded,
//                         reshapes hoisted to the inputs)
//   fusion-plan           fusion.group formation
//   fusion-codegen-cuda   strategy, one kernel per group, bufferize,
//   gpu.launch,
//                         outlining; the host function is left as the launch
//                         plan
//   fusion-target-cuda    gpu.module -> NVVM -> PTX (gpu.binary)
//   fusion-codegen-cpu    one loop nest per group, bufferized, C interface
//   fusion-target-cpu     -> LLVM dialect, for the ExecutionEngine
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

/// Fails the pipeline with a message. Pipeline builders cannot fail, so a bad
/// option becomes a pass that reports it when the pipeline runs.
struct ReportPipelineError
    : PassWrapper<ReportPipelineError, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReportPipelineError)
  explicit ReportPipelineError(std::string message)
      : message(std::move(message)) {}
  void runOnOperation() override {
    getOperation().emitError(message);
    signalPassFailure();
  }
  std::string message;
};

/// Fails where a memref of elements narrower than a byte (i1) is still
/// loaded or stored (memref and vector ops): the LLVM lowering of such
/// accesses stops the process. The targets take what the codegen stages
/// leave, whose boolean buffers hold bytes (both run fusion-bool-bytes).
struct CheckByteElements
    : PassWrapper<CheckByteElements, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckByteElements)
  explicit CheckByteElements(std::string stage) : stage(std::move(stage)) {}
  void runOnOperation() override {
    markAllAnalysesPreserved(); // (it only checks)
    getOperation().walk([&](Operation *op) {
      if (!isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op) &&
          !isa_and_nonnull<vector::VectorDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Value v : op->getOperands()) {
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type || !type.getElementType().isIntOrFloat() ||
            type.getElementType().getIntOrFloatBitWidth() % 8 == 0)
          continue;
        op->emitError() << stage << ": " << type
                        << " has elements narrower than a byte; boolean "
                           "buffers must hold bytes first (fusion-bool-bytes, "
                           "which the codegen stages run)";
        signalPassFailure();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
  std::string stage;
};

/// Refuses a kernel whose parameters take more than the 32764 bytes a CUDA
/// kernel can be passed (sm_70 and later, CUDA 12.1 on; ptxas stops on it,
/// and so would the driver loading the PTX): fusion planning keeps a group
/// to 512 buffers, but one op may read more tensors than that. Memrefs are
/// passed as bare pointers; each parameter is aligned to its size.
struct CheckKernelParameters
    : PassWrapper<CheckKernelParameters, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckKernelParameters)
  static constexpr int64_t kMaxBytes = 32764;
  void runOnOperation() override {
    markAllAnalysesPreserved(); // (it only checks)
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel())
        return WalkResult::advance();
      int64_t bytes = 0;
      for (Type t : kernel.getArgumentTypes()) {
        int64_t size = 8; // (pointers, index, anything wider)
        if (t.isIntOrFloat())
          size = std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
        bytes = llvm::alignTo(bytes, size) + size;
      }
      if (bytes <= kMaxBytes)
        return WalkResult::advance();
      kernel.emitError() << "kfuse cannot generate code for kernel '"
                         << kernel.getName() << "' yet: its "
                         << kernel.getNumArguments() << " parameters take "
                         << bytes << " bytes, more than the " << kMaxBytes
                         << " a CUDA kernel can be passed (one op reading "
                            "that many tensors)";
      signalPassFailure();
      return WalkResult::interrupt();
    });
  }
};

/// Appends a textual pipeline; a malformed one (an option value the text
/// cannot carry) becomes a pipeline error instead of a crash.
void addPipeline(OpPassManager &pm, const std::string &text) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  OpPassManager probe("builtin.module");
  if (failed(parsePassPipeline(text, probe, os))) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "kfuse: could not build pipeline '" + text + "': " + errors));
    return;
  }
  (void)parsePassPipeline(text, pm, os);
}

bool isChip(const std::string &chip) {
  return kfuse::chipVersion(chip).has_value();
}

struct PlanOptions : PassPipelineOptions<PlanOptions> {
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("Multi-consumer producers: auto, never or always"),
      llvm::cl::init("auto")};
  Option<bool> noFusion{*this, "no-fusion",
                        llvm::cl::desc("Every op in a group of its own"),
                        llvm::cl::init(false)};
  Option<bool> multiTensor{
      *this, "multi-tensor",
      llvm::cl::desc("Independent elementwise groups share one launch"),
      llvm::cl::init(true)};
};

struct CpuCodegenOptions : PassPipelineOptions<CpuCodegenOptions> {
  Option<std::string> numerics{*this, "numerics",
                               llvm::cl::desc("strict or fast"),
                               llvm::cl::init("fast")};
};

struct CudaCodegenOptions : PassPipelineOptions<CudaCodegenOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("sm_90")};
  Option<std::string> numerics{*this, "numerics",
                               llvm::cl::desc("strict or fast"),
                               llvm::cl::init("fast")};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("SM count (0: the chip's default)"),
                          llvm::cl::init(0)};
  Option<int64_t> threads{*this, "threads", llvm::cl::desc("Threads per block"),
                          llvm::cl::init(256)};
  Option<int64_t> unroll{*this, "unroll",
                         llvm::cl::desc("Vector accesses in flight per thread"),
                         llvm::cl::init(4)};
  Option<int64_t> rowChunks{
      *this, "row-chunks",
      llvm::cl::desc("Row-kernel vector chunks per thread kept in registers "
                     "(0: stream every row)"),
      llvm::cl::init(4)};
  Option<int64_t> rowFold{
      *this, "row-fold",
      llvm::cl::desc("Column sums beside row reductions: rows each block "
                     "folds into partials (the largest divisor of the rows "
                     "up to this; 0: chosen from the SM count; 1: store "
                     "every term)"),
      llvm::cl::init(0)};
  Option<int64_t> rowCluster{
      *this, "row-cluster",
      llvm::cl::desc("Most blocks per cluster for rows too long for one "
                     "block (0: none; 2, 4, 8 or 16 on sm_90 and later; -1: the "
                     "chip's default, 8 on sm_90 and later, else 0)"),
      llvm::cl::init(-1)};
  Option<int64_t> rowOccupancy{
      *this, "row-occupancy",
      llvm::cl::desc("Blocks of a block-per-row kernel an SM holds at once: "
                     "1, 2 or 4 (blocks of at most 1024 / this many threads, "
                     "each with its share of the registers and of "
                     "row-smem; a cluster's blocks of 1024 / this many "
                     "threads, 512 at most where row-cluster exceeds 8)"),
      llvm::cl::init(1)};
  Option<int64_t> rowPersist{
      *this, "row-persist",
      llvm::cl::desc("A row over a cluster whose blocks hold their shares in "
                     "registers (or in one block's) runs as a persistent "
                     "kernel of at most this many clusters or blocks (the "
                     "runtime launches those the device "
                     "holds at once), the next row's share copied into "
                     "shared memory meanwhile (0: a cluster a row; -1: up "
                     "to a cluster a row; sm_90 and later)"),
      llvm::cl::init(0)};
  Option<int64_t> rowTile{
      *this, "row-tile",
      llvm::cl::desc("Row tiles (rows contiguous in memory, reduced along a "
                     "strided axis): rows a block's tile holds, a power of "
                     "two up to 32 (0: a 32-byte sector of each column)"),
      llvm::cl::init(0)};
  Option<int64_t> rowTrip{
      *this, "row-trip",
      llvm::cl::desc("A streamed row (a block per row): chunks each thread "
                     "loads per trip of its column loop, 1 to 32 (0: 4, or "
                     "its whole share up to 8 chunks)"),
      llvm::cl::init(0)};
  Option<bool> rowPeel{
      *this, "row-peel",
      llvm::cl::desc("A streamed row that its trips do not divide: the "
                     "trips whose chunks all lie in the row run untested, "
                     "the last one tested (false: every trip tests them)"),
      llvm::cl::init(true)};
  Option<int64_t> rowPrefetch{
      *this, "row-prefetch",
      llvm::cl::desc("Row kernels that hold their rows on chip ask L2 for "
                     "their share of the row this many rows on once their "
                     "own has landed (0: none; sm_90 and later)"),
      llvm::cl::init(0)};
  Option<std::string> rowExchange{
      *this, "row-exchange",
      llvm::cl::desc("How a cluster's blocks combine their totals: barrier "
                     "(a cluster barrier per exchange) or async (st.async "
                     "into every block, awaited on an mbarrier; the "
                     "default)"),
      llvm::cl::init("async")};
  Option<bool> rowJoint{
      *this, "row-joint",
      llvm::cl::desc("A cluster's blocks exchange the totals of reductions "
                     "that do not read each other together, and (fast "
                     "numerics) a max and a later sum of exp(e - max) too, "
                     "each block's sum against its own max; false: an "
                     "exchange per reduction"),
      llvm::cl::init(true)};
  Option<int64_t> rowSmem{
      *this, "row-smem",
      llvm::cl::desc("Bytes of dynamic shared memory a row kernel's block "
                     "may keep its share of a row in beyond its registers "
                     "(0: registers only; -1: the chip's, what a block may "
                     "opt in to less 2 KB for static shared memory)"),
      llvm::cl::init(-1)};
  Option<std::string> rowShift{
      *this, "row-shift",
      llvm::cl::desc("Rows that do not all start on a boundary of the "
                     "widest vector (an odd width, or a view of such rows) "
                     "move aligned vectors anyway, chunks following memory "
                     "(masked lanes at the row's ends): auto (but rows of "
                     "4-byte or wider elements streamed by choice), true "
                     "or false (narrower vectors)"),
      llvm::cl::init("auto")};
  Option<bool> rowLastBlock{
      *this, "row-last-block",
      llvm::cl::desc("Each wave of a row split into slices along its columns "
                     "is finished by the last block of its partials kernel "
                     "to store its partial (an atomic count a row), not by "
                     "a kernel of its own; rows split into slices of rows "
                     "likewise by the last block of each tile of rows, "
                     "where the finish runs a thread per row; and a full "
                     "reduction of a row kernel's results (a loss's mean) "
                     "by the last of the row kernel's blocks to end"),
      llvm::cl::init(true)};
  Option<bool> rowSplitTail{
      *this, "row-split-tail",
      llvm::cl::desc("A long row that no good number of slices divides (a "
                     "prime length) is split anyway: equal slices of a "
                     "multiple of 8 columns and a tail of the rest, reduced "
                     "by one more block; along rows, slices of equal rows "
                     "and a shorter tail; false: dividing slices only"),
      llvm::cl::init(true)};
  Option<bool> rowStoreTransposed{
      *this, "row-store-transposed",
      llvm::cl::desc("A split along rows stores its full-space results in a "
                     "kernel over (positions, rows), vectors along the "
                     "rows, where the rows fill a warp's vectors; false: a "
                     "thread per slice and row"),
      llvm::cl::init(true)};
  Option<int64_t> rowPack{
      *this, "row-pack",
      llvm::cl::desc("Rows one warp covers (a block per row of 32 threads) "
                     "share a block, a warp each, up to this many (a power "
                     "of two up to 32; 0: up to 4 where the blocks still "
                     "number twice the SMs; 1: a block per row)"),
      llvm::cl::init(0)};
  Option<bool> packLaunches{
      *this, "pack-launches",
      llvm::cl::desc("Small independent kernels (at most a block an SM) run "
                     "as one launch, each over blocks of its own "
                     "(fusion-pack-launches)"),
      llvm::cl::init(true)};
  Option<bool> dedupKernels{
      *this, "dedup-kernels",
      llvm::cl::desc("Launches of kernels of the same code run one kernel, "
                     "compiled once (fusion-dedup-kernels)"),
      llvm::cl::init(true)};
  Option<bool> readonlyInputs{
      *this, "readonly-inputs",
      llvm::cl::desc("Kernels load the program's inputs with ld.global.nc "
                     "(fusion-readonly-inputs)"),
      llvm::cl::init(false)};
  Option<int64_t> packBytes{
      *this, "pack-bytes",
      llvm::cl::desc("The most bytes of buffers a launch that joins a pack "
                     "has (fusion-pack-launches max-bytes)"),
      llvm::cl::init(1 << 20)};
  Option<bool> pdl{
      *this, "pdl",
      llvm::cl::desc("A kernel that directly follows another is launched "
                     "before that one ends and waits for it on the GPU "
                     "(programmatic dependent launch, sm_90 and later; no "
                     "effect on older chips)"),
      llvm::cl::init(true)};
  Option<int64_t> blocksPerSm{
      *this, "blocks-per-sm",
      llvm::cl::desc("Cap the grid at this many blocks per SM (0: no cap)"),
      llvm::cl::init(0)};
};

struct CudaTargetOptions : PassPipelineOptions<CudaTargetOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx81")};
  Option<int64_t> optLevel{*this, "opt-level",
                           llvm::cl::desc("LLVM optimization level"),
                           llvm::cl::init(3)};
};

struct NoOptions : PassPipelineOptions<NoOptions> {};

// Every canonicalize of kfuse's pipelines runs with region-simplify=disabled:
// region simplification (erasing unreachable blocks and dead block
// arguments, merging identical blocks) works on regions of several blocks,
// which kfuse's IR has only once scf is lowered to cf in the target stage,
// where LLVM's CFG simplification does the same. It cost 6% of the
// instructions of compiling the suite's largest program (lamb_bert) and
// changed no plan or PTX of the 370 suite and test programs.
//
// Bufferization: upstream's one-shot analysis for what
// fusion-bufferize-fresh-generics left (writes into other generics'
// results), then the buffer results as out-params written in place
// (fusion-results-to-out-params, fusion-results-in-place).
const char *kBufferize =
    "one-shot-bufferize{bufferize-function-boundaries=1 "
    "function-boundary-type-conversion=identity-layout-map},"
    "fusion-results-to-out-params,"
    "cse,canonicalize{region-simplify=disabled},"
    "func.func(fusion-results-in-place)";

} // namespace

namespace kfuse {

void buildNormalizePipeline(OpPassManager &pm, const NoOptions &) {
  // Unit dimensions (torch-mlir's keepdims reductions write tensor<Nx1xT>
  // through (d0, 0) maps) are folded away, so reductions and their epilogues
  // index rows with plain projected permutations.
  // Generics kfuse would run other than as written are refused first
  // (fusion-check-generics: a "parallel" loop an output does not vary
  // along, whose iterations GPU threads would race on; an output written in
  // part, whose other elements would not keep the init's values).
  // Static pads become elementwise gathers (fusion-pad-to-generic);
  // assertions in element bodies are dropped (fusion-drop-body-asserts), so
  // are results nothing reads (fusion-drop-dead-results: torch.max's
  // indices when only the maximum is used); reductions take their parallel
  // loops first (fusion-reductions-last: torch-mlir's sums over dim 0 have
  // the reduced loop first); argmax/argmin generics become
  // one-result reductions (fusion-split-arg-reductions); reduction steps
  // that are associative ops in disguise (`acc - x`, an integer
  // compare-and-select) become those ops (fusion-associative-combiners);
  // reshapes move above elementwise producers to the inputs, and collapses
  // below the broadcasts and reductions reading them (fusion-hoist-reshapes);
  // copies (transposes, broadcasts, slices) fold into their readers' maps
  // (fusion-fold-copies; a transposing copy of a reduction's result is the
  // reduction writing through the permutation); the two run in turn until
  // neither changes anything (fusion-normalize-views: gathers turned inputs
  // and split loops leave reshapes to move). A reduction of a
  // reduction's result with the same combiner becomes one reduction
  // (fusion-merge-nested-reductions). A one-hot sum (`j == k ? x[j] : 0`
  // summed over j, a loss's label pick) becomes the gather of its one term
  // (fusion-picks-as-gathers). The reductions normalize-views and the merge
  // wrote take their loops in order again (fusion-reductions-last). Gathers
  // whose indices are not provably in bounds read at clamped indices, their
  // values guarded (fusion-guard-gathers; fusion-lower-guards turns the
  // guards into the status words the runtime reports after code
  // generation).
  addPipeline(
      pm,
      "func.func(fusion-check-generics),"
      "canonicalize{region-simplify=disabled},"
      "func.func(linalg-generalize-named-ops,"
      "fusion-pad-to-generic,fusion-drop-body-asserts,fusion-drop-dead-results,"
      "fusion-reductions-last,fusion-split-arg-reductions,"
      "fusion-associative-combiners,"
      "linalg-fold-unit-extent-dims,fusion-normalize-views,"
      "fusion-merge-nested-reductions,fusion-picks-as-gathers,"
      "fusion-reductions-last,fusion-guard-gathers),"
      "canonicalize{region-simplify=disabled},cse");
}

void buildPlanPipeline(OpPassManager &pm, const PlanOptions &o) {
  // Boolean tensors cross the boundary as bytes (fusion-widen-bool-tensors);
  // full reductions of row-wise values reduce row by row first
  // (fusion-split-full-reductions) so that their rows join the row group;
  // reductions read broadcast beside a reduction over finer rows are
  // recomputed on those rows (fusion-lift-broadcast-reductions, unless
  // fusion or recomputation is off); then the groups (fusion-form-groups).
  bool lift = !o.noFusion && o.recompute != "never";
  addPipeline(pm,
              llvm::formatv("func.func(fusion-widen-bool-tensors,"
                            "fusion-split-full-reductions,{2}"
                            "fusion-form-groups{{recompute={0} no-fusion={1} "
                            "multi-tensor={3}},"
                            "fusion-widen-bool-results),"
                            "canonicalize{{region-simplify=disabled},cse",
                            o.recompute.getValue(), o.noFusion.getValue(),
                            lift ? "fusion-lift-broadcast-reductions," : "",
                            o.multiTensor.getValue())
                  .str());
}

void buildCudaCodegenPipeline(OpPassManager &pm, const CudaCodegenOptions &o) {
  if (!isChip(o.chip)) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: chip must look like sm_90, got '" + o.chip +
        "'"));
    return;
  }
  if (o.rowChunks < 0) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-chunks must be >= 0 (0: stream rows), got " +
        std::to_string(o.rowChunks)));
    return;
  }
  if (o.rowFold < 0) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-fold must be >= 0 (0: from the SM count), "
        "got " +
        std::to_string(o.rowFold)));
    return;
  }
  bool clusters = *kfuse::chipVersion(o.chip) >= 90;
  int64_t cluster = o.rowCluster == -1 ? (clusters ? 8 : 0) : o.rowCluster;
  if (cluster != 0 && cluster != 1 && cluster != 2 && cluster != 4 &&
      cluster != 8 && cluster != 16) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-cluster must be -1, 0, 2, 4, 8 or 16, got " +
        std::to_string(cluster)));
    return;
  }
  if (o.rowOccupancy != 1 && o.rowOccupancy != 2 && o.rowOccupancy != 4) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-occupancy must be 1, 2 or 4, got " +
        std::to_string(o.rowOccupancy)));
    return;
  }
  if (o.rowPersist < -1 || (o.rowPersist != 0 && cluster <= 1)) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-persist must be 0, or -1 or > 0 with "
        "thread-block clusters (row-cluster above 1, sm_90 or later), got " +
        std::to_string(o.rowPersist)));
    return;
  }
  if (o.rowTile < 0 || o.rowTile > 32 || (o.rowTile & (o.rowTile - 1)) != 0) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-tile must be 0 or a power of two up to 32, "
        "got " +
        std::to_string(o.rowTile)));
    return;
  }
  if (o.packBytes < 0) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: pack-bytes must be >= 0, got " +
        std::to_string(o.packBytes)));
    return;
  }
  if (o.rowTrip < 0 || o.rowTrip > 32) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-trip must be 0 to 32, got " +
        std::to_string(o.rowTrip)));
    return;
  }
  if (o.rowPrefetch < 0 || (o.rowPrefetch > 0 && !clusters)) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-prefetch must be 0, or > 0 on sm_90 or "
        "later (cp.async.bulk.prefetch), got " +
        std::to_string(o.rowPrefetch) + " on " + o.chip.getValue()));
    return;
  }
  if (o.rowExchange != "barrier" && o.rowExchange != "async") {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-exchange must be barrier or async, got '" +
        o.rowExchange + "'"));
    return;
  }
  // (dynamic shared memory a block may opt in to, by compute capability)
  int64_t sm = *kfuse::chipVersion(o.chip);
  int64_t sharedMost = sm >= 90                ? 232448
                       : sm == 80 || sm == 87 ? 166912
                       : sm >= 86             ? 101376
                       : sm == 75             ? 65536
                       : sm >= 70             ? 98304
                                              : 49152;
  int64_t rowSmem = o.rowSmem == -1 ? sharedMost - 2048 : o.rowSmem;
  if (rowSmem < 0 || rowSmem > sharedMost - 1024) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-smem must be -1 (the chip's) or 0 to " +
        std::to_string(sharedMost - 1024) + " bytes on " + o.chip.getValue() +
        ", got " + std::to_string(o.rowSmem)));
    return;
  }
  if (cluster > 1 && !clusters) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-codegen-cuda: row-cluster needs thread-block clusters "
        "(sm_90 or later), chip is " +
        o.chip.getValue()));
    return;
  }
  addPipeline(
      pm,
      llvm::formatv(
          "func.func(fusion-set-numerics{{mode={6}},"
          "fusion-saturate-conversions,fusion-fuse-group-bodies),"
          "fusion-select-strategy{{chip={0} sm-count={1} threads={2} "
          "unroll={3} blocks-per-sm={4}},"
          "func.func(fusion-inline-groups,fusion-bufferization-boundary,"
          "fusion-bufferize-fresh-generics),{5},"
          "func.func(fusion-generic-to-gpu{{chip={0} sm-count={1} "
          "row-chunks={7} row-cluster={9} row-online={10} row-exchange={11} "
          "row-fold={12} row-shift={13} row-joint={14} row-smem={15} "
          "row-last-block={17} row-split-tail={18} row-pack={19} "
          "row-occupancy={20} row-prefetch={21} row-tile={22} row-trip={25} "
          "row-persist={23} row-store-transposed={24} row-peel={28}}{26}),"
          "func.func(fusion-bool-bytes),fusion-lower-guards,"
          "cse,canonicalize{{region-simplify=disabled},"
          "gpu-launch-sink-index-computations,"
          "gpu-kernel-outlining,fusion-cluster-dims,{16}"
          "gpu.module(fusion-align-workgroup),cse,"
          "canonicalize{{region-simplify=disabled}{8}{27}{29}",
          o.chip.getValue(), o.smCount.getValue(), o.threads.getValue(),
          o.unroll.getValue(), o.blocksPerSm.getValue(), kBufferize,
          o.numerics.getValue(), o.rowChunks.getValue(),
          o.numerics.getValue() == "strict" ? ",gpu.module(fusion-ieee-sqrt)"
                                            : "",
          cluster, o.numerics.getValue() == "strict" ? "false" : "true",
          o.rowExchange.getValue(), o.rowFold.getValue(), o.rowShift.getValue(),
          o.rowJoint ? "true" : "false", rowSmem,
          o.pdl && clusters ? "fusion-programmatic-launch," : "",
          o.rowLastBlock ? "true" : "false", o.rowSplitTail ? "true" : "false",
          o.rowPack.getValue(), o.rowOccupancy.getValue(),
          o.rowPrefetch.getValue(), o.rowTile.getValue(),
          o.rowPersist.getValue(), o.rowStoreTransposed ? "true" : "false",
          o.rowTrip.getValue(),
          o.packLaunches
              ? llvm::formatv(",fusion-pack-launches{{chip={0} "
                              "sm-count={1} max-bytes={2}}",
                              o.chip.getValue(), o.smCount.getValue(),
                              o.packBytes.getValue())
                    .str()
              : std::string(),
          o.dedupKernels ? ",fusion-dedup-kernels" : "",
          o.rowPeel ? "true" : "false",
          o.readonlyInputs ? ",fusion-readonly-inputs" : "")
          .str());
}

void buildCudaTargetPipeline(OpPassManager &pm, const CudaTargetOptions &o) {
  if (!isChip(o.chip) ||
      o.features.getValue().find_first_of(" ,{}") != std::string::npos) {
    pm.addPass(std::make_unique<ReportPipelineError>(
        "fusion-target-cuda: bad chip '" + o.chip + "' or features '" +
        o.features + "'"));
    return;
  }
  pm.addPass(std::make_unique<CheckByteElements>("fusion-target-cuda"));
  pm.addPass(std::make_unique<CheckKernelParameters>());
  addPipeline(
      pm, llvm::formatv("nvvm-attach-target{{chip={0} features={1} O={2}},"
                        "gpu.module(fusion-fast-exp,fusion-fast-div,fusion-expand-powi,fusion-gpu-intrinsics,"
                        "expand-strided-metadata,"
                        "lower-affine,"
                        "convert-scf-to-cf,convert-vector-to-llvm,"
                        "convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv=1},"
                        "fusion-extern-dynamic-shared,"
                        "cse,canonicalize{{region-simplify=disabled},"
                        "reconcile-unrealized-casts),"
                        "gpu-module-to-binary{{format=isa}",
                        o.chip.getValue(), o.features.getValue(),
                        o.optLevel.getValue())
              .str());
}

void buildCpuCodegenPipeline(OpPassManager &pm, const CpuCodegenOptions &o) {
  addPipeline(pm,
              "func.func(fusion-set-numerics{mode=" + o.numerics.getValue() +
                  "},fusion-saturate-conversions,fusion-fuse-group-bodies,"
                  "fusion-inline-groups,"
                  "fusion-cpu-compensated-sums,fusion-bufferization-boundary,"
                  "fusion-bufferize-fresh-generics)," +
                  kBufferize +
                  ",buffer-deallocation-pipeline,"
                  "func.func(convert-linalg-to-loops),"
                  "fusion-lower-guards{take-function=kfuse_take_status},"
                  "func.func(fusion-bool-bytes,llvm-request-c-wrappers)");
}

void buildCpuTargetPipeline(OpPassManager &pm, const NoOptions &) {
  // fusion-cpu-bf16-casts, arith-expand and fusion-cpu-bf16-bits: the JIT
  // has no runtime library for bf16 conversions. fusion-expand-powi: LLVM's
  // x86 back end stops the process on llvm.powi with an i64 exponent.
  // fusion-cpu-argv-entries: the executable calls each entry with one array
  // of descriptor pointers.
  pm.addPass(std::make_unique<CheckByteElements>("fusion-target-cpu"));
  addPipeline(pm,
              "func.func(fusion-cpu-bf16-casts,arith-expand{include-bf16=1},"
              "fusion-expand-powi),"
              "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
              "convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
              "reconcile-unrealized-casts,fusion-cpu-bf16-bits,"
              "fusion-cpu-argv-entries");
}

void registerPipelines() {
  PassPipelineRegistration<NoOptions>(
      "fusion-normalize", "Canonical linalg-on-tensors for planning",
      buildNormalizePipeline);
  PassPipelineRegistration<PlanOptions>(
      "fusion-plan", "Forms fusion.group ops (fusion planning)",
      buildPlanPipeline);
  PassPipelineRegistration<CudaCodegenOptions>(
      "fusion-codegen-cuda",
      "Fusion groups to outlined, vectorized GPU kernels and a host function",
      buildCudaCodegenPipeline);
  PassPipelineRegistration<CudaTargetOptions>(
      "fusion-target-cuda", "GPU kernels to PTX in a gpu.binary",
      buildCudaTargetPipeline);
  PassPipelineRegistration<CpuCodegenOptions>(
      "fusion-codegen-cpu", "Fusion groups to bufferized loop nests",
      buildCpuCodegenPipeline);
  PassPipelineRegistration<NoOptions>("fusion-target-cpu",
                                      "Loop nests to the LLVM dialect",
                                      buildCpuTargetPipeline);
}

} // namespace kfuse
