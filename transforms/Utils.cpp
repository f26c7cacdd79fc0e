//===- Utils.cpp - helpers shared by kfuse passes -------------------------===//

#include "transforms/Utils.h"
#include "dialect/FusionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>

using namespace mlir;

/// A tensor.extract in the body of `generic` that reads a tensor of static
/// shape defined outside it: a gather (fusion-pad-to-generic makes these).
static bool isGatherRead(Operation &inner, linalg::GenericOp generic) {
  auto extract = dyn_cast<tensor::ExtractOp>(inner);
  return extract && extract.getTensor().getType().hasStaticShape() &&
         !generic->isAncestor(
             extract.getTensor().getParentBlock()->getParentOp());
}

bool kfuse::hasGatherReads(linalg::GenericOp generic) {
  return llvm::any_of(generic.getBody()->getOperations(), [&](Operation &op) {
    return isa<tensor::ExtractOp>(op);
  });
}

/// Static tensor semantics and a body of elementwise ops (and gathers).
static bool hasFusibleShapeAndBody(linalg::GenericOp generic) {
  if (!generic.hasPureTensorSemantics())
    return false;
  for (Type t : generic->getResultTypes())
    if (!cast<ShapedType>(t).hasStaticShape())
      return false;
  for (Operation &inner : generic.getBody()->getOperations()) {
    if (isa<linalg::YieldOp, linalg::IndexOp, arith::ConstantOp>(inner) ||
        isGatherRead(inner, generic))
      continue;
    if (!inner.hasTrait<OpTrait::Elementwise>() || inner.getNumRegions() != 0)
      return false;
  }
  return true;
}

bool kfuse::isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops() &&
         hasFusibleShapeAndBody(generic);
}

/// True if some input the generic reduces over is not indexed by all its
/// parallel loops, so each input element feeds many outputs.
static bool reusesInputsAcrossRows(linalg::GenericOp generic) {
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (!isa<ShapedType>(input->get().getType()))
      continue;
    AffineMap map = generic.getMatchingIndexingMap(input);
    bool reduced = false, allRows = true;
    for (unsigned d = 0; d < generic.getNumLoops(); ++d) {
      bool uses = map.isFunctionOfDim(d);
      if (iters[d] == utils::IteratorType::parallel)
        allRows &= uses;
      else
        reduced |= uses;
    }
    if (reduced && !allRows)
      return true;
  }
  return false;
}

bool kfuse::needsContractionKernel(linalg::GenericOp generic) {
  if (!reusesInputsAcrossRows(generic))
    return false;
  // A matrix-vector product streams one input (indexed by every loop: each
  // element read once), which its reused inputs are smaller than by the
  // extents of the rows they are broadcast along.
  bool streams = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (!isa<ShapedType>(input->get().getType()))
      continue;
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return true; // (a window: a convolution)
    streams |= map.getNumResults() == generic.getNumLoops();
  }
  return !streams;
}

bool kfuse::isLeadingLoopsMap(AffineMap map, unsigned n) {
  if (map.getNumResults() != n)
    return false;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() != i)
      return false;
  }
  return true;
}

SmallVector<int64_t> kfuse::parallelExtents(linalg::GenericOp generic) {
  SmallVector<int64_t> extents;
  for (auto [range, it] : llvm::zip(generic.getStaticLoopRanges(),
                                    generic.getIteratorTypesArray()))
    if (it == utils::IteratorType::parallel)
      extents.push_back(range);
  return extents;
}

/// The tensors a generic reads and writes, with the maps it uses for them.
static SmallVector<std::pair<Value, AffineMap>>
accessesOf(linalg::GenericOp g) {
  SmallVector<std::pair<Value, AffineMap>> accesses;
  for (OpOperand *in : g.getDpsInputOperands())
    if (isa<ShapedType>(in->get().getType()))
      accesses.push_back({in->get(), g.getMatchingIndexingMap(in)});
  for (OpResult r : g->getResults())
    accesses.push_back({r, g.getIndexingMapMatchingResult(r)});
  return accesses;
}

