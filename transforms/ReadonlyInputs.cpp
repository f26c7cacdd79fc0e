//===- ReadonlyInputs.cpp - the program's inputs as read-only kernel args -===//
//
// fusion-readonly-inputs: a kernel argument that only reads one of the
// program's inputs (a buffer nothing in the program writes: a host function
// argument or a constant global) at every launch of its kernel is marked
// `llvm.noalias` and `llvm.readonly`, so that NVPTX loads it with
// `ld.global.nc` (read-only for the kernel's lifetime). ptxas may then move
// such a load above a store the kernel made before it, which it may not do
// while the load might read what the store wrote.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kfuse {
#define GEN_PASS_DEF_READONLYINPUTS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// Whether host buffer `root` is one of the program's inputs: a function
/// argument or a constant global, which no host operation writes (its
/// uses, followed through views, are launches, copies from it, its sizes
/// and returns). What the launches do with it is asked of each kernel.
bool programInput(Value root) {
  if (auto global = root.getDefiningOp<memref::GetGlobalOp>()) {
    auto decl = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        global, global.getNameAttr());
    if (!decl || !decl.getConstant())
      return false;
  } else if (!isa<BlockArgument>(root) ||
             !isa<FunctionOpInterface>(
                 cast<BlockArgument>(root).getOwner()->getParentOp())) {
    return false;
  }
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        llvm::append_range(work, user->getResults());
        continue;
      }
      auto copy = dyn_cast<memref::CopyOp>(user);
      if (!isa<gpu::LaunchFuncOp, memref::DimOp, func::ReturnOp>(user) &&
          !(copy && v == copy.getSource() && v != copy.getTarget()))
        return false;
    }
  }
  return true;
}

struct ReadonlyInputsPass
    : kfuse::impl::ReadonlyInputsBase<ReadonlyInputsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Each kernel's launches, and the roots of what they pass it.
    llvm::DenseMap<Operation *, SmallVector<gpu::LaunchFuncOp>> launches;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (Operation *kernel = SymbolTable::lookupNearestSymbolFrom(
              launch, launch.getKernelAttr()))
        launches[kernel].push_back(launch);
    });
    // (a root a launch passes to an argument its kernel may write: written,
    // whatever other launches do with it)
    llvm::DenseSet<Value> written;
    llvm::DenseMap<Operation *, SmallVector<bool>> loadsOnly;
    module.walk([&](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel())
        return;
      // (what the kernel may write: any use of a buffer but a load or a
      // view, as the row emitter's load reuse asks)
      llvm::DenseSet<Value> stored = kfuse::writtenBuffers(kernel);
      SmallVector<bool> &only = loadsOnly[kernel];
      for (BlockArgument arg : kernel.getArguments())
        only.push_back(isa<MemRefType>(arg.getType()) && !stored.contains(arg));
      for (gpu::LaunchFuncOp launch : launches.lookup(kernel))
        for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands()))
          if (i >= only.size() || !only[i])
            if (isa<MemRefType>(operand.getType()))
              written.insert(kfuse::viewRoot(operand));
    });
    module.walk([&](gpu::GPUFuncOp kernel) {
      auto found = launches.find(kernel);
      if (!kernel.isKernel() || found == launches.end())
        return;
      ArrayRef<bool> only = loadsOnly[kernel];
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
        if (!only[i])
          continue;
        bool input = llvm::all_of(found->second, [&](gpu::LaunchFuncOp l) {
          if (i >= l.getKernelOperands().size())
            return false;
          Value root = kfuse::viewRoot(l.getKernelOperands()[i]);
          return !written.contains(root) && programInput(root);
        });
        if (!input)
          continue;
        UnitAttr unit = UnitAttr::get(kernel.getContext());
        kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), unit);
        kernel.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(), unit);
      }
    });
  }
};

} // namespace
