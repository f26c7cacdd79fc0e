//===- CpuArgvEntries.cpp - CPU entries taking one argument array ---------===//
//
// The CPU executable enters a program through one function per entry that
// takes an array of pointers to the memref descriptors (the C interface
// wrapper, rewritten), with the program's body moved into it: no call of
// the program passes thousands of arguments.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "fusion-cpu-argv-entries"

namespace kfuse {
#define GEN_PASS_DEF_CPUARGVENTRIES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kWrapperPrefix = "_mlir_ciface_";

struct CpuArgvEntriesPass
    : kfuse::impl::CpuArgvEntriesBase<CpuArgvEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> wrappers;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func.getName().starts_with(kWrapperPrefix) && !func.isExternal())
        wrappers.push_back(func);
    if (wrappers.empty())
      return markAllAnalysesPreserved();
    for (LLVM::LLVMFuncOp wrapper : wrappers)
      if (failed(rewrite(wrapper)))
        return signalPassFailure();
  }

  /// `wrapper`: one block of descriptor loads, a call of its function and a
  /// return.
  LogicalResult rewrite(LLVM::LLVMFuncOp wrapper) {
    ModuleOp module = getOperation();
    StringRef name = wrapper.getName().drop_front(kWrapperPrefix.size());
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    Block &block = wrapper.getBody().front();
    auto call = block.getNumArguments() == wrapper.getNumArguments() &&
                        wrapper.getBody().hasOneBlock() &&
                        block.getOperations().size() >= 2
                    ? dyn_cast<LLVM::CallOp>(*std::prev(block.end(), 2))
                    : LLVM::CallOp();
    std::optional<SymbolTable::UseRange> uses =
        callee ? SymbolTable::getSymbolUses(callee, module) : std::nullopt;
    if (!callee || callee.isExternal() || !call ||
        call.getCallee() != std::optional<StringRef>(name) ||
        call.getNumResults() != 0 || !isa<LLVM::ReturnOp>(block.back()) ||
        !uses || !llvm::hasSingleElement(*uses) ||
        !isa<LLVM::LLVMVoidType>(wrapper.getFunctionType().getReturnType()))
      return wrapper.emitError()
             << "fusion-cpu-argv-entries: '" << wrapper.getName()
             << "' is not a C interface wrapper of a function without "
                "results that only it calls";

    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    Location loc = wrapper.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    // The new argument: the array of descriptor pointers.
    unsigned n = block.getNumArguments();
    BlockArgument argv = block.addArgument(ptr, loc);
    rewriter.setInsertionPointToStart(&block);
    for (unsigned i = 0; i < n; ++i) {
      Value at = LLVM::GEPOp::create(rewriter, loc, ptr, ptr, argv,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value desc = LLVM::LoadOp::create(rewriter, loc, ptr, at);
      block.getArgument(i).replaceAllUsesWith(desc);
    }
    block.eraseArguments(0, n);
    wrapper.setFunctionType(LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(ctx), {ptr}, /*isVarArg=*/false));
    wrapper.setArgAttrsAttr(nullptr);
    // The function's body in place of the call (its returns return from
    // the wrapper: neither has results).
    SmallVector<Value> operands(call.getArgOperands());
    rewriter.eraseOp(&block.back()); // (the return)
    rewriter.eraseOp(call);
    Region &body = callee.getBody();
    Block *first = &body.front();
    rewriter.inlineRegionBefore(body, wrapper.getBody(),
                                wrapper.getBody().end());
    rewriter.mergeBlocks(first, &block, operands);
    rewriter.eraseOp(callee);
    return success();
  }
};
} // namespace
