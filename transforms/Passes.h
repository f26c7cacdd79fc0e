//===- Passes.h - kfuse passes and pipelines --------------------*- C++ -*-===//

#ifndef KFUSE_TRANSFORMS_PASSES_H
#define KFUSE_TRANSFORMS_PASSES_H

#include "dialect/FusionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kfuse {

#define GEN_PASS_DECL
#include "transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "transforms/Passes.h.inc"

/// Attribute names shared by the code-generation passes.
inline constexpr llvm::StringLiteral kKernelAttr = "fusion.kernel";
inline constexpr llvm::StringLiteral kStrategyAttr = "fusion.strategy";
/// A temporary (memref.alloc) of u32 counters that must be zero when a
/// kernel reading it starts and that the kernel leaves zero (the count of a
/// split row's blocks whose last finishes the row): the runtime keeps one
/// per device and stream, zeroed once, instead of a temporary per call.
inline constexpr llvm::StringLiteral kCounterAttr = "kfuse.counter";
/// User directive on an op: its results go to memory; no consumer fuses it.
inline constexpr llvm::StringLiteral kMaterializeAttr = "fusion.materialize";
/// A planning pass's account of a rewrite it made to an op (a string),
/// reported by fusion-form-groups among the decisions of the op's group.
inline constexpr llvm::StringLiteral kNoteAttr = "fusion.note";
/// On a GPU kernel's `math.exp`: a result below 2^-126 may be 0 (the row
/// emitter marks the terms exp(e - m) of an online sum and its rescales,
/// sums that are at least 1, where such a term is lost in the rounding
/// anyway). fusion-fast-exp then uses `ex2.approx.ftz.f32`: one SASS
/// instruction, where keeping subnormal results takes a range test and two
/// predicated multiplies around it.
inline constexpr llvm::StringLiteral kFlushSubnormals = "kfuse.ftz";

/// A gather (tensor.extract in a generic body) of the only use of an
/// elementwise producer evaluates the producer there (Normalize.cpp); the
/// group-body fusion uses it too.
void populateGatherThroughProducerPatterns(mlir::RewritePatternSet &patterns);

/// The rewrites of fusion-fold-copies that analyse where gathers read and
/// make gathers at loop-computed positions inputs (GatherIndices.cpp).
void populateGatherIndexPatterns(mlir::RewritePatternSet &patterns);

/// Registers the fusion dialect (and what its passes need) in `registry`.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers kfuse's passes and its named pipelines (Pipelines.cpp).
void registerAllPassesAndPipelines();

} // namespace kfuse

#endif // KFUSE_TRANSFORMS_PASSES_H
