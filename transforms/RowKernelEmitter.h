//===- RowKernelEmitter.h - one GPU kernel for a reduction group -*- C++
//-*-===//

#ifndef KFUSE_TRANSFORMS_ROWKERNELEMITTER_H
#define KFUSE_TRANSFORMS_ROWKERNELEMITTER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kfuse {

/// Lowers the bufferized generics of one reduction group (all tagged with
/// the same `fusion.kernel`, in program order) to one gpu.launch; see
/// RowKernelEmitter.cpp. Emits an error and fails on groups it cannot map.
/// `maxCluster` > 1 lets rows too long for one block's registers spread over
/// a thread-block cluster of up to that many blocks (sm_90 and later).
/// `chunksPerThread` = 0 streams every row instead of keeping it in
/// registers. `online` lets a streaming pass fold `m = max(e)` and
/// `sum(exp(e - m))` together (fast numerics). `asyncExchange`: the blocks
/// of a cluster send their totals to each other with st.async, completing
/// an mbarrier in the receiving block, instead of publishing them with a
/// cluster barrier.
mlir::LogicalResult
emitRowKernel(llvm::ArrayRef<mlir::linalg::GenericOp> generics,
              llvm::StringRef kernelName, int64_t threads,
              int64_t chunksPerThread = 4, int64_t maxCluster = 0,
              bool online = false, bool asyncExchange = false);

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_ROWKERNELEMITTER_H
