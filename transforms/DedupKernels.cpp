//===- DedupKernels.cpp - one kernel for launches of the same code --------===//
//
// fusion-dedup-kernels: outlined kernels whose code is the same, but for
// their names, become one. A model repeats itself (the same layer norm in
// every layer, an optimizer's step over many parameters of one size), and
// each repetition was outlined as a kernel of its own; LLVM and ptxas would
// compile each copy, and the runtime would load each. Every launch of a
// copy now names the first kernel of that code, and the copies are erased.
// A launch that runs another kernel's code keeps the name it was generated
// with (`kfuse.generated_as`), for the launch plan and the report.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/MapVector.h"

namespace kfuse {
#define GEN_PASS_DEF_DEDUPKERNELS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

/// `op`'s attributes but its symbol name.
static DictionaryAttr attrsButName(Operation *op) {
  NamedAttrList attrs(op->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(op->getContext());
}

/// A hash that kernels of the same code share: their attributes but the
/// name, and their operations' names and numbers of operands and results in
/// order.
static llvm::hash_code shapeHash(gpu::GPUFuncOp kernel) {
  llvm::hash_code h =
      llvm::hash_value(attrsButName(kernel).getAsOpaquePointer());
  kernel.walk([&](Operation *op) {
    h = llvm::hash_combine(h, op->getName().getAsOpaquePointer(),
                           op->getNumOperands(), op->getNumResults());
  });
  return h;
}

/// Whether kernel `b` is kernel `a` but for its name: the same attributes
/// (signature, block size, hints) and the same code, operation by
/// operation (locations aside).
static bool sameKernel(gpu::GPUFuncOp a, gpu::GPUFuncOp b) {
  return attrsButName(a) == attrsButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(),
             OperationEquivalence::IgnoreLocations);
}

/// Takes out the grid dependency controls of `kernel`'s entry block
/// (fusion-programmatic-launch puts them first; constants may have moved
/// before them since) and returns their kinds. Put back first, they act no
/// later than they did: a wait earlier waits as long, a trigger earlier
/// lets the next launch start sooner, which waits all the same.
static SmallVector<NVVM::GridDepActionKind> takeControls(gpu::GPUFuncOp kernel) {
  SmallVector<NVVM::GridDepActionKind> kinds;
  for (Operation &op :
       llvm::make_early_inc_range(kernel.getBody().front()))
    if (auto c = dyn_cast<NVVM::GriddepcontrolOp>(op)) {
      kinds.push_back(c.getKind());
      c.erase();
    }
  return kinds;
}

struct DedupKernelsPass : kfuse::impl::DedupKernelsBase<DedupKernelsPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    // (no module with two kernels: nothing to compare, nothing changes)
    if (llvm::none_of(top.getOps<gpu::GPUModuleOp>(), [](gpu::GPUModuleOp m) {
          return llvm::count_if(m.getOps<gpu::GPUFuncOp>(),
                                [](gpu::GPUFuncOp f) {
                                  return f.isKernel() && !f.getBody().empty();
                                }) > 1;
        }))
      return markAllAnalysesPreserved();
    // (launches by their kernel)
    llvm::DenseMap<SymbolRefAttr, SmallVector<gpu::LaunchFuncOp>> launches;
    top.walk([&](gpu::LaunchFuncOp launch) {
      launches[launch.getKernel()].push_back(launch);
    });
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      // (the first kernel of each code, by hash: a few, compared in turn)
      llvm::DenseMap<llvm::hash_code, SmallVector<gpu::GPUFuncOp, 1>> firsts;
      SmallVector<gpu::GPUFuncOp> copies;
      auto ref = [&](gpu::GPUFuncOp f) {
        return SymbolRefAttr::get(module.getNameAttr(),
                                  {FlatSymbolRefAttr::get(f.getNameAttr())});
      };
      // (each kernel's grid dependency controls, set aside while the codes
      // are compared: a kernel that runs the code of several gets all of
      // theirs. A wait where no launch before it is programmatic returns at
      // once, a trigger where the launch after it is not starts nothing, so
      // a launch computes the same whatever the controls; and each
      // programmatic launch's kernel still waits)
      llvm::MapVector<Operation *, SmallVector<NVVM::GridDepActionKind>>
          controls;
      for (auto kernel : module.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel() && !kernel.getBody().empty())
          controls[kernel] = takeControls(kernel);
      for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel() || kernel.getBody().empty())
          continue;
        SmallVector<gpu::GPUFuncOp, 1> &same = firsts[shapeHash(kernel)];
        auto first = llvm::find_if(
            same, [&](gpu::GPUFuncOp f) { return sameKernel(f, kernel); });
        if (first == same.end()) {
          same.push_back(kernel);
          continue;
        }
        // (a copy nothing here launches is left as it is: launched from
        // elsewhere by its name, if at all)
        auto moved = launches.lookup(ref(kernel));
        if (moved.empty())
          continue;
        SmallVector<NVVM::GridDepActionKind> theirs = controls[kernel];
        llvm::append_range(controls[*first], theirs);
        for (gpu::LaunchFuncOp launch : moved) {
          if (!launch->hasAttr("kfuse.generated_as"))
            launch->setAttr("kfuse.generated_as", kernel.getNameAttr());
          launch.setKernelAttr(ref(*first));
        }
        copies.push_back(kernel);
      }
      for (auto &[kernel, kinds] : controls)
        for (NVVM::GridDepActionKind kind : kinds)
          kfuse::addGridControl(cast<gpu::GPUFuncOp>(kernel), kind);
      if (copies.empty())
        continue; // (no copy to erase: no walk for the names)
      // (a copy that something still names, outside the module or in it,
      // stays: one walk each, not one a copy; all stay where an unknown
      // operation keeps the walk from seeing every use)
      llvm::DenseSet<Attribute> named;
      bool complete = true;
      for (Region *scope : {&top.getBodyRegion(), &module.getBodyRegion()}) {
        auto uses = SymbolTable::getSymbolUses(scope);
        complete &= uses.has_value();
        if (uses)
          for (const SymbolTable::SymbolUse &use : *uses)
            named.insert(use.getSymbolRef());
      }
      for (gpu::GPUFuncOp kernel : copies)
        if (complete && !named.contains(ref(kernel)) &&
            !named.contains(FlatSymbolRefAttr::get(kernel.getNameAttr())))
          kernel.erase();
    }
  }
};

} // namespace