llvm::DenseMap<Operation *, SmallVector<unsigned>>
kfuse::alignToRowSpace(
    ArrayRef<Operation *> ops, ArrayRef<int64_t> full, unsigned numRows,
    llvm::function_ref<SmallVector<int64_t>(Operation *)> loopsOf) {
  auto loopsOfOp = [&](linalg::GenericOp g) {
    return loopsOf ? loopsOf(g) : g.getStaticLoopRanges();
  };
  llvm::DenseMap<Operation *, SmallVector<unsigned>> placed;
  SmallVector<linalg::GenericOp> candidates;
  llvm::DenseSet<Operation *> rowValued; // ops whose results are row values
  ArrayRef<int64_t> rows = full.take_front(numRows);
  for (Operation *op : ops) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g)
      continue;
    SmallVector<int64_t> loops = loopsOfOp(g);
    if (g.getNumReductionLoops() > 0 || ArrayRef<int64_t>(loops) == rows)
      rowValued.insert(op);
    if (ArrayRef<int64_t>(loops) == full)
      placed[op] = llvm::to_vector(llvm::seq<unsigned>(0, full.size()));
    else if (isElementwiseGeneric(op) && loops.size() == full.size() &&
             std::is_permutation(loops.begin(), loops.end(), full.begin()))
      candidates.push_back(g);
  }
  // Extents match, and row values are read along the rows, in order.
  auto fits = [&](linalg::GenericOp g, ArrayRef<unsigned> order) {
    for (auto [j, range] : llvm::enumerate(loopsOfOp(g)))
      if (range != full[order[j]])
        return false;
    for (OpOperand *in : g.getDpsInputOperands()) {
      Operation *def = in->get().getDefiningOp();
      if (!def || !rowValued.contains(def) || !llvm::is_contained(ops, def))
        continue;
      AffineMap map = g.getMatchingIndexingMap(in);
      if (map.getNumResults() != numRows)
        return false;
      for (auto [k, e] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (!dim || order[dim.getPosition()] != k)
          return false;
      }
    }
    return true;
  };
  llvm::DenseSet<Operation *> anchors;
  for (auto &entry : placed)
    anchors.insert(entry.first);
  for (bool changed = true; changed;) {
    changed = false;
    for (linalg::GenericOp g : candidates) {
      if (placed.contains(g))
        continue;
      for (auto [value, map] : accessesOf(g)) {
        if (!map.isPermutation())
          continue;
        std::optional<SmallVector<unsigned>> found;
        for (Operation *op : ops) {
          auto it = placed.find(op);
          if (it == placed.end() || found)
            continue;
          for (auto [other, otherMap] :
               accessesOf(cast<linalg::GenericOp>(op))) {
            if (other != value || !otherMap.isPermutation())
              continue;
            // Tensor dimension k is g's loop map[k] and the placed op's
            // loop otherMap[k].
            SmallVector<unsigned> order(full.size());
            for (unsigned k = 0; k < map.getNumResults(); ++k)
              order[map.getDimPosition(k)] =
                  it->second[otherMap.getDimPosition(k)];
            if (fits(g, order)) {
              found = order;
              break;
            }
          }
        }
        if (found) {
          placed[g] = *found;
          changed = true;
          break;
        }
      }
    }
  }
  // (order[j] is the full-space loop of loop j; new loop i is old loop v[i])
  llvm::DenseMap<Operation *, SmallVector<unsigned>> interchanges;
  for (auto &[op, order] : placed) {
    if (anchors.contains(op))
      continue;
    SmallVector<unsigned> v(order.size());
    for (auto [j, i] : llvm::enumerate(order))
      v[i] = j;
    interchanges[op] = std::move(v);
  }
  return interchanges;
}

bool kfuse::reductionsTrail(linalg::GenericOp generic) {
  unsigned rows = generic.getNumParallelLoops();
  for (auto [i, it] : llvm::enumerate(generic.getIteratorTypesArray()))
    if ((i < rows) != (it == utils::IteratorType::parallel))
      return false;
  return true;
}

bool kfuse::fromReduction(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty() && seen.size() < 16) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      work.push_back(def->getOperand(0));
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(def);
    if (!g)
      continue;
    if (g.getNumReductionLoops() > 0)
      return true;
    for (Value in : g.getDpsInputs())
      if (isa<RankedTensorType>(in.getType()))
        work.push_back(in);
  }
  return false;
}

bool kfuse::isRowReductionGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() == 0 ||
      !hasFusibleShapeAndBody(generic))
    return false;
  if (!reductionsTrail(generic))
    return false;
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return false;
  // An input that is reduced over must be indexed by every row loop too,
  // or be a small vector beside a streamed input (a matrix-vector product);
  // otherwise its elements are reused across rows: a contraction (matmul,
  // convolution), grouped only with its epilogues (isContractionGeneric).
  return !needsContractionKernel(generic);
}

