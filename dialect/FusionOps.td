//===- FusionOps.td - operations of the fusion dialect -----*- tablegen -*-===//

#ifndef KFUSE_FUSION_OPS_TD
#define KFUSE_FUSION_OPS_TD

include "FusionDialect.td"
include "FusionAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Fusion_GroupOp : Fusion_Op<"group", [
    IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "Tensor operations that run together as one kernel.";
  let description = [{
    `fusion.group` holds the operations of one kernel. Its region is isolated
    from above: everything the kernel reads comes in through `ins`, whose
    values become the block arguments, and everything it produces leaves
    through `fusion.yield`, whose operands become the group's results. Values
    used only inside the group (the intermediates of a fused chain) never
    reach memory.

    `kind` names the kind of kernel: `elementwise` (one iteration space,
    all loops parallel) or `reduction` (row reductions over trailing
    dimensions with their elementwise producers and row epilogues) or
    `contraction` (a matmul, convolution or other reduction that reads its
    inputs many times, with elementwise epilogues over its output).
    `name` is the kernel's name in reports and in the generated code.
    `decisions` (optional) records, as sentences, why the planner recomputed
    or materialized values at this group's boundary. `strategy` (optional) is
    the code-generation strategy chosen for the group.

    ```mlir
    %r = fusion.group "g0" elementwise ins(%x : tensor<1024xf32>) {
    ^bb0(%a: tensor<1024xf32>):
      %e = tensor.empty() : tensor<1024xf32>
      %0 = linalg.generic ... ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {...}
      fusion.yield %0 : tensor<1024xf32>
    } -> tensor<1024xf32>
    ```

    The verifier rejects a group whose block arguments do not match `ins` in
    number and type, whose `fusion.yield` does not match the results, whose
    inputs or results are not ranked tensors of static shape, or whose kind
    is unknown.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$sym_name,
                       StrAttr:$kind, OptionalAttr<StrArrayAttr>:$decisions,
                       OptionalAttr<Fusion_StrategyAttr>:$strategy);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    attr-dict-with-keyword $body (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getYield();
  }];
}

def Fusion_YieldOp : Fusion_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"GroupOp">]> {
  let summary = "Returns the results of a fusion.group.";
  let description = [{
    Terminates the region of a `fusion.group`; its operands become the
    group's results, in order and with the same types.

    ```mlir
    fusion.yield %0, %1 : tensor<8xf32>, tensor<8xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* empty yield */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Fusion_GuardOp : Fusion_Op<"guard", [
    Pure, Elementwise, AllTypesMatch<["value", "result"]>]> {
  let summary = "A value that is only defined where a condition holds.";
  let description = [{
    `fusion.guard` forwards `value` and records that it is meaningful only
    where `ok` is true: `value` was read at an index that `ok` says was in
    bounds (fusion-guard-gathers puts one after every `tensor.extract`
    whose indices the compiler cannot prove in range, reading at a clamped
    index instead). It computes nothing, so it is pure and elementwise:
    fusion, recomputation and vectorization carry it like any other body op
    (on vectors, `ok` is a vector of the same shape).

    `index` (optional, i64 or a vector of i64 of `ok`'s shape) is the
    index that was out of range where `ok` is false, for the error message.

    fusion-lower-guards, after code generation, gives each distinct
    `message` two i64 words of the module's status buffer (`@kfuse_status`)
    and makes the guard, wherever `ok` is false, a store of 1 into the
    first and of `index` into the second; the runtime reads the buffer
    after a call and raises an error quoting the message of each guard
    whose first word is set, with one of the indices that failed.

    ```mlir
    %v = fusion.guard %e if %ok, "index out of range" : f32, i1
    %w = fusion.guard %e if %ok, "index out of range" index %i : f32, i1, i64
    ```

    A guard whose `ok` is the constant true folds away.
  }];
  let arguments = (ins BoolLike:$ok, AnyType:$value, StrAttr:$message,
                       Optional<AnyType>:$index);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $value `if` $ok `,` $message (`index` $index^)? attr-dict `:` type($value)
    `,` type($ok) (`,` type($index)^)?
  }];
  let hasFolder = 1;
  let hasVerifier = 1;
}

#endif // KFUSE_FUSION_OPS_TD
