//===- SelectStrategy.cpp - choose a GPU strategy per fusion.group --------===//

#include "transforms/Passes.h"
#include "transforms/Utils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "fusion-select-strategy"

namespace kfuse {
#define GEN_PASS_DEF_SELECTSTRATEGY
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;
using namespace kfuse;

namespace {

/// The largest grid x-dimension CUDA allows.
constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;

struct SelectStrategyPass
    : kfuse::impl::SelectStrategyBase<SelectStrategyPass> {
  using SelectStrategyBase::SelectStrategyBase;

  void runOnOperation() override {
    FailureOr<int64_t> resolved = resolveSmCount(
        getOperation(), "fusion-select-strategy", chip, smCount);
    if (failed(resolved))
      return signalPassFailure();
    int64_t sms = *resolved;
    auto check = fusion::StrategyAttr::getChecked(
        [&] { return getOperation().emitError("fusion-select-strategy: "); },
        &getContext(), int64_t(threads), int64_t(1), int64_t(unroll),
        int64_t(1));
    if (!check)
      return signalPassFailure();

    // The strategy of a kernel over `space` that reads and writes tensors of
    // `types`, its inputs `inputs` (views among them move whole vectors only
    // where aligned).
    auto choose = [&](ArrayRef<int64_t> space, ArrayRef<Type> types,
                      ArrayRef<Value> inputs) {
      unsigned widestBits = 8;
      bool hasBool = false;
      for (Type t : types) {
        unsigned bits = cast<ShapedType>(t).getElementTypeBitWidth();
        hasBool |= bits == 1;
        widestBits = std::max(widestBits, bits);
      }
      int64_t inner = space.empty() ? 1 : space.back();
      int64_t numElements = 1;
      for (int64_t d : space)
        numElements *= d;
      // (an input that is a view, a slice of an argument, moves whole
      // vectors only where each of its rows starts on a vector boundary:
      // its offset and row strides multiples of the vector; else each lane
      // of a vector would be a load of its own, a request per lane)
      auto viewsAligned = [&](int64_t v) {
        for (Value in : inputs) {
          auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
          if (!slice)
            continue;
          if (ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
              ShapedType::isDynamicShape(slice.getStaticStrides()) ||
              !slice.getSourceType().hasStaticShape())
            return false;
          ArrayRef<int64_t> shape = slice.getSourceType().getShape();
          int64_t stride = 1, offset = 0;
          for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
            offset += slice.getStaticOffsets()[d] * stride;
            if (d + 1 < int64_t(shape.size()) &&
                slice.getStaticSizes()[d] > 1 &&
                (slice.getStaticStrides()[d] * stride) % v != 0)
              return false;
            stride *= shape[d];
          }
          if (offset % v != 0)
            return false;
        }
        return true;
      };
      int64_t vector = 1;
      if (!hasBool)
        for (int64_t v = std::min<int64_t>(8, 128 / widestBits); v > 1; v /= 2)
          if (inner % v == 0 && viewsAligned(v)) {
            vector = v;
            break;
          }
      int64_t perBlock = int64_t(threads) * vector;
      int64_t needed = (numElements + perBlock - 1) / perBlock;
      // One vector per thread over the whole space measured fastest on the
      // H100 (bench/RESULTS.md); a cap turns the kernel into a grid-stride
      // loop that keeps `unroll` vectors in flight per thread.
      int64_t cap = kMaxGridX;
      if (blocksPerSm > 0)
        cap = std::min<int64_t>(cap, sms * int64_t(blocksPerSm));
      int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(needed, cap));
      int64_t u = needed <= blocks ? 1 : int64_t(unroll);
      return fusion::StrategyAttr::get(&getContext(), int64_t(threads),
                                       vector, u, blocks);
    };
    bool changed = false;
    getOperation().walk([&](fusion::GroupOp group) {
      if (group.getStrategy() || group.getKind() != "elementwise")
        return;
      changed = true;
      SmallVector<linalg::GenericOp> generics;
      for (Operation &op : group.getBodyBlock())
        if (auto g = dyn_cast<linalg::GenericOp>(op))
          generics.push_back(g);
      if (generics.size() <= 1) {
        // The iteration space is the generic's loops (or, with none, the
        // shape of the group's results; a group may also yield one of its
        // inputs as it is, of another shape).
        SmallVector<int64_t> space;
        SmallVector<Type> types(group.getInputs().getTypes());
        for (Type t : group.getResultTypes()) {
          types.push_back(t);
          space = llvm::to_vector(cast<ShapedType>(t).getShape());
        }
        if (generics.size() == 1)
          space = generics.front().getStaticLoopRanges();
        group.setStrategyAttr(
            choose(space, types, SmallVector<Value>(group.getInputs())));
        return;
      }
      // A multi-tensor group (independent generics over different loops,
      // see fusion-form-groups): a strategy for each, over its own space;
      // the launch's blocks are theirs end to end, of `threads` each.
      for (linalg::GenericOp g : generics) {
        SmallVector<Type> types;
        SmallVector<Value> inputs;
        for (Value v : g->getOperands()) {
          if (!isa<ShapedType>(v.getType()))
            continue;
          types.push_back(v.getType());
          if (auto arg = dyn_cast<BlockArgument>(v);
              arg && arg.getOwner() == &group.getBodyBlock())
            inputs.push_back(group.getInputs()[arg.getArgNumber()]);
        }
        g->setAttr(kStrategyAttr,
                   choose(g.getStaticLoopRanges(), types, inputs));
      }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
