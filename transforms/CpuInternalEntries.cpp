//===- CpuInternalEntries.cpp - CPU functions behind their C interfaces ---===//
//
// The CPU executable enters a program through its C interface wrapper only;
// the function itself gets internal linkage, so that LLVM neither builds a
// call with the expanded arguments of every memref descriptor for callers
// outside the module nor keeps arguments the function does not use.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"

#define DEBUG_TYPE "fusion-cpu-internal-entries"

namespace kfuse {
#define GEN_PASS_DEF_CPUINTERNALENTRIES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
struct CpuInternalEntriesPass
    : kfuse::impl::CpuInternalEntriesBase<CpuInternalEntriesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto internal = LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal);
    // (the attribute names func-to-LLVM reads)
    StringRef cInterface = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    StringRef linkage = "llvm.linkage";
    bool changed = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func->hasAttr(cInterface) ||
          func->getAttr(linkage) == internal)
        continue;
      func->setAttr(linkage, internal);
      changed = true;
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