bool kfuse::reducesLeadingAxes(linalg::GenericOp generic) {
  if (generic.getNumReductionLoops() == 0)
    return false;
  bool any = false;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    if (map.getNumResults() == 0 ||
        map.getNumResults() != generic.getNumLoops() || !map.isPermutation())
      continue;
    unsigned last = cast<AffineDimExpr>(map.getResults().back()).getPosition();
    if (generic.getIteratorTypesArray()[last] != utils::IteratorType::parallel)
      return false;
    any = true;
  }
  return any;
}

bool kfuse::isColumnReduction(Operation *op) {
  return isRowReductionGeneric(op) &&
         reducesLeadingAxes(cast<linalg::GenericOp>(op));
}

bool kfuse::isReductionAlongRows(Operation *op) {
  return isRowReductionGeneric(op) && !isColumnReduction(op);
}

bool kfuse::isContractionGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() == 0 ||
      generic.getNumDpsInits() != 1 || isRowReductionGeneric(op) ||
      !hasFusibleShapeAndBody(generic))
    return false;
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() ||
      out.getNumResults() != generic.getNumParallelLoops())
    return false;
  for (AffineExpr e : out.getResults())
    if (generic.getIteratorTypesArray()[cast<AffineDimExpr>(e).getPosition()] !=
        utils::IteratorType::parallel)
      return false;
  return true;
}

bool kfuse::isFusibleGeneric(Operation *op) {
  return isElementwiseGeneric(op) || isRowReductionGeneric(op) ||
         isContractionGeneric(op);
}

bool kfuse::isFillLike(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && isElementwiseGeneric(op) && !hasGatherReads(generic) &&
         llvm::none_of(generic.getDpsInputs(),
                       [](Value v) { return isa<ShapedType>(v.getType()); });
}

bool kfuse::isScalarComputation(Operation *op) {
  return op && op->getNumRegions() == 0 && op->getNumResults() > 0 &&
         isPure(op) && llvm::all_of(op->getResultTypes(), [](Type t) {
           return t.isIntOrIndexOrFloat();
         });
}

Operation *kfuse::accumulatorCombiner(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g->getNumResults() != 1)
    return nullptr;
  Value acc = g.getBody()->getArguments().back();
  Operation *op = g.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  if (!op || op->getBlock() != g.getBody() || op->getNumOperands() != 2 ||
      op->getNumResults() != 1 || !acc.hasOneUse() ||
      (op->getOperand(0) != acc) == (op->getOperand(1) != acc) ||
      !arith::getNeutralElement(op))
    return nullptr;
  return op;
}

linalg::GenericOp kfuse::fillGeneric(OpBuilder &b, Location loc, Value scalar,
                                     Value dest) {
  auto type = cast<ShapedType>(dest.getType());
  unsigned rank = type.getRank();
  return linalg::GenericOp::create(
      b, loc, isa<RankedTensorType>(type) ? TypeRange{type} : TypeRange{},
      ValueRange{scalar}, ValueRange{dest},
      ArrayRef<AffineMap>{AffineMap::get(rank, 0, {}, b.getContext()),
                          b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, args[0]);
      });
}

