//===- BoolBytes.cpp - boolean buffers hold one byte per element ----------===//
//
// A group may keep a boolean tensor between its loop nests or kernels
// (torch's safe softmax reduces "is every score of the row masked?" with
// andi; on CUDA an ordered kernel of the group may read it back), which
// bufferizes to a memref of i1. The LLVM lowering cannot load or store i1
// memory, so such buffers hold bytes, like booleans everywhere else in kfuse:
// the buffer (and every view of it) becomes i8, stores (memref and vector)
// write `extui` of the value and loads read `trunci` of the bytes. Both
// targets' codegen pipelines run it (CUDA's before outlining, on the
// gpu.launch bodies).
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#define DEBUG_TYPE "fusion-bool-bytes"

namespace kfuse {
#define GEN_PASS_DEF_BOOLBYTES
#include "transforms/Passes.h.inc"
} // namespace kfuse

using namespace mlir;

namespace {

bool isBoolMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && m.getElementType().isInteger(1);
}

struct BoolBytesPass : kfuse::impl::BoolBytesBase<BoolBytesPass> {
  void runOnOperation() override {
    // Every i1 buffer allocated here, and the views of it.
    SmallVector<Value> values;
    getOperation()->walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp>(op) &&
          isBoolMemRef(op->getResult(0).getType()))
        values.push_back(op->getResult(0));
    });
    if (values.empty())
      return markAllAnalysesPreserved();
    SmallVector<Operation *> accesses;
    for (size_t i = 0; i < values.size(); ++i) {
      for (Operation *user : values[i].getUsers()) {
        if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp,
                memref::SubViewOp, memref::CastOp>(user)) {
          if (!llvm::is_contained(values, user->getResult(0)))
            values.push_back(user->getResult(0));
          continue;
        }
        if (isa<memref::LoadOp, memref::StoreOp, vector::LoadOp,
                vector::StoreOp>(user)) {
          if (!llvm::is_contained(accesses, user))
            accesses.push_back(user);
          continue;
        }
        if (isa<memref::DeallocOp, memref::CopyOp>(user))
          continue;
        user->emitError() << "kfuse cannot generate code for '"
                          << user->getName()
                          << "' on a buffer of booleans (i1) yet";
        return signalPassFailure();
      }
    }
    // (copies only between buffers that all become bytes)
    for (Value v : values)
      for (Operation *user : v.getUsers())
        if (auto copy = dyn_cast<memref::CopyOp>(user);
            copy && !(llvm::is_contained(values, copy.getSource()) &&
                      llvm::is_contained(values, copy.getTarget()))) {
          copy.emitError() << "kfuse cannot generate code for 'memref.copy' "
                              "of a boolean (i1) buffer not allocated by the "
                              "program yet";
          return signalPassFailure();
        }
    OpBuilder b(&getContext());
    Type i8 = b.getI8Type();
    for (Value v : values) {
      auto type = cast<MemRefType>(v.getType());
      v.setType(MemRefType::get(type.getShape(), i8, type.getLayout(),
                                type.getMemorySpace()));
    }
    for (Operation *op : accesses) {
      b.setInsertionPoint(op);
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        Value byte = memref::LoadOp::create(b, load.getLoc(), load.getMemRef(),
                                            load.getIndices());
        Value bit =
            arith::TruncIOp::create(b, load.getLoc(), b.getI1Type(), byte);
        load.getResult().replaceAllUsesWith(bit);
        load.erase();
        continue;
      }
      if (auto load = dyn_cast<vector::LoadOp>(op)) {
        auto bits = load.getVectorType();
        Value bytes = vector::LoadOp::create(
            b, load.getLoc(), VectorType::get(bits.getShape(), i8),
            load.getBase(), load.getIndices());
        Value bit = arith::TruncIOp::create(b, load.getLoc(), bits, bytes);
        load.getResult().replaceAllUsesWith(bit);
        load.erase();
        continue;
      }
      if (auto store = dyn_cast<vector::StoreOp>(op)) {
        auto bits = store.getVectorType();
        store.getValueToStoreMutable().assign(arith::ExtUIOp::create(
            b, store.getLoc(), VectorType::get(bits.getShape(), i8),
            store.getValueToStore()));
        continue;
      }
      auto store = cast<memref::StoreOp>(op);
      store.getValueMutable().assign(arith::ExtUIOp::create(
          b, store.getLoc(), i8, store.getValueToStore()));
    }
  }
};
} // namespace
