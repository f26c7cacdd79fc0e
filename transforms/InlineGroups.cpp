//===- InlineGroups.cpp - replace fusion.group ops by their kernels -------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#define DEBUG_TYPE "fusion-inline-groups"

namespace kfuse {
#define GEN_PASS_DEF_INLINEGROUPS
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

/// Ops that may stay outside groups: code generation handles them on the host
/// or they vanish in bufferization.
static bool isHostOp(Operation &op) {
  // Reshapes of contiguous tensors bufferize to views of the same buffer,
  // and so do the slices of arguments fusion-fold-copies keeps (subviews).
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return isa<BlockArgument>(slice.getSource()) &&
           slice.getResultType().hasStaticShape() &&
           !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
           !ShapedType::isDynamicShape(slice.getStaticStrides());
  return isa<fusion::GroupOp, func::ReturnOp, tensor::EmptyOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) ||
         (op.hasTrait<OpTrait::ConstantLike>() &&
          !isa<ShapedType>(op.getResult(0).getType()));
}

namespace {
struct InlineGroupsPass : kfuse::impl::InlineGroupsBase<InlineGroupsPass> {
  using InlineGroupsBase::InlineGroupsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (Block &block : func.getBody())
      for (Operation &op : block)
        // (a fill left outside only initializes an unsupported op, and a
        // scalar left outside -- an element read from a tensor -- only feeds
        // one: report that op instead)
        if (!isHostOp(op) && !isFillLike(&op) && !isScalarComputation(&op)) {
          auto diag = op.emitError()
                      << "kfuse cannot generate code for '" << op.getName()
                      << "' yet: only elementwise linalg.generic ops "
                         "(inside fusion groups) are supported";
          if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
              linalgOp && linalgOp.getNumReductionLoops() > 0)
            diag << " (this one has reduction loops: a reduction, or a "
                    "contraction such as a generalized linalg.matmul)";
          return signalPassFailure();
        }

    SmallVector<fusion::GroupOp> groups;
    func.walk([&](fusion::GroupOp g) { groups.push_back(g); });
    // Booleans in memory are bytes: fusion-widen-bool-tensors (function
    // boundary) and fusion-widen-bool-results (between groups) make them i8.
    for (fusion::GroupOp group : groups)
      for (Type t : group.getResultTypes())
        if (cast<ShapedType>(t).getElementType().isInteger(1)) {
          group.emitError()
              << "kfuse cannot generate code for 'fusion.group' yet: group '"
              << group.getSymName()
              << "' would write a boolean tensor to memory for another group";
          return signalPassFailure();
        }
    for (fusion::GroupOp group : groups) {
      OpBuilder b(group);
      IRMapping mapping;
      for (auto [arg, in] :
           llvm::zip(group.getBodyBlock().getArguments(), group.getInputs()))
        mapping.map(arg, in);
      for (Operation &op : group.getBodyBlock().without_terminator()) {
        Operation *clone = b.clone(op, mapping);
        if (isa<linalg::GenericOp>(clone)) {
          clone->setAttr(kKernelAttr, group.getSymNameAttr());
          if (auto strategy = group.getStrategyAttr())
            clone->setAttr(kStrategyAttr, strategy);
        }
      }
      for (auto [result, yielded] :
           llvm::zip(group.getResults(), group.getYield().getValues()))
        result.replaceAllUsesWith(mapping.lookupOrDefault(yielded));
      group.erase();
    }
  }
};
} // namespace