/// One body op of cloneBodyOnVectors.
static FailureOr<SmallVector<Value>>
cloneOnVectors(OpBuilder &b, Location loc, Operation &op, int64_t width,
               function_ref<Value(Value)> lookup,
               function_ref<std::pair<Value, bool>(unsigned)> index,
               Value live) {
  auto vectorOf = [&](Type t) -> Type {
    return width == 1 ? t : VectorType::get({width}, t);
  };
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = cst.getValue();
    if (width > 1)
      value = DenseElementsAttr::get(cast<ShapedType>(vectorOf(cst.getType())),
                                     value);
    return SmallVector<Value>{
        arith::ConstantOp::create(b, loc, cast<TypedAttr>(value))};
  }
  if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
    auto [i, innermost] = index(idx.getDim());
    if (width == 1)
      return SmallVector<Value>{i};
    Value v =
        vector::BroadcastOp::create(b, loc, vectorOf(b.getIndexType()), i);
    if (innermost)
      v = arith::AddIOp::create(
          b, loc, v,
          vector::StepOp::create(b, loc,
                                 cast<VectorType>(vectorOf(b.getIndexType()))));
    return SmallVector<Value>{v};
  }
  if (auto gather = dyn_cast<memref::LoadOp>(op)) {
    // A gather (a bufferized tensor.extract): the buffer is used as is, one
    // scalar load per lane.
    Value memref = gather.getMemRef();
    SmallVector<Value> indices;
    for (Value i : gather.getIndices())
      indices.push_back(lookup(i));
    if (width == 1)
      return SmallVector<Value>{
          memref::LoadOp::create(b, loc, memref, indices)};
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane) {
      SmallVector<Value> at;
      for (Value i : indices)
        at.push_back(vector::ExtractOp::create(b, loc, i, lane));
      lanes.push_back(memref::LoadOp::create(b, loc, memref, at));
    }
    return SmallVector<Value>{vector::FromElementsOp::create(
        b, loc, cast<VectorType>(vectorOf(gather.getType())), lanes)};
  }
  if (auto guard = dyn_cast<kfuse::fusion::GuardOp>(op); guard && live) {
    // (a lane the caller drops: its guard holds)
    Value ok = lookup(guard.getOk());
    Value keep = live;
    if (isa<VectorType>(keep.getType()) && !isa<VectorType>(ok.getType()))
      keep = vector::ReductionOp::create(b, loc, vector::CombiningKind::OR,
                                         keep);
    else if (!isa<VectorType>(keep.getType()) && isa<VectorType>(ok.getType()))
      keep = vector::BroadcastOp::create(b, loc, ok.getType(), keep);
    Value ones = arith::ConstantOp::create(b, loc, b.getOneAttr(ok.getType()));
    Value dropped = arith::XOrIOp::create(b, loc, keep, ones);
    ok = arith::OrIOp::create(b, loc, ok, dropped);
    Value value = lookup(guard.getValue());
    Value index = guard.getIndex() ? lookup(guard.getIndex()) : Value();
    return SmallVector<Value>{kfuse::fusion::GuardOp::create(
        b, loc, value.getType(), ok, value, guard.getMessage(), index)};
  }
  if (!op.hasTrait<OpTrait::Elementwise>() || op.getNumRegions() != 0)
    return failure();
  OperationState state(loc, op.getName());
  for (Value v : op.getOperands())
    state.addOperands(lookup(v));
  for (Type t : op.getResultTypes())
    state.addTypes(vectorOf(t));
  state.addAttributes(op.getAttrs());
  return SmallVector<Value>(b.create(state)->getResults());
}

SmallVector<Value> kfuse::delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<int64_t> shape) {
  SmallVector<Value> idx(shape.size());
  Value rest = linear;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (d == 0) {
      idx[d] = rest;
      break;
    }
    Value extent = arith::ConstantIndexOp::create(b, loc, shape[d]);
    idx[d] = arith::RemUIOp::create(b, loc, rest, extent);
    rest = arith::DivUIOp::create(b, loc, rest, extent);
  }
  return idx;
}

FailureOr<SmallVector<Value>>
kfuse::cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body,
                          IRMapping &mapping, int64_t width,
                          function_ref<std::pair<Value, bool>(unsigned)> index,
                          Operation **failedOp, Value live) {
  auto lookup = [&](Value v) -> Value {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    if (width == 1)
      return v;
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({width}, v.getType()), v);
  };
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 0 &&
        llvm::all_of(op.getResults(),
                     [&](Value r) { return mapping.contains(r); }))
      continue; // (the caller's replacement)
    auto cloned = cloneOnVectors(b, loc, op, width, lookup, index, live);
    if (failed(cloned)) {
      *failedOp = &op;
      return failure();
    }
    for (auto [oldR, newR] : llvm::zip(op.getResults(), *cloned))
      mapping.map(oldR, newR);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(lookup(v));
  return results;
}

int64_t kfuse::bytesOf(Value value) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  int64_t bits = shaped.getElementTypeBitWidth();
  return shaped.getNumElements() * ((bits + 7) / 8);
}

std::optional<unsigned> kfuse::chipVersion(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  StringRef digits = chip.take_while(llvm::isDigit);
  StringRef suffix = chip.drop_front(digits.size());
  unsigned version = 0;
  if (digits.empty() || digits.getAsInteger(10, version) || suffix.size() > 1 ||
      (suffix.size() == 1 && !llvm::isLower(suffix[0])))
    return std::nullopt;
  return version;
}

int64_t kfuse::resolveSmCount(StringRef chip, int64_t smCount) {
  if (smCount > 0)
    return smCount;
  return llvm::StringSwitch<int64_t>(chip)
      .Case("sm_80", 108)
      .Case("sm_86", 84)
      .Case("sm_89", 128)
      .Cases({"sm_90", "sm_90a"}, 132)
      .Default(0);
}

FailureOr<int64_t> kfuse::resolveSmCount(Operation *op, StringRef pass,
                                         StringRef chip, int64_t smCount) {
  int64_t sms = resolveSmCount(chip, smCount);
  if (sms > 0)
    return sms;
  return op->emitError() << pass << ": unknown chip '" << chip
                         << "' (known: sm_80, sm_86, sm_89, sm_90); pass "
                            "sm-count= to use another";
}

Value kfuse::filledWith(Value init) {
  auto fill = init.getDefiningOp<linalg::GenericOp>();
  if (!fill || !isFillLike(fill) || fill.getNumDpsInputs() != 1 ||
      fill.getBody()->getTerminator()->getOperand(0) !=
          fill.getBody()->getArgument(0))
    return Value();
  return fill.getDpsInputs()[0];
}

bool kfuse::keepsLoopRanges(linalg::GenericOp reader,
                            ArrayRef<Value> operands,
                            ArrayRef<AffineMap> maps) {
  SmallVector<int64_t> loops = reader.getStaticLoopRanges();
  SmallVector<bool> covered(loops.size(), false);
  for (auto [v, map] : llvm::zip(operands, maps)) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      continue;
    for (auto [pos, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        if (type.getDimSize(pos) != loops[dim.getPosition()])
          return false;
        covered[dim.getPosition()] = true;
      }
  }
  return !llvm::is_contained(covered, false);
}

bool kfuse::stillCoveredWithout(linalg::GenericOp reader,
                                OpOperand *dropped) {
  SmallVector<Value> operands(reader->getOperands());
  SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
  operands.erase(operands.begin() + dropped->getOperandNumber());
  maps.erase(maps.begin() + dropped->getOperandNumber());
  return keepsLoopRanges(reader, operands, maps);
}

linalg::GenericOp kfuse::withInputs(PatternRewriter &rewriter,
                                    linalg::GenericOp g, ValueRange inputs,
                                    ArrayRef<AffineMap> maps) {
  SmallVector<AffineMap> all(maps);
  for (OpOperand &init : g.getDpsInitsMutable())
    all.push_back(g.getMatchingIndexingMap(&init));
  auto fused = linalg::GenericOp::create(
      rewriter, g.getLoc(), g.getResultTypes(), inputs, g.getDpsInits(), all,
      g.getIteratorTypesArray());
  fused->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(g.getRegion(), fused.getRegion(),
                              fused.getRegion().begin());
  return fused;
}

std::pair<SmallVector<Value>, SmallVector<AffineMap>>
kfuse::inputsBut(linalg::GenericOp reader, OpOperand *input) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *o : reader.getDpsInputOperands())
    if (o != input) {
      inputs.push_back(o->get());
      maps.push_back(reader.getMatchingIndexingMap(o));
    }
  return {inputs, maps};
}

void kfuse::withoutInput(PatternRewriter &rewriter, linalg::GenericOp reader,
                         OpOperand *input,
                         function_ref<Value(Block *body)> element) {
  unsigned argNo = input->getOperandNumber();
  auto [inputs, maps] = inputsBut(reader, input);
  linalg::GenericOp fused = withInputs(rewriter, reader, inputs, maps);
  Block *body = fused.getBody();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(body);
  Value value = element(body);
  rewriter.replaceAllUsesWith(body->getArgument(argNo), value);
  body->eraseArgument(argNo);
  rewriter.replaceOp(reader, fused.getResults());
}

LogicalResult
kfuse::applyPatternsWithBudget(Operation *op,
                               const FrozenRewritePatternSet &patterns,
                               bool topDown, bool *changed) {
  int64_t ops = 0;
  op->walk([&](Operation *) { ++ops; });
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(std::max<int64_t>(10000, 200 * ops));
  config.setUseTopDownTraversal(topDown);
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return applyPatternsGreedily(op, patterns, config, changed);
}

Value kfuse::viewRoot(Value v) {
  // (memref.extract_strided_metadata is a view too: its base buffer)
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

static bool isLoad(Operation *op) {
  return isa<memref::LoadOp, vector::LoadOp, vector::MaskedLoadOp>(op);
}

llvm::DenseSet<Value> kfuse::writtenBuffers(Operation *root) {
  llvm::DenseSet<Value> written;
  root->walk([&](Operation *op) {
    if (isLoad(op) || isa<ViewLikeOpInterface>(op))
      return;
    for (Value v : op->getOperands())
      if (isa<BaseMemRefType>(v.getType()))
        written.insert(kfuse::viewRoot(v));
  });
  return written;
}

/// Whether `buffer` (a view root) is global memory defined outside `root`
/// that nothing in `root` writes.
static bool readOnlyIn(Operation *root, Value buffer,
                       const llvm::DenseSet<Value> &written) {
  Region *from = buffer.getParentRegion();
  return !written.contains(buffer) && from &&
         !root->isAncestor(from->getParentOp()) &&
         !isa_and_nonnull<gpu::AddressSpaceAttr>(
             cast<BaseMemRefType>(buffer.getType()).getMemorySpace());
}

void kfuse::hoistReadOnlyLoads(Operation *root) {
  Block &body = root->getRegion(0).front();
  auto first = llvm::find_if(
      body, [](Operation &op) { return isa<scf::ForOp, scf::WhileOp>(op); });
  if (first == body.end())
    return;
  Operation *loop = &*first;
  llvm::DenseSet<Value> written = writtenBuffers(root);
  SmallVector<memref::LoadOp> loads;
  for (Operation &op : llvm::make_range(std::next(first), body.end()))
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && readOnlyIn(root, kfuse::viewRoot(load.getMemRef()), written))
      loads.push_back(load);
  for (memref::LoadOp load : loads) {
    // The ops after the loop that compute its indices: pure, in this block.
    SetVector<Operation *> slice;
    bool movable = true, gathered = false;
    std::function<void(Value)> need = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<memref::LoadOp>(def))
        gathered = true;
      if (!movable || !def || def->getBlock() != &body ||
          def->isBeforeInBlock(loop) || slice.contains(def))
        return;
      if (def->getNumRegions() != 0 || !isPure(def)) {
        movable = false;
        return;
      }
      for (Value operand : def->getOperands())
        need(operand);
      slice.insert(def);
    };
    for (Value v : load->getOperands())
      need(v);
    // (loads at indices the loop ranges compute are left where they are:
    // nothing they wait for, and registers a loop may need)
    if (!movable || !gathered)
      continue;
    for (Operation *op : slice) // (operands first)
      op->moveBefore(loop);
    load->moveBefore(loop);
  }
}

void kfuse::reuseReadOnlyLoads(Operation *root) {
  llvm::DenseSet<Value> written = writtenBuffers(root);
  IRRewriter rewriter(root->getContext());
  {
    DominanceInfo dominance(root);
    eliminateCommonSubExpressions(rewriter, dominance, root);
  }
  DominanceInfo dominance(root);
  llvm::DenseMap<llvm::hash_code, SmallVector<Operation *, 2>> seen;
  SmallVector<Operation *> dead;
  bool merged = false;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isLoad(op))
      return;
    if (!readOnlyIn(root, viewRoot(op->getOperand(0)), written))
      return;
    llvm::hash_code key = OperationEquivalence::computeHash(
        op, OperationEquivalence::directHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
    auto &earlier = seen[key];
    for (Operation *e : earlier)
      if (OperationEquivalence::isEquivalentTo(
              e, op, OperationEquivalence::exactValueMatch, nullptr,
              OperationEquivalence::IgnoreLocations) &&
          dominance.properlyDominates(e, op)) {
        rewriter.replaceAllOpUsesWith(op, e->getResults());
        dead.push_back(op);
        merged = true;
        return;
      }
    earlier.push_back(op);
  });
  for (Operation *op : dead)
    rewriter.eraseOp(op);
  if (merged) {
    DominanceInfo after(root);
    eliminateCommonSubExpressions(rewriter, after, root);
  }
}

bool kfuse::hasStaticStrides(MemRefType type, bool unitInnermost) {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic) &&
         (!unitInnermost || strides.empty() || strides.back() == 1);
}

void kfuse::addGridControl(gpu::GPUFuncOp func, NVVM::GridDepActionKind kind) {
  Block &entry = func.getBody().front();
  auto it = entry.begin();
  for (; it != entry.end(); ++it) {
    auto c = dyn_cast<NVVM::GriddepcontrolOp>(*it);
    if (!c)
      break;
    if (c.getKind() == kind)
      return;
  }
  if (kind == NVVM::GridDepActionKind::wait)
    it = entry.begin();
  OpBuilder b(&entry, it);
  NVVM::GriddepcontrolOp::create(b, func.getLoc(), kind);
}
