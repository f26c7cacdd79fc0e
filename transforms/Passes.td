//===- Passes.td - kfuse passes -----------------------------*- tablegen -*-===//

#ifndef KFUSE_TRANSFORMS_PASSES_TD
#define KFUSE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion planning
//===----------------------------------------------------------------------===//

def FormFusionGroups : Pass<"fusion-form-groups", "::mlir::func::FuncOp"> {
  let summary = "Groups elementwise producer-consumer chains into fusion.group ops";
  let description = [{
    Every elementwise `linalg.generic` (all loops parallel, tensor operands)
    ends up in exactly one `fusion.group`. A producer and a consumer share a
    group when upstream elementwise fusion can merge them
    (`linalg::areElementwiseOpsFusable`) and merging creates no cycle through
    an operation outside the group. Other operations stay outside and end
    fusion.

    Row reductions group with the ops over their rows or rows x columns
    (epilogues broadcasting a row value, producers). An elementwise op over
    another space joins only inlined into such ops (its every reader in the
    group), reading row values at the rows they were written for: group
    norm's per-(n, g, k) scale, inlined into the epilogue over
    (n, g, k, p). Producers are merged into consumers in program order;
    edges refused because the merged group would not run over one row
    space, or because a producer over another space was also read outside
    the merged group, are tried again once their consumers' groups have
    grown.

    Contractions (matmuls, convolutions) take elementwise epilogues over
    their output space. Of their input producers only one read by that
    contraction alone, of at most four arith ops on one input read through
    all its loops (broadcasts and scalars besides), joins: it is computed
    where the contraction reads it (attention's scaled q and k).

    Independent elementwise groups over different spaces, with no path
    between them through other ops or groups, become one group
    (multi-tensor fusion, `multi-tensor`, on by default; up to 16 spaces):
    its generics stay apart and share one launch, each over blocks of its
    own (an optimizer's update of each parameter).

    No merge makes a group whose kernel is passed more than `max-buffers`
    buffers (default 512: 4 KB of kernel parameters, 8 bytes a pointer):
    the tensors it reads from outside (values cloned into groups aside) and
    its results read outside it. An optimizer's step over thousands of
    tensors runs in several launches, as multi-tensor kernels elsewhere
    chunk their tensor lists; a refused producer edge says why in the
    report.

    A producer whose value is also needed by another group is either
    materialized (yielded once, read back by the other group) or recomputed
    inside the other group. The cost model counts HBM bytes: materializing
    costs a write (unless the value must be written anyway) plus a read;
    recomputing costs reading the producer's inputs that the other group does
    not already read. The cheaper side wins, ties materialize (no extra
    arithmetic). Only producers whose inputs all come from outside their own
    group can be recomputed. Each decision is written as a sentence into the
    group's `decisions`.
  }];
  let options = [
    Option<"recompute", "recompute", "std::string", /*default=*/"\"auto\"",
           "Multi-consumer producers: 'auto' (cost model), 'never' (always "
           "materialize) or 'always' (recompute whenever legal)">,
    Option<"noFusion", "no-fusion", "bool", /*default=*/"false",
           "Put every op in a group of its own (the unfused baseline)">,
    Option<"multiTensor", "multi-tensor", "bool", /*default=*/"true",
           "Independent elementwise groups over different spaces share one "
           "launch, each over blocks of its own">,
    Option<"maxBuffers", "max-buffers", "unsigned", /*default=*/"512",
           "The most buffers (tensors read from outside a group, results "
           "read outside it) one group's kernel is passed">,
  ];
  let dependentDialects = ["::kfuse::fusion::FusionDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PadToGeneric : Pass<"fusion-pad-to-generic", "::mlir::func::FuncOp"> {
  let summary = "Rewrites static tensor.pad, tensor.concat and tensor.insert_slice ops as elementwise gathers";
  let description = [{
    A `tensor.pad` with static shapes, constant amounts (non-negative) and a
    padding value that does not depend on the position becomes a
    `linalg.generic` over the padded space that reads the source with
    `tensor.extract` at the clamped position and selects the padding value
    outside the source: `out[i] = inside(i) ? src[clamp(i - low)] : pad`.
    Planning then treats it as an elementwise op whose inputs are the bytes
    of the source. Other pads are left unchanged (opaque to planning).

    A `tensor.concat` of static shapes becomes a gather the same way: along
    the concatenated dimension every input is read at its clamped position
    and a chain of selects picks the input the position falls in
    (`torch.cat` of a rotary embedding's halves fuses with its neighbours).
    Inputs cast to a dynamic size (`torch.roll`) are read as the static
    tensors they were cast from.

    A `tensor.insert_slice` with static shapes, offsets, sizes and strides
    becomes a gather over the destination: a position in the slice (past
    the offset, below offset + size * stride, on a multiple of the stride)
    reads the source at the clamped `(i - offset) / stride`, any other
    position the destination: the fill's scalar where the destination is a
    fill (a transposed convolution's zero-stuffed input), else the
    destination at that position (`slice_scatter`).

    A gather that reads the only use of an elementwise producer (identity
    output map, inputs through any affine map; `linalg.index` becomes the
    gathered index, so gathers of gathers compose) reads the
    producer's inputs at that point and evaluates the producer's body there,
    so `pad(exp(x))` is one op that reads `x`. A producer with other uses
    stays for them, and a gather recomputes it only when the gather runs at
    most (producer elements / producer tensor inputs) times, so it reads no
    more than writing the producer would cost: torch's cross-entropy picks
    one log-probability per row out of a whole log-softmax and then reads a
    logit and the row's max and log-sum instead. A producer marked
    `fusion.materialize` is kept.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def NormalizeViews : Pass<"fusion-normalize-views", "::mlir::func::FuncOp"> {
  let summary = "fusion-hoist-reshapes and fusion-fold-copies to a fixpoint";
  let description = [{
    Each of the two enables the other: reshapes that meet let copies and
    gathers fold into their readers, and gathers turned into inputs, or loops
    split for a gather, leave reshapes to move. Runs the two in turn until a
    round changes nothing (the function's fingerprint stays the same), at
    most `max-rounds` rounds; what the last round left stands (a valid
    program either way).
  }];
  let options = [Option<"maxRounds", "max-rounds", "unsigned", "8",
                        "Most rounds of the two passes">];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FoldCopies : Pass<"fusion-fold-copies", "::mlir::func::FuncOp"> {
  let summary = "Folds transposes, broadcasts and slices into indexing maps";
  let description = [{
    A copy `linalg.generic` (one tensor input, a body that yields it,
    identity output map: generalized transposes and broadcasts) is folded
    into every generic that reads it: the reader takes the copy's input
    through the composed indexing map, so the copy is never written to
    memory. This includes contractions (a matmul reads a transposed weight
    in place). A fold is skipped where linalg could no longer infer the
    reader's loop ranges from its operands, and for a row reduction whose
    composed map would not be a projected permutation.

    A static `tensor.extract_slice` that takes whole aligned blocks of its
    source (`x[..., j*s:(j+1)*s]` of a dimension of `n*s`, `x[..., o::t]` of
    a dimension of `s*t`, single indices) becomes a view: a
    `tensor.expand_shape` of the source and a copy generic reading it with
    constant indices (`(d0, d1) -> (d0, 1, d1)`), folded into its readers
    like any copy. Unlike a gather, the view still gives the reader's loops
    their ranges, so a matmul reads two slices of one tensor in place
    (q @ k^T from a fused qkv). A slice of the only use of a generic's
    result is not made a view (the gather below pulls the producer in).
    Another static slice of a function argument, contiguous along its last
    dimension (and not of booleans), stays a `tensor.extract_slice` for
    the linalg ops that read it as inputs: bufferized, a `memref.subview`
    of the argument's buffer, which kernels address through its strides
    and offset (a softmax over `x[:, 1:1026]` is one row kernel). A
    collapse of it is read the same way, by generics that run over the
    slice's own loops (fusion-hoist-reshapes); its other uses (returned,
    reshaped otherwise) read a gather.

    A copy that only permutes the only use of a reduction's result whose
    accumulator starts from a fill (autograd's `dK = (Q^T dS)^T` after a
    batched contraction) is folded into the reduction instead: it writes
    its result through the permutation, from a fill of the copy's shape.

    A `tensor.collapse_shape` or `tensor.expand_shape` of a copy is a copy
    over the reshaped space: a loop `c` collapsing dims of sizes (.., a, b)
    reads them at (.., (c floordiv b) mod a, c mod b); a dimension split by
    an expand is read at its new loops where the copy read it directly (the
    copy's input is expanded the same way, so linalg still finds the loops'
    ranges) and at their linear combination elsewhere. Multi-head
    attention's head split (view, transpose, merge into the batch) is read
    in place by the batch_matmul.

    A `tensor.expand_shape` or `tensor.collapse_shape` of a positional
    gather (a pad, concat or slice rewritten) is the gather over the
    reshaped space: each of its loop indices is the linear combination of
    the new indices it was split into, or the digit (`floordiv`, `mod`) of
    the index it was merged into.

    A tensor every element of which is one constant (a splat
    `arith.constant`, a fill of a constant) read by a generic is that
    constant in the generic's body instead (`x * 1.0` then folds, and a
    reader left a copy folds into its own readers). A generic without loops
    (arithmetic on 0-d tensors) read by a generic with loops, other than a
    contraction, is computed in the reader's body from its own inputs, read
    through the reader's constant map. A scalar computed outside a generic
    (`tensor.extract` of a tensor, arithmetic on such elements) that the
    generic uses in its body or takes as an input is computed in the body;
    the tensors it reads are then gather reads of the generic. None of these
    drops an operand that linalg needs to infer a loop's range.

    Index arithmetic in a body is analysed from the static loop ranges:
    comparisons, maxima and minima the ranges decide fold (a slice of a
    concat reads only the input it lies in; torch's wrap of negative
    indices goes), and integer arithmetic the ranges reduce to one loop
    index or a constant is that index or constant (`(t + 8 * b) mod 8` is
    `t` for `t < 8`: a reader over a reshape's loops linearizes its old
    index, which a gather through the same reshape delinearizes). A
    gather at positions affine in the loop indices that are loop indices
    and constants on the gathered tensor, or on the source of its views
    (a [4, 4] view of a [16] tensor read at (i floordiv 4, i mod 4) is
    the tensor read at i), is an input read through that map.
    A constant integer tensor whose elements are `b + a * ((p floordiv q)
    mod m)` of their position along one dimension (torch-mlir's index
    tensors: group norm's `c floordiv C/G`, aranges) is computed from
    `linalg.index` instead of loaded. A gather at `i floordiv q` or
    `i mod q` of a loop whose range is a multiple of q splits that loop in
    two (`i = hi * q + lo`; operands indexed by i read through an
    expand_shape, results collapsed back) where every gather it changes then
    reads at loop indices: group norm's statistics, gathered per channel,
    are read per group by ops over (n, group, channel in group, ...).
    A reshape of a resource constant (torch-mlir's weights) is the constant
    at the new shape.

    Any other static slice becomes an elementwise gather over the slice
    (`out[i] = src[offset + i * stride]`, as fusion-pad-to-generic does for
    pads): it fuses with elementwise neighbours, and reads through an
    elementwise producer or another gather the way fusion-pad-to-generic
    describes (a slice of a slice is one gather).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def HoistReshapes : Pass<"fusion-hoist-reshapes", "::mlir::func::FuncOp"> {
  let summary = "Moves reshapes to where the ops around them meet";
  let description = [{
    A `tensor.expand_shape` or `tensor.collapse_shape` of the only use of an
    elementwise `linalg.generic` whose operands all use the identity map
    (and, for a collapse, whose body does not read `linalg.index`) is
    rewritten as the generic over the reshaped space on reshaped inputs.
    Repeated, this moves reshapes to the program's inputs and constants
    (free views), so the elementwise ops on both sides of a `view` fuse. Producers with
    broadcasts, transposes or several uses keep their reshape, which then
    separates two groups.

    A `tensor.collapse_shape` moves the other way, below the generics that
    read it, where those run over the finer space: a generic that
    broadcasts or reduces (not a contraction), an elementwise generic
    reading a collapse of a value a broadcast or reduction computed (the
    collapse cannot move above it), or an elementwise generic all of whose
    readers are such generics. The reader runs over the uncollapsed loops
    (upstream expansion) and its result is collapsed; a collapse is never
    hoisted where it would sink again. A collapse of a slice of a function
    argument (a view of its buffer, fusion-fold-copies), which is in
    general no view itself (`logits[:, :-1].reshape(-1, V)`), moves below
    every generic reading it, whatever the generic computes: a causal
    language model's loss reads the logits in place, row by (batch,
    position) row. A generic that reads `linalg.index` may run over the
    finer loops too (here and when an expand_shape of its result moves up
    through it): upstream expansion writes each old index as an
    `affine.apply` of the new ones, which this pass expands to arith. An expand_shape of a collapse_shape
    that refine one space becomes a collapse of an expand (group norm's
    `[N, C, H*W] -> [N, G, C/G, H*W]` is `[N, G, C/G, H, W]` collapsed), so
    x's views meet in the finest space. An expand_shape of a collapse_shape
    that only drops unit dimensions (`[1, C] -> [C] -> [G, C/G]`: group
    norm at batch 1 after linalg-fold-unit-extent-dims) is the unit
    dimensions dropped from an expand of the source, which is the view the
    statistics read; a view that only drops unit dimensions counts as the
    finer space being read, and the unit loops a sinking collapse brings
    into a generic are dropped again (linalg-fold-unit-extent-dims'
    patterns run here too). Reshapes of resource constants (torch-mlir's
    weights) are constants at the new shape.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DropBodyAsserts : Pass<"fusion-drop-body-asserts", "::mlir::func::FuncOp"> {
  let summary = "Removes cf.assert ops from linalg.generic bodies";
  let description = [{
    torch-mlir guards some element computations with `cf.assert` (batch
    norm's reciprocal of the variance: "unimplemented: tensor with zero
    element") and its gathers' indices ("index must be smaller than dim
    size"). An abort would end the user's process, so these are removed: the
    arithmetic then follows IEEE rules (a division by zero gives an
    infinity), and fusion-guard-gathers checks every gather index it cannot
    bound, reporting a bad one through the runtime instead. Assertions
    outside linalg bodies are kept and stop planning as opaque ops.
  }];
}

def AssociativeCombiners : Pass<"fusion-associative-combiners", "::mlir::func::FuncOp"> {
  let summary = "Writes reduction steps that are associative as their combining op";
  let description = [{
    A reduction runs across GPU threads only when its body is
    `acc = acc op f(inputs)` with an associative `op` (add, mul, max, min,
    and, or, xor); other bodies run in order, a thread per result
    (fusion-generic-to-gpu's ordered kernels). Two steps are associative
    ops in disguise, and become them:

    - `acc - f` is `acc + (-f)`: `arith.subf` becomes `arith.addf` of
      `arith.negf` (the same value, bit for bit, with the same fast-math
      flags), `arith.subi` becomes `arith.addi` of `0 - f` (wrapping);
    - on integers, `select(cmpi pred(acc, f), acc, f)` (either operand
      order, either branch) is `maxsi`, `minsi`, `maxui` or `minui`.

    ```mlir
    ^bb0(%in: f32, %acc: f32):
      %d = arith.subf %acc, %in : f32      // becomes
      linalg.yield %d : f32                // %n = arith.negf %in
                                           // %d = arith.addf %acc, %n
    ```

    The floating-point select (`acc > f ? acc : f`) is left alone: with
    NaNs it depends on the order, as neither `maximumf` nor `maxnumf` does.
    So is `f - acc` (an alternating sum). Sums are then reassociated, as
    every parallel reduction is.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PicksAsGathers : Pass<"fusion-picks-as-gathers", "::mlir::func::FuncOp"> {
  let summary = "Writes one-hot sums as gathers of the one term they keep";
  let description = [{
    A sum over a reduction loop `j` whose term is `j == k ? f(j) : 0`
    (`arith.select` of an `arith.cmpi eq` or `ne`, the zero a constant of
    either sign, the sum `arith.addf` or `arith.addi`), where `k` is
    computed without `j`, keeps one term: `f(k)` where `0 <= k < n` (`n`
    the loop's static range) and nothing elsewhere. The generic loses the
    loop: its inputs read along `j` are gathered (`tensor.extract`) at
    `j = min(k, n - 1)`, and the term is `k < n (unsigned) ? f(k) : 0`.
    A cross-entropy written as linalg picks its label's logit so; the sum
    reads the whole row and compares every column with the label, the
    gather reads one element.

    ```mlir
    ^bb0(%x: f32, %label: i64, %acc: f32):   // loops (i, j), j reduced
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %hit = arith.cmpi eq, %ji, %label : i64
      %t = arith.select %hit, %x, %zero : f32
      %s = arith.addf %t, %acc : f32
    // becomes, over loop i alone:
    ^bb0(%label: i64, %acc: f32):
      %i = linalg.index 0 : index
      %k = arith.index_cast %label : i64 to index
      %in = arith.cmpi ult, %k, %c1000 : index
      %at = arith.minui %k, %c999 : index
      %x = tensor.extract %logits[%i, %at] : tensor<64x1000xf32>
      %t = arith.select %in, %x, %zero : f32
      %s = arith.addf %t, %acc : f32
    ```

    The value is the sum's, bit for bit, but for the sign of a zero sum
    (the sum adds zeros in an order its kernel chooses). A compare with an
    `index_cast` of `j` to integers too narrow to hold every `j` is left as
    it is, as are terms computed with ops that have regions or effects,
    keys that depend on `j`, and one-hot products (`onehot * x` is NaN where
    any `x` is infinite).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CheckGenerics : Pass<"fusion-check-generics", "::mlir::func::FuncOp"> {
  let summary = "Rejects generics that kfuse would run other than as written";
  let description = [{
    Upstream's verifier takes three kinds of `linalg.generic` that kfuse's
    kernels cannot run as written; this pass stops them with an error that
    names the loop or the output, before any rewrite.

    A loop marked "parallel" that an output's indexing map does not use: its
    iterations all write the same output elements, so it is a reduction
    under the wrong name. Loops on the CPU would run it in order and get a
    reduction's answer; GPU threads would race on the same elements and
    return a wrong answer without a word.

    ```mlir
    // error: loop d0 of this linalg.generic is "parallel", but output #0
    // (affine_map<(d0, d1) -> (d1)>) does not vary along it ...
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["parallel", "parallel"]} ...
    ```

    A loop marked "reduction" that every output varies along: each of its
    iterations writes elements of its own, so it reduces nothing, and
    planning would take it for a reduction's loop.

    An output whose map reaches only part of it: a constant index into a
    dimension longer than 1, a loop used twice (a diagonal) or an index
    computed from several loops. The elements it does not reach would keep
    the init's values, which kfuse's kernels do not carry over (they would
    come back uninitialized). Each result of an output map must be a loop
    of its own, or 0 in a dimension of size 1.

    It also stops a `dense_resource` constant whose blob does not hold its
    type's elements, or is missing from the module: the parser takes both,
    and only LLVM's translation (CPU) or reading the data for the GPU would
    find out.

    And a `tensor.expand_shape` whose `output_shape` gives a static
    dimension of its result another size: upstream's verifier takes it, and
    only the bufferized `memref.expand_shape` would be refused, its error
    naming neither the op nor the sizes.

    ```mlir
    // error: output #0 of this linalg.generic is written through
    // affine_map<(d0) -> (d0, 0)>, which reaches only part of tensor<8x4xf32> ...
    %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                          affine_map<(d0) -> (d0, 0)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<8xf32>) outs(%filled : tensor<8x4xf32>) ...
    ```
  }];
}

def GuardGathers : Pass<"fusion-guard-gathers", "::mlir::func::FuncOp"> {
  let summary = "Reads gathers at in-bounds indices and reports the others";
  let description = [{
    A `tensor.extract` in a `linalg.generic` body reads at indices the data
    may choose (an embedding's token ids, a loss's labels). An index past
    its dimension reads memory the tensor does not own: a wrong value, or
    on the CPU a crash. For every index the compiler cannot prove within
    its dimension, this pass compares it (unsigned, so a negative index
    fails too), reads at index 0 of that dimension instead where it is out
    of range, and puts a `fusion.guard` on the value read, so that the
    program reports the bad index instead of using what it read. The
    guard's `index` is the first checked index that is out of range (as
    i64), which the error reports.

    Indices are proven from their integer ranges: loop indices
    (`linalg.index`) within the loop's extent, constants, and what the
    arith ops make of them (clamps such as `minsi(maxsi(i, 0), n - 1)`,
    remainders, selects). A tensor with a dimension of size 0 has no
    element to read: the value becomes 0, guarded by false.

    ```mlir
    %i = arith.index_cast %id : i64 to index
    %e = tensor.extract %table[%i, %j] : tensor<100x64xf32>
    // becomes
    %ok = arith.cmpi ult, %i, %c100 : index
    %k = arith.select %ok, %i, %c0 : index
    %r = tensor.extract %table[%k, %j] : tensor<100x64xf32>
    %id64 = arith.index_cast %i : index to i64
    %e = fusion.guard %r if %ok, "..." index %id64 : f32, i1, i64
    ```
  }];
  let dependentDialects = ["::kfuse::fusion::FusionDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerGuards : Pass<"fusion-lower-guards", "::mlir::ModuleOp"> {
  let summary = "Turns fusion.guard ops into stores to a status buffer";
  let description = [{
    Runs after code generation (kernels are `gpu.launch` ops of the host
    function, or loop nests on the CPU). Each distinct guard message gets
    two 64-bit words of `memref.global @kfuse_status`, whose
    `kfuse.guards` attribute lists the messages in order; each guard
    becomes its value, plus, where its condition is false (any lane of a
    vector), an aligned 64-bit store of 1 into its first word and an
    atomic exchange (`memref.atomic_rmw assign`) of its `index` into its
    second (lane by lane: a lane that failed; threads that fail at once
    leave one of their indices, whole, without a race), at the end of the
    guard's block (a
    store between a load and its use would keep LLVM from sinking the
    load into the branch of the one thread that stores the result). Stores inside a kernel go through the
    global's buffer taken (`memref.get_global`) before the launch, so the
    kernel receives it as an argument; the runtime keeps the buffer zero
    between calls and reports the messages (and indices) of the guards a
    call set.
    A module without guards is left as it is.

    With `take-function=NAME` (the CPU target) the pass also adds
    `func.func @NAME(memref<Nxi64>)`, which copies the words into its
    argument and zeroes them: the JIT finds functions, not variables.
  }];
  let options = [
    Option<"takeFunction", "take-function", "std::string", "\"\"",
           "Name of a function to add that takes (copies and zeroes) the "
           "status words">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def DropDeadResults : Pass<"fusion-drop-dead-results", "::mlir::func::FuncOp"> {
  let summary = "Removes results of linalg.generic ops that nothing reads";
  let description = [{
    Decompositions compute more than a program uses: torch's `max(dim)`
    yields the maximum and its index from one generic (a compare and a select
    of `linalg.index` carried next to the max), and a softmax that needs only
    the maximum leaves the index result unread. A result with no uses, whose
    output argument feeds only its own yielded value, is dropped with its
    init operand and the body ops that computed it (linalg's
    erase-unused-operands-and-results patterns). The reduction that is left
    combines with one associative op, which the GPU row kernels can emit.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MergeNestedReductions : Pass<"fusion-merge-nested-reductions", "::mlir::func::FuncOp"> {
  let summary = "Reduces a reduction's result again as one reduction";
  let description = [{
    `x.sum(axis=3).sum(axis=2)` (or `amax` of `amax`) is two reductions, the
    inner one writing a tensor that only the outer one reads: a kernel each,
    and an intermediate as large as the input over the last axis. When the
    outer generic only combines (its body is `out (op) in`, nothing else) with
    the combining op of the inner one, whose accumulator starts at that
    op's neutral element (0 for a sum, -inf for a max), the two are one
    reduction over the inner generic's loops: the outer's parallel loops stay
    parallel, every other loop reduces. The merged generic computes the
    inner body, starts from the outer's accumulator and puts its parallel
    loops first, in the order of its result's dimensions (the form the row
    kernels take), then the reducing loops in the order the inner generic's
    first input that reads them all lays them out in memory:
    `x.sum(axis=0).sum()` is the reduction over (rows, columns) of x that
    `x.sum()` is, and an elementwise sibling over x shares its loops.
    Repeated, `sum(sum(sum(x, 3), 2), 0)` becomes the reduction over dims
    (0, 2, 3) that `x.sum(axis=(0, 2, 3))` writes.

    Floating-point sums are reassociated, as every parallel reduction is.
    Inner generics that read `linalg.index`, have several results, are read
    elsewhere or are contractions (a matmul's row sum, merged, would leave
    each of fewer threads the whole product) are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ReductionsLast : Pass<"fusion-reductions-last", "::mlir::func::FuncOp"> {
  let summary = "Puts a reduction generic's parallel loops first";
  let description = [{
    torch-mlir writes a sum over a leading dimension (`x.sum(0)`, batch
    norm's sums over (n, h, w) in NHWC) with the reduced loop first:
    `iterator_types = ["reduction", "parallel"]`, x read at (d0, d1). The
    builder, fusion-merge-nested-reductions and the planner's row kinds
    take reductions with their parallel loops first and the reduced ones
    after (a column sum is then a reduction whose reads have a parallel
    loop innermost: the planner places it beside the row reductions that
    read the same tensor). This pass interchanges every generic with a
    reduction loop before a parallel one into that order: parallel loops
    first, then the reduced ones, each in their original relative order
    (`linalg.index` in the body is renumbered). Where every result is
    written through one permutation of the parallel loops, those take the
    order of the result's dimensions, so the result map is the identity (a
    contraction written transposed, `(b, i, j, k) -> (b, j, i)`, which the
    CUDA kernels, indexing their output in loop order, did not support).
    What each result element folds, and in which order, is unchanged: only
    the loop names move.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SplitArgReductions : Pass<"fusion-split-arg-reductions", "::mlir::func::FuncOp"> {
  let summary = "Rewrites argmax/argmin generics as one-result reductions";
  let description = [{
    torch's argmax, argmin and max/min(dim) with indices are one generic with
    two accumulators: the running extremum and, updated by a compare and a
    select of `linalg.index`, its column. Folded in order, the index is the
    first column holding the extremum (the last for a non-strict compare),
    and a NaN stops all later updates. The generic is rewritten as
    reductions with one associative combiner each, which a GPU row kernel
    may combine in any order and still give exactly that answer: the first
    NaN column (floats), the extremum before it, the first (or last) column
    holding that extremum, and a row epilogue that keeps the initial index
    unless the extremum passes the original compare against the initial
    value. numpy's semantics (the first NaN's column wins), written as an
    update when `x ugt m` and `m` is ordered, are recognized too. Elements
    of up to 32 bits (f32, f16, bf16, integers) with columns below 2^31
    take the extremum and its column from one maximum of 64-bit keys
    instead, the element's order above the column (inverted for the first
    of ties, plus one for the last), masked from the first NaN column on
    where a NaN stops the search: one reduction (numpy's form, integers) or
    two, where the three would take a wave of partials each on a row split
    over blocks. The extremum result, if read, is a reduction of its own
    with the original combiner. Generics of any other form are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitFullReductions : Pass<"fusion-split-full-reductions", "::mlir::func::FuncOp"> {
  let summary = "Reduces row by row first where a full reduction reads row values";
  let description = [{
    A reduction over every loop of a value computed row by row (a KL
    divergence summed over a batch after two log-softmaxes, a loss after a
    layer norm) cannot join the group of its rows, so the whole value would
    be written and read back. When an elementwise producer of its terms
    (followed through producers that read each other at the same point)
    reads a value computed by a reduction broadcast along some loops, the
    full reduction becomes a reduction over the other loops into a tensor
    over those ("rows", parallel loops first), starting from the combiner's
    neutral element, and a reduction of that tensor into the original
    accumulator: `sum_ij t[i, j]` is `sum_i (sum_j t[i, j])`. The first
    joins the row group; the second reads one value per row. Full
    reductions with fewer than 32 elements per row, dynamic shapes, or a
    body that is not `acc (op) term` for an arith op with a neutral element
    are left alone. Floating-point sums are reassociated, as every parallel
    reduction is.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LiftBroadcastReductions : Pass<"fusion-lift-broadcast-reductions", "::mlir::func::FuncOp"> {
  let summary = "Recomputes a reduction on finer rows where it is read broadcast beside one over them";
  let description = [{
    A masked mean over a middle axis, `sum_s x[b, s, h] m[b, s] /
    max(sum_s m[b, s], 1)`, divides a reduction over rows (b, h) by one over
    rows (b): two row spaces, two kernels, and the mask's values written by
    one and read by the other. This pass recomputes the count for every
    (b, h), where its loads are the numerator's own loads of m[b, s].

    A reduction R (rows P, columns C, its accumulator a fill, its body free
    of linalg.index and gathers) is lifted when every use of its value,
    followed through elementwise ops over P that read it at the same point,
    is an input of an op whose parallel loops P' extend P and that reads it
    through distinct loops of P' (the same ones in every such op), and when
    a row reduction T over P' and columns of C's extents, which is
    one of those readers or is read by one at its rows (directly or through
    elementwise ops over P', an f16 sum's truncation), reads each tensor R
    reads at the same points (directly or through elementwise producers
    whose results are permutations): the lifted R then loads nothing T does
    not. R becomes
    a reduction over (P', C) of elementwise copies of its inputs laid out
    like the input T reads through a permutation, so both reductions read
    their columns along the same loops; the elementwise ops between R and
    its readers run over P', and the readers read the results at their own
    points. fusion-form-groups then puts them in T's group, whose report
    says what was recomputed (fusion.note).

    The plan pipeline runs this pass unless fusion or recomputation is
    turned off (no-fusion, recompute=never).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def WidenBoolTensors : Pass<"fusion-widen-bool-tensors", "::mlir::func::FuncOp"> {
  let summary = "Passes boolean tensors across the function boundary as i8";
  let description = [{
    Memory holds booleans one per byte (numpy, torch), and memrefs of i1
    cannot be loaded or stored by the LLVM lowerings. This pass changes every
    `tensor<...xi1>` argument and result of the function to `tensor<...xi8>`
    and converts at the boundary with elementwise generics (`arith.trunci`
    in, `arith.extui` out), which fusion then folds into the neighbouring
    groups. Gathers of an argument (`tensor.extract`, what a slice of a
    boolean argument becomes), directly or through reshapes only gathers
    read, read its bytes and narrow each element they read: a gather reads
    memory, so a narrowed tensor would be written for it first.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def WidenBoolResults : Pass<"fusion-widen-bool-results", "::mlir::func::FuncOp"> {
  let summary = "Passes boolean tensors between fusion groups as i8";
  let description = [{
    A boolean tensor one group writes for another (a comparison materialized
    by the cost model, a directive, or no-fusion) is written as bytes: the
    producing group yields `arith.extui` of it, every reading group starts
    with `arith.trunci` of its input; elementwise fusion folds both
    conversions into the kernels. Reshapes between the groups (a unit
    dimension restored) carry the bytes; any other use of the boolean tensor
    outside a group is an error.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def SaturateConversions : Pass<"fusion-saturate-conversions", "::mlir::func::FuncOp"> {
  let summary = "Float-to-integer conversions saturate (NaN gives 0) on every target";
  let description = [{
    `arith.fptosi` and `arith.fptoui` of a value the integer type cannot
    hold (an infinity, 1e10 to i32, a negative value to unsigned) or of NaN
    are poison upstream: the CPU's instruction returns the most negative
    integer, a GPU's `cvt.rzi` saturates, and LLVM may fold either way, so
    the two targets disagreed. Each becomes a conversion of a value that is
    in range (0 where it is not) and selects that give the type's largest
    value at or above its range, its smallest below, and 0 for NaN: what
    PTX's `cvt.rzi` does, on both targets.
  }];
}

def SetNumerics : Pass<"fusion-set-numerics", "::mlir::func::FuncOp"> {
  let summary = "Chooses how freely floating-point arithmetic may be rewritten";
  let description = [{
    `mode=strict` keeps every floating-point op's fast-math flags as the
    input wrote them: no contraction into FMA and no reassociation beyond
    the input, so on the CPU target a fused program computes the same bits as
    the unfused one. `mode=fast` adds `contract` to every arith op that
    takes fast-math flags, so mul-add pairs may become FMAs, and `afn` to
    `math.exp` (on CUDA, `fusion-fast-exp` makes it `ex2.approx`). Float
    casts (`arith.extf`, `arith.truncf`) keep their flags: with `contract`
    on both, `extf(truncf(x))` folds to `x`, dropping a rounding the input
    wrote (`x.to(torch.bfloat16).float()`). In both modes `math.powf(x,
    0.5)` (a constant exponent of exactly one half) becomes `math.sqrt(x)`
    with its flags, as numpy and torch compute `x ** 0.5`: -0 for -0 and
    NaN for -inf, where C's `pow` gives +0 and +inf; `fusion-ieee-sqrt`
    then rounds it correctly under strict numerics on CUDA.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"fast\"",
           "'strict' or 'fast'">,
  ];
}

def FastExp : Pass<"fusion-fast-exp"> {
  let summary = "exp as ex2.approx in GPU code (fast numerics)";
  let description = [{
    The NVVM lowering of an f32 `math.exp` calls libdevice's `__nv_expf`:
    range reduction around `ex2.approx.ftz` for an error of about an ulp,
    some ten instructions per element (instruction issue slowed a fused
    RMSNorm+SiLU and the register-held softmax of very long rows, whose
    phases do not overlap memory traffic). Under fast numerics this pass
    rewrites it (f32 and vectors of it, lane by lane) to
    `ex2.approx.f32(x * log2(e))`: two instructions, within about
    2 + 1.2 |x| ulp (2 ulp for ex2.approx, plus the rounding of
    `x * log2(e)`: 6e-6 relative at |x| = 88, beyond which exp overflows or
    underflows); NaN, the infinities and subnormal results come out as from
    `__nv_expf`. Two kinds of exp become `ex2.approx.ftz.f32` instead,
    which flushes subnormal results to 0 (one SASS instruction, where
    keeping them takes a range test and two predicated multiplies around
    it), since no result can see the difference: one marked `kfuse.ftz`
    (the row emitter marks an online sum's terms exp(e - m') and rescales,
    whose sum holds its max's term 1, so that a term below 2^-126 is lost
    in its rounding), and one every use of which adds it to, or subtracts
    it from, a constant of magnitude 2^-100 or more (1 + exp(-x) of a
    sigmoid, exp(x) + 1 of a softplus; additions without `reassoc`, which
    fast numerics do not set). Only exps that allow approximation
    (`afn`, which `fusion-set-numerics` sets in fast mode) are rewritten,
    marked or not; part of `fusion-target-cuda`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def FastDiv : Pass<"fusion-fast-div"> {
  let summary = "f32 division as div.full.f32 in GPU code (fast numerics)";
  let description = [{
    The NVPTX back end lowers an f32 division to the correctly rounded
    `div.rn.f32` (`rcp.rn.f32` for 1 / x): a reciprocal, a few fused
    multiply-adds and a branch to a slow path per element. Under fast
    numerics this pass rewrites every f32 `arith.divf` that allows
    approximation (`afn`, which `fusion-set-numerics` sets in fast mode),
    scalars and 1-D vectors lane by lane, to `llvm.nvvm.div.full`:
    `div.full.f32`, within 2 ulp over the full range (the divisor scaled
    where it is huge), what Triton's default `/` and a sigmoid's division
    there compile to. A vector divided by a broadcast value (a softmax's
    row sum) is multiplied by that value's reciprocal instead, computed
    once with a correctly rounded division: within 1.5 ulp, one
    multiplication a lane (a divisor below 2^-126 in magnitude overflows
    its reciprocal: the quotient is then infinite). Divisions by a constant
    power of two stay: LLVM multiplies by its exact reciprocal. Part of
    `fusion-target-cuda`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def ExpandPowI : Pass<"fusion-expand-powi"> {
  let summary = "Integer powers as multiplications (or powf)";
  let description = [{
    torch-mlir writes `x ** 3` as `math.fpowi` with an i64 exponent. The
    NVVM lowering calls libdevice's `__nv_powif`, whose exponent is i32: the
    call does not match the declaration, LLVM calls it through a pointer and
    leaves the function undefined, and the module fails to load; on the
    CPU, LLVM's x86 back end aborts the process on `llvm.powi` with an i64
    exponent that is not a constant. This pass rewrites `math.fpowi`
    (scalars and 1-D vectors) before either lowering:
    with a constant exponent n, |n| as repeated squaring (`x * x * x` for
    3; 1 for 0), then its reciprocal when n < 0 (`1 / x^|n|`: +-0 give
    +-inf as IEEE division does), with the op's fast-math flags; with any
    other exponent, `math.powf(x, sitofp(n))` (`__nv_powf`: a negative base
    with an integral exponent keeps its sign; exact below 2^24). Part of
    `fusion-target-cuda` and `fusion-target-cpu`.

    `math.ipowi` (an integer to an integer power, which neither lowering
    handles) becomes multiplications too, wrapping like `arith.muli`: a
    constant n >= 0 by repeated squaring, any other n as a square-and-
    multiply over its bits (selects, no loop); below zero the result is 1
    for x = 1, +-1 for x = -1 (-1 where n is odd), else 0 (the integer part
    of 1 / x^|n|, 0 for x = 0 too).

    `math.powf(x, 2.0)` (a constant exponent of exactly 2, as
    `(x - mean) ** 2` is written) becomes `x * x`, with its fast-math flags:
    the square correctly rounded, which `__nv_powf` does not promise, at
    the cost of one multiplication.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def GpuIntrinsics : Pass<"fusion-gpu-intrinsics"> {
  let summary = "math ops the NVVM lowering leaves on vectors, as LLVM intrinsics";
  let description = [{
    The NVVM lowering turns scalar `math.trunc`, `math.ctlz`, `math.cttz`,
    `math.ctpop` and `math.absi` into libdevice calls but leaves them on
    vectors (the form elementwise kernels compute in) unconverted, so the
    module failed to translate (torch's `div(rounding_mode="trunc")`,
    `x.trunc()`, bit counts). This pass rewrites them, scalars and vectors,
    to `llvm.intr.trunc` (`cvt.rzi` per lane: -0, the infinities and NaN
    come through), `llvm.intr.ctlz` / `cttz` (defined at 0: the bit width),
    `llvm.intr.ctpop` and `llvm.intr.abs` (the minimum integer stays
    itself, as `math.absi` wraps). Part of `fusion-target-cuda`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def IeeeSqrt : Pass<"fusion-ieee-sqrt"> {
  let summary = "Correctly rounded square roots in GPU code (strict numerics)";
  let description = [{
    The NVVM lowering of `math.sqrt` calls libdevice's `__nv_sqrtf`, which
    (without `__CUDA_PREC_SQRT`) is `sqrt.approx`, and `math.rsqrt` becomes
    `rsqrt.approx`. Under strict numerics this pass rewrites them (f32, f64
    and vectors of them, lane by lane) to the NVVM intrinsic of the correctly
    rounded `sqrt.rn`, and `1 / sqrt(x)` (division is `div.rn`),
    as the CPU lowering computes them. With no FMA contraction (strict mode
    adds no `contract` flag) a CUDA kernel then rounds each op once, like
    the CPU target; libdevice's exp, log, tanh... still differ from libm by
    an ulp or so.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def CpuCompensatedSums : Pass<"fusion-cpu-compensated-sums",
                                "::mlir::func::FuncOp"> {
  let summary = "Float sums on the CPU target carry a compensation";
  let description = [{
    The CPU target's loops add a reduction's terms one at a time, so the
    rounding error of a float sum grows with the number of terms (the mean
    of 2^20 positive f32 values was off by 5e-4, relative). Every reduction
    `linalg.generic` on tensors that folds its terms with `arith.addf` and is
    not a contraction gets a second result, the running compensation
    (Kahan summation): `y = term - c; t = acc + y; c' = (t - acc) - y;
    acc' = t`, with `c` starting at zero (and `c' = 0` once `t` is not
    finite, so that infinities and NaN propagate as in the plain sum). The
    error is then bounded independently of the number of terms. The new ops
    carry no fast-math flags. Other reductions (max, min, integer sums,
    products, contractions) are left as they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BoolBytes : Pass<"fusion-bool-bytes", "::mlir::func::FuncOp"> {
  let summary = "Boolean buffers hold one byte per element";
  let description = [{
    A boolean tensor a group keeps between its loop nests or kernels (a row
    reduction with `arith.andi`, as torch's safe softmax writes, read by an
    ordered kernel of the group) bufferizes to a memref of i1, which the
    LLVM lowering cannot load or store. Every i1 buffer the function
    allocates, and every view of it (expand/collapse_shape, subview, cast),
    becomes i8: `memref.store` and `vector.store` write `arith.extui` of the
    value, `memref.load` and `vector.load` read `arith.trunci` of the bytes
    (also inside `gpu.launch` bodies: fusion-codegen-cuda runs it before
    outlining). Any other use of such a buffer is reported as unsupported
    rather than crashing the lowering.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CpuArgvEntries : Pass<"fusion-cpu-argv-entries", "::mlir::ModuleOp"> {
  let summary = "The CPU program's entries take one array of memref "
                "descriptor pointers";
  let description = [{
    On the LLVM dialect, after the func-to-LLVM conversion: each C interface
    wrapper `_mlir_ciface_<name>` (one pointer to a memref descriptor an
    argument, which it loads and passes on expanded, five or more values a
    memref, to `<name>`) becomes a function of one argument, `argv`, an
    array of those pointers, and `<name>`'s body is moved into it (`<name>`
    is erased). The CPU executable calls it with that array.

    A program with many tensors (an optimizer's step over 200 parameters:
    1400 memrefs, 7000 scalar arguments) otherwise has calls of thousands of
    arguments: the wrapper's, and the packed wrapper's the ExecutionEngine
    adds to each external function. LLVM's called-value propagation and the
    x86 back end's store merging (quadratic in the stores of one block) on
    them took most of the executable's build (7.2 s for those 200
    parameters, 29 s for 400). A wrapper of any other shape (not a call of
    its function followed by a return, a function with results or other
    uses) is refused: the executable could not call it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CpuBf16Bits : Pass<"fusion-cpu-bf16-bits"> {
  let summary = "Moves bf16 values as i16 bits in the CPU target's LLVM dialect";
  let description = [{
    Without native bf16 the x86 backend promotes a bf16 value it has to
    materialize (a select of two bf16 values, a stored bf16 constant) to f32
    and back, calling `__truncsfbf2`, which the JIT does not provide. Selects
    and stores only move bits: this pass rewrites `llvm.select` and
    `llvm.store` of bf16 values (and vectors of them) as the same ops on
    bitcast i16 values.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CpuBf16Casts : Pass<"fusion-cpu-bf16-casts", "::mlir::func::FuncOp"> {
  let summary = "bf16 arithmetic and integer-to-bf16 conversions through f32 (CPU)";
  let description = [{
    Arithmetic on bf16 values (arith and math ops with a bf16 operand or
    result: a sum accumulated in bf16, as torch-mlir writes
    `x.bfloat16().sum()`) is computed in f32 and each bf16 result rounded
    back with `arith.truncf`: the promotion the x86 back end would do, but
    without its `__truncsfbf2` calls.

    The x86 backend lowers an integer-to-bf16 conversion (`arith.sitofp` /
    `arith.uitofp` to bf16) as a conversion to f32 and a `__truncsfbf2` call
    the JIT does not provide. This pass writes it as the conversion to f32
    and an `arith.truncf` to bf16, which `arith-expand{include-bf16}` then
    expands into integer arithmetic (round to nearest even). Integers of at
    most 24 significant bits convert exactly to f32, so for them the result
    is the correctly rounded bf16; wider ones are rounded twice, as numpy's
    bf16 (ml_dtypes) conversion through float32 does.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Strategy
//===----------------------------------------------------------------------===//

def SelectStrategy : Pass<"fusion-select-strategy", "::mlir::ModuleOp"> {
  let summary = "Chooses a GPU strategy for every fusion.group";
  let description = [{
    Writes `#fusion.strategy<threads, vector, unroll, blocks>` on each
    elementwise group that has none (row-wise groups are laid out by
    fusion-generic-to-gpu). Runs after fusion-fuse-group-bodies, which marks
    a group whose reductions folded away as elementwise. The vector width is the widest of 16, 8 and 4 bytes (in
    elements of the widest element type in the group, at most 8) that divides
    the innermost extent of the iteration space, falling back to 1 for
    boolean operands. By default the grid covers the space once, one vector
    per thread (fastest measured on the H100). With `blocks-per-sm` > 0 the
    grid is capped at that many blocks per SM and threads stride over the
    rest, `unroll` vectors in flight per trip.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip: sm_80, sm_86, sm_89, sm_90">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Number of SMs; 0 takes the chip's default (sm_90: 132)">,
    Option<"threads", "threads", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"4",
           "Vector accesses in flight per thread and loop trip">,
    Option<"blocksPerSm", "blocks-per-sm", "int64_t", /*default=*/"0",
           "Cap the grid at this many blocks per SM (0: no cap)">,
  ];
  let dependentDialects = ["::kfuse::fusion::FusionDialect"];
}

//===----------------------------------------------------------------------===//
// Code generation
//===----------------------------------------------------------------------===//

def FuseGroupBodies : Pass<"fusion-fuse-group-bodies", "::mlir::func::FuncOp"> {
  let summary = "Merges the linalg ops of each group into one linalg.generic";
  let description = [{
    Applies upstream elementwise fusion inside every `fusion.group`; the
    producers' values that the group yields stay results of the merged op.
    An elementwise group whose results share one space, and whose members
    each read the others through maps of those loops, is fused in one step
    instead: each member's body copied once for each point it is read at,
    where fusing edge by edge copied the growing body at every edge (time
    quadratic in a chain's length).
    An elementwise group must end with exactly one `linalg.generic`
    (independent siblings over the same loops are merged into one), or the
    pass fails naming the group; a reduction group keeps one generic per
    reduction and epilogue, and an elementwise op it keeps over its space
    in another loop order (an NHWC tensor's `x - mean`, also an output,
    beside reductions over (c | n, h, w)) is interchanged into the order of
    its reductions. An op is fused into a reduction only where tensors that
    stay (the group's inputs, the inits, and results whose extents come
    from such) give every loop of the reduction an extent: a gather indexed
    by ids over the rows (BERT's embeddings) gives the hidden loop one only
    through its own result, which fused it would keep as a second result
    of the reduction. Such an op stays of its own; one over fewer loops
    than the reductions that read it through a broadcast (a position table
    looked up over (position, hidden)) is recomputed over their loops.
    Results that fusion left unused are erased.
    In a reduction group, a producer that reads a reduction's result and is
    read at the same point by several row-space ops stays an op of its own
    once its body holds more than `shared-body-limit` ops (the row kernel
    evaluates it once where it is read): fused into each reader, a stack of
    normalizations over the same rows would copy the whole chain into every
    reduction, IR quadratic in the stack's depth.
  }];
  let options = [
    Option<"sharedBodyLimit", "shared-body-limit", "unsigned", "32",
           "Reduction groups: ops in a shared producer's body beyond which "
           "it is no longer fused into each of its row-space readers">];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def InlineGroups : Pass<"fusion-inline-groups", "::mlir::func::FuncOp"> {
  let summary = "Replaces each fusion.group by its body";
  let description = [{
    Moves the single `linalg.generic` of each group into the enclosing
    function and tags it with the group's name (`fusion.kernel`) and strategy
    (`fusion.strategy`), which `fusion-generic-to-gpu` reads after
    bufferization.
  }];
}

def BufferizationBoundary : Pass<"fusion-bufferization-boundary", "::mlir::func::FuncOp"> {
  let summary = "States the function boundary for one-shot bufferization "
                "and gives each use of an empty tensor its own";
  let description = [{
    Marks the function's tensor arguments `bufferization.writable = false`:
    they are the caller's inputs, never written in place (a contraction that
    accumulates into an argument gets a copy). Arguments only read as
    inputs of structured ops need no mark and get none (bufferization takes
    the marks off one argument at a time, each time rebuilding the array of
    all of them). A computed tensor returned more than once gets a copy
    (`bufferization.alloc_tensor ... copy`) for each repeat, since every
    result is its own buffer. A `tensor.empty` used
    more than once (CSE leaves one per shape) becomes one per use, the
    first use in program order keeping the original: each is a buffer of
    its own either way, and the analysis need not weigh every write into
    the shared one against its other uses.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def BufferizeFreshGenerics : Pass<"fusion-bufferize-fresh-generics", "::mlir::func::FuncOp"> {
  let summary = "Bufferizes the generics that write only fresh tensors, "
                "ahead of one-shot bufferization";
  let description = [{
    Runs right before one-shot bufferization. A `linalg.generic` of the
    function's body whose every `outs` is a `tensor.empty` used only there,
    and whose every input has a buffer of identity layout (an argument of
    the function, a constant, the result of such a generic or of a generic
    written into such buffers, or a reshape of one), runs on buffers now: a
    `memref.alloc` (alignment 64) where each empty tensor was, its inputs
    through `bufferization.to_buffer read_only`, and its results as
    `bufferization.to_tensor restrict writable` of the allocations. That is
    what one-shot bufferization would make of it (a fresh buffer conflicts
    with nothing), but its analysis weighs each result against each operand
    of the generic: a multi-tensor launch over an optimizer's parameters
    (hundreds of each) cost it most of its time. Generics writing into
    anything else (a reduction's filled accumulator, a slice) are left to it.
    Then the tensor arguments that only such generics read become buffer
    arguments of identity layout (what the analysis makes of them at the
    function's boundary, after weighing each of the function's results
    against each argument: 3600 results and 4800 arguments in an Adam step
    over 1200 parameters).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ResultsToOutParams : Pass<"fusion-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "Makes a function's buffer results arguments it writes into";
  let description = [{
    Runs after bufferization. Each buffer result (identity layout) of a
    function with a body becomes an argument appended after the others,
    with the result's attributes: a result that a `memref.alloc` of static
    shape made is that argument (the allocation goes), any other is copied
    into it (`memref.copy`) before the return. What upstream's
    buffer-results-to-out-params does with hoist-static-allocs, but the
    function's attributes are set once, not once an argument (each time
    rebuilding the array of all of them: 0.33 s for the 3600 results of an
    Adam step over 1200 parameters). A call of such a function, which
    kfuse's programs never have, is refused by name.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ResultsInPlace : Pass<"fusion-results-in-place", "::mlir::func::FuncOp"> {
  let summary = "Computes results in their output buffers across reshapes";
  let description = [{
    Runs after bufferization. Unit dimensions are folded away before
    planning, so a result of shape [1, 128, 768] is computed as [128, 768]
    and restored by a reshape before the return; bufferization then writes
    it into a buffer of its own and copies that into the output argument (a
    whole extra read and write of the result). When the copied buffer is
    allocated in the function, reaches the copy only through reshapes, and
    nothing touches it after the copy, it is replaced by the output argument
    seen through the inverse reshapes, and the copy goes. Output arguments
    used elsewhere, and buffers read after the copy, keep the copy.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def GenericToGPU : Pass<"fusion-generic-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Lowers tagged elementwise linalg.generic ops on memrefs to gpu.launch";
  let description = [{
    Each `linalg.generic` carrying `fusion.kernel` becomes one `gpu.launch`
    following its `fusion.strategy`: a grid-stride loop over the flattened
    iteration space in which each thread loads `unroll` vectors of `vector`
    elements per trip (`vector.load` for contiguous operands, one scalar load
    splatted for operands broadcast along the innermost dimension, gathered
    scalars otherwise), evaluates the generic's body on vectors, and stores
    the results. A remainder loop handles the vectors left after the last
    full trip. Untagged generics and bodies with ops that cannot be
    vectorized are errors.

    The generics of a reduction group (same `fusion.kernel`) become one
    launch with a block per row: reductions fold their input expressions in
    per-thread partials combined by xor shuffles within each warp and through
    a workgroup buffer across warps (every thread gets the total after one
    barrier), elementwise ops are
    evaluated where needed (RowKernelEmitter.cpp). A row that fits in
    about `row-chunks` vectors per thread (at most 8 in a block of 1024
    threads, 16 in smaller ones) is loaded once into registers; with
    `row-smem`, a longer row whose chunks past those fit the block's
    dynamic shared memory too (each thread stores its own chunks there once
    and reloads them in later phases, no barrier). With
    `row-cluster`, a row too long for one block's registers is spread over
    the blocks of a thread-block cluster, whose totals are combined through
    distributed shared memory (the row still read from memory once; clusters
    beyond 8 blocks use blocks of at most 512 threads): published with a
    cluster barrier per exchange, or with `row-exchange=async` sent to every
    block with st.async and awaited on an mbarrier (with `row-online`, a
    max and a later sum of exp(e - max), a sum and a later sum of squares
    around its mean, and reductions that do not read each other, share one
    exchange: `row-joint`). Longer rows, every
    row with `row-chunks=0`, and groups one pass serves (no row-wide result
    stored, every reduction folded in one pass) stream: the reductions fold
    in passes over the row, each taking every reduction whose inputs are
    ready, and with `row-online` a max and the sum of exp(e - max) share a
    pass, as do a mean and the sum of squared deviations from it (folded as
    a running mean and centered sum of squares).

    Reductions whose inputs are contiguous along the rows rather than the
    columns (sums over leading dimensions, such as x[4096, 256].sum(0) or
    the statistics of an NHWC tensor) run a thread per row instead, so that
    consecutive threads read consecutive addresses, with 8 to 32 loads in
    flight per thread; too few rows to fill the GPU split the first reduced
    loop into slices (a partials kernel with a thread per slice and row,
    then a finishing kernel; full-space results the group stores, such as
    NHWC batch normalization's output, in a third kernel over the same
    slices once the row values are in memory). Where a thread per row does
    not fit (too few
    rows and no split, or full-space results a thread would re-read its
    row for: softmax over the channels of NCHW) a block takes a tile of
    consecutive rows, a 32-byte sector's worth of the widest element (8 of
    f32), its threads splitting the columns: each warp load reads whole
    sectors, the tile's rows stay in registers, and lanes of a row combine
    by shuffles and a workgroup slot per warp and row. A row short enough
    (32 columns) stays in one thread's registers. Few, very long rows read along the columns
    split the same way into a block per slice. Adjacent reduced loops that
    every operand reads as consecutive dimensions, in order, are first
    merged into one (a collapsed view): a mean over (n, h, w) splits all
    of n * h * w, and a reduction over several trailing loops (x.sum() of
    a matrix, a mean over (h, w) of few planes) splits at all. A split sum of squared
    deviations from a row value (a variance; `row-online`) shares the
    partials kernel of its mean: each slice folds the sum of e with the sums
    of (e - slice mean)^2 and e - slice mean, which the finishing kernel
    combines exactly around the row's centre, so the input is read once.
    These launch shapes aim to fill the target's SMs (`chip`, or
    `sm-count`).

    A group with a reduction whose step is not `acc = acc op f(inputs)`
    with an associative op (an alternating sum `x - acc`, a Horner step
    `acc * t + x`, a NaN-skipping running max with its index) cannot be
    split across threads: it becomes ordered kernels, each generic a launch
    of its own, in program order. Such a reduction, and each elementwise
    op, runs with a thread per element it writes (`<kernel>_ordered<N>`),
    its reduction loops nested in loop order, as the CPU target's are; the
    group's reductions that do combine associatively run as row kernels of
    their own (`<kernel>_rows<N>`: a sum in order would lose the accuracy
    of a tree of partials). A fill that only initializes a reduction's
    accumulators (nothing between them touches the buffer) is that
    reduction's starting value, not a launch. The group's intermediates go
    through memory. An input the reduction reads along its innermost loop,
    a row per thread, is staged through shared memory: each warp loads the
    next 32 bytes of its 32 rows together (whole sectors), then each thread
    walks its own row there; a reduction to one element has its warp load
    the next 256 elements together. The buffers take at most 40 KiB a
    block.
  }];
  let options = [
    Option<"rowThreads", "row-threads", "int64_t", /*default=*/"256",
           "Threads per block of thread-per-output kernels (contractions, "
           "reductions over leading dimensions; fewer, whole warps, where "
           "the outputs would not give every SM a block)">,
    Option<"rowChunks", "row-chunks", "int64_t", /*default=*/"4",
           "Vector chunks of its row each thread keeps in registers (the "
           "block size follows from the row width; 0: stream every row)">,
    Option<"rowFold", "row-fold", "int64_t", /*default=*/"0",
           "Column sums beside row reductions, rows in registers: each block "
           "folds a run of consecutive rows (the largest divisor of the rows "
           "up to this) into partials, one row of them per block (0: runs "
           "that leave about 512 threads per SM; 1: "
           "store every term)">,
    Option<"rowOnline", "row-online", "bool", /*default=*/"true",
           "Streaming row kernels fold a max and the sum of exp(e - max), "
           "and a mean and the sum of squared deviations from it, in one "
           "pass over the row (off for strict numerics)">,
    Option<"rowCluster", "row-cluster", "int64_t", /*default=*/"0",
           "Most blocks of a thread-block cluster a row too long for one "
           "block's registers is spread over (0: none; up to 16 on sm_90 and "
           "later)">,
    Option<"rowOccupancy", "row-occupancy", "int64_t", /*default=*/"1",
           "Blocks of a block-per-row kernel an SM holds at once: 1, 2 or 4 "
           "(blocks of at most 1024 / this many threads, each thread "
           "keeping what its share of the registers holds, each block its "
           "share of row-smem; a cluster's blocks of 1024 / this many "
           "threads, 512 at most where row-cluster exceeds 8, 8 vectors a "
           "thread in registers at most; nvvm.minctasm through "
           "fusion-cluster-dims; not kernels that also sum columns)">,
    Option<"rowPrefetch", "row-prefetch", "int64_t", /*default=*/"0",
           "Row kernels that hold their rows on chip (a block or a cluster "
           "a row) ask L2 for their share of the row this many rows on "
           "(cp.async.bulk.prefetch, sm_90 and later) once their own share "
           "has landed (0: none)">,
    Option<"rowPersist", "row-persist", "int64_t", /*default=*/"0",
           "A row over a cluster whose blocks hold their shares in registers "
           "(or in one block's registers) runs as a persistent kernel of at "
           "most this many clusters or blocks (the "
           "launch's `kfuse.persistent`: the runtime launches those the "
           "device holds at once), each block's share of its next row copied "
           "into shared memory (cp.async.bulk) while it combines and stores "
           "the current one (0: a cluster a row; -1: up to a cluster a row; "
           "sm_90 and later)">,
    Option<"rowExchange", "row-exchange", "std::string",
           /*default=*/"\"async\"",
           "How the blocks of a cluster combine their totals: 'barrier' (each "
           "publishes its total, a cluster barrier per exchange) or 'async' "
           "(st.async into every block's slots, completing an mbarrier there; "
           "PTX 8.1)">,
    Option<"rowJoint", "row-joint", "bool", /*default=*/"true",
           "A cluster's blocks exchange the totals of reductions that do not "
           "read each other together, and with row-online a max and a later "
           "sum of exp(e - max) too: each block sums against its own max and "
           "the sums are rescaled to the row's max as they are combined; "
           "and a sum and a later sum of squares around its mean: each block "
           "squares around its own mean, combined with Chan et al.'s formula "
           "(false: an exchange per reduction)">,
    Option<"rowSmem", "row-smem", "int64_t", /*default=*/"0",
           "Bytes of dynamic shared memory a block may keep its share of a "
           "row in beyond its registers (0: registers only): a row too long "
           "for one block's registers then takes one block, or a smaller "
           "cluster, with the chunks past the registers' in shared memory">,
    Option<"rowShift", "row-shift", "std::string", /*default=*/"\"auto\"",
           "Rows that do not all start on a boundary of the widest vector "
           "(a width no multiple of it, or a view of such rows) move "
           "aligned vectors anyway: row r of the [rows, n] layout (or of a "
           "strided view) starts (offset + r's position) mod width elements "
           "past a vector boundary, the chunks follow memory, and the lanes "
           "of the row's first and last chunks outside the row are masked. "
           "auto: but the rows of 4-byte or wider elements of a group that "
           "streams by choice (one pass serving it), which move vectors as "
           "wide as every row's start allows; true: those too; false: never "
           "(vectors as wide as every row's start allows, down to single "
           "elements)">,
    Option<"rowLastBlock", "row-last-block", "bool", /*default=*/"true",
           "Each wave of a row split into slices along its columns is finished "
           "by the last block of its partials kernel to store its partial "
           "(counted with atom.inc in a kfuse.counter buffer, which the "
           "kernel leaves zero), not by a finishing kernel of its own; rows "
           "split into slices of rows likewise by the last block of each "
           "tile of rows, where the finish runs a thread per row; and a "
           "full reduction of a row kernel's results (a loss's mean), a "
           "group of its own, by the last of the row kernel's blocks to end "
           "(one counter, the reduction shaped to the row kernel's block)">,
    Option<"rowSplitTail", "row-split-tail", "bool", /*default=*/"true",
           "A long row that no good number of slices divides (a prime "
           "length) is split anyway: equal slices of a multiple of 8 columns "
           "and a tail of the rest, reduced by one more block; along rows "
           "(x.sum(0) over a prime count of rows) slices of equal rows and a "
           "shorter tail (false: slices that divide the row only, a prime "
           "length unsplit)">,
    Option<"rowStoreTransposed", "row-store-transposed", "bool",
           /*default=*/"true",
           "A split along rows (statistics over leading axes, NHWC batch "
           "normalization) stores its full-space results in a kernel over "
           "(positions, rows), its rows' values as vectors, the values of a "
           "row computed once by the finishing kernel (rows narrower than a "
           "warp's vectors: several a warp); along a row's columns (x / "
           "||x||), over pieces of the slices of 2048 floats, blocks of 256 "
           "threads; false: over the slices (along rows a thread per slice "
           "and row)">,
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"0",
           "Row tiles (rows contiguous in memory, reduced along a strided "
           "axis): rows a block's tile holds, a power of two up to 32 (0: a "
           "32-byte sector of each column)">,
    Option<"rowTrip", "row-trip", "int64_t", /*default=*/"0",
           "A streamed row (a block per row): chunks each thread loads per "
           "trip of its column loop, 1 to 32 (0: 4, or its whole share up to "
           "8 chunks). A chunk is a vector of 16 bytes where the rows start "
           "on one, a single element of rows that do not (4 of them load 16 "
           "bytes, where 4 vectors load 64)">,
    Option<"rowPeel", "row-peel", "bool", /*default=*/"true",
           "A streamed row that its trips do not divide (50257 logits; a "
           "thread per row: a split's slice of rows): the trips whose chunks "
           "all lie in the row run without testing them against its end, "
           "the last one tested (false: every trip tests its chunks, "
           "guarded loads and selects)">,
    Option<"rowPack", "row-pack", "int64_t", /*default=*/"0",
           "Rows one warp covers (a block per row of 32 threads) share a "
           "block, a warp each, up to this many rows a block (a power of two "
           "up to 32; 0: up to 4 where the blocks still number twice the "
           "SMs; 1: a block per row). Beside column sums, rows of up to 8 "
           "vectors a lane take a warp each, up to 8 a block by default, the "
           "warps' partials added in shared memory; wider rows a group of "
           "t threads each, up to 512 / t a block by default (the groups' "
           "partials within 32 KB). In kernels without reductions (a split's "
           "store) rows of fewer vectors than a warp has lanes take as many "
           "lanes each, several a warp, up to 4 warps' worth a block by "
           "default">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip, for its SM count: sm_80, sm_86, sm_89, sm_90">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Number of SMs the launch shapes of reduction kernels aim to fill "
           "(thread or block per row, splits of long rows); 0 takes the "
           "chip's default (sm_90: 132)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PackLaunches : Pass<"fusion-pack-launches", "::mlir::func::FuncOp"> {
  let summary = "Runs small independent kernels as one launch, each over blocks of its own";
  let description = [{
    Launches too small to be worth a launch of their own (threads of at
    most 1024 an SM in all, half of what an SM holds, and buffers of at
    most `max-bytes` in all, 1 MiB: an optimizer's norm of each parameter,
    a block each) become one
    launch where no buffer one of them writes is read or written by
    another. Block b of the packed launch runs the kernel whose range of
    blocks holds it, with its own block id (b less the range's start), grid
    and block size. Their blocks may differ in size where the narrower ones
    are whole warps: the packed launch has the widest, and the threads past
    a kernel's own block size exit first (a barrier waits only for the
    threads that remain, PTX's `exit`). Workgroup buffers of the same type
    are shared between kernels (a block runs one kernel) up to 48 KB.
    Kernels whose code is the same but for the buffers they are passed
    (of the same types; the same constants and scalars), with as many
    blocks of as many threads, run one copy of it: their blocks follow
    each other, and block b of their range picks its kernel's buffers
    ((b - start) / blocks, a chain of `arith.select`) and runs its block
    (b - start) mod blocks. An optimizer's step over 120 parameters of two
    sizes compiles two kernels' code, not 120.

    Each small launch joins the earliest pack it may: one whose kernels
    write nothing it touches and read nothing it writes, where nothing
    between the pack's place (its first kernel's) and the launch does
    either (copies and other launches included; an operation whose
    effects are unknown stops it), and whose values it uses can move up
    there (allocations and pure operations move with it). A pack runs
    where its first kernel was. An optimizer's step whose parameters each
    take a partials kernel and a kernel that reads the partials packs into
    two launches, the partials kernels' and the others'. Launches with clusters, dynamic shared memory, persistent
    or occupancy hints, NVVM operations or inline assembly that reads a
    block's place are left alone. At most `max-launches` codes (32: LLVM
    takes longer over one function than over its parts), 128 kernels and
    256 buffers a pack. The host function's `kfuse.packed` dictionary names,
    for each packed launch's kernel, its kernels' [name, blocks, threads]
    in block order (fusion-cluster-dims moves each entry to its launch once
    outlined; the launch plan and the report read it).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip (its SM count where sm-count is 0)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "SMs (0: the chip's): a launch that joins a pack has at most 1024 "
           "threads an SM in all">,
    Option<"maxLaunches", "max-launches", "int64_t", /*default=*/"32",
           "The most kernels of different code one pack holds (at least 2)">,
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"1048576",
           "The most bytes the buffers of a launch that joins a pack hold">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def ClusterDims : Pass<"fusion-cluster-dims", "::mlir::ModuleOp"> {
  let summary = "Gives kernels launched in clusters their compile-time cluster size";
  let description = [{
    For every `gpu.launch_func` with constant cluster sizes, sets
    `nvvm.cluster_dim` on the launched `gpu.func`, which becomes
    `.reqnctapercluster` in the PTX: the kernel then runs in clusters when
    launched plainly (cuLaunchKernel); where its blocks have fewer than 1024
    threads, also `nvvm.minctasm` = 1024 / threads (`.minnctapersm`), so
    that ptxas keeps each thread within the 64 registers code generation
    planned for (blocks of a cluster share an SM 1024 threads' worth at a
    time). Two launches of one kernel with different cluster sizes are an
    error. A host function's `kfuse.min_blocks_per_sm` dictionary (kernel
    name to blocks, set by fusion-generic-to-gpu for row-occupancy above 1)
    likewise becomes `nvvm.minctasm` on the kernels it names (the larger
    of the two), and is then removed; its `kfuse.persistent` dictionary
    (kernel name to the most clusters of a persistent row kernel, set by
    fusion-generic-to-gpu for row-persist) becomes a `kfuse.persistent`
    attribute of those kernels' launches, which the launch plan carries to
    the runtime, and is removed too; so does its `kfuse.packed` dictionary
    (set by fusion-pack-launches: each packed launch's kernels), as a
    `kfuse.packed` attribute of each packed launch.
  }];
}

def ReadonlyInputs : Pass<"fusion-readonly-inputs", "::mlir::ModuleOp"> {
  let summary = "The program's inputs as read-only kernel arguments (ld.global.nc)";
  let description = [{
    A kernel argument that, at every launch of its kernel, is a view of one
    of the program's inputs (a host function argument or a constant global
    that no launch passes to an argument its kernel may write, and that no
    host operation writes) and that the kernel only loads from (no use of
    it but loads and views: `kfuse::writtenBuffers`, the row emitter's load
    reuse asks the same) is marked `llvm.noalias` and
    `llvm.readonly`; NVPTX then loads it with `ld.global.nc`, read-only for
    the kernel's lifetime. ptxas may move such a load above a store the
    kernel made before it: a row kernel's per-column weights (a layer
    norm's w and b, loaded chunk by chunk between the output's stores) are
    then in flight together. Buffers an earlier kernel writes are left as
    they are, even where this kernel only reads them (a programmatic launch
    may start before that kernel ends). Two arguments over the same input
    both only read it, which `noalias` allows. Not part of the default
    pipeline (`readonly-inputs` of fusion-codegen-cuda): ptxas keeps more
    loads in flight with more registers, which may cost a kernel blocks an
    SM (layer norm over 8192 columns: 40 -> 44 registers, 3 -> 2 blocks of
    512); until a GPU has timed it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DedupKernels : Pass<"fusion-dedup-kernels", "::mlir::ModuleOp"> {
  let summary = "One outlined kernel for launches of the same code";
  let description = [{
    Kernels of a `gpu.module` that are the same but for their names (the
    same attributes, signature and block sizes included, and the same code,
    operation by operation, locations aside) become one: every
    `gpu.launch_func` of a later copy launches the first kernel of that
    code, and the copy is erased (unless something else names
    it; a copy nothing in the module launches is left alone). A model that repeats itself (the same layer norm in each layer,
    an optimizer's step over parameters of one size) then compiles each
    code once, in LLVM and ptxas, and the runtime loads it once. A launch
    moved to another kernel records the name it was generated with as
    `kfuse.generated_as` (a string), which the launch plan carries to the
    report. The grid dependency controls a kernel starts with
    (fusion-programmatic-launch: `nvvm.griddepcontrol` wait and
    launch_dependents) are not part of the comparison: the kernel kept
    starts with those of every kernel it stands for. A wait in a kernel
    whose launch is not programmatic returns at once, and a trigger whose
    next launch is not programmatic starts nothing, so every launch
    computes what it did, and every programmatic launch's kernel still
    waits. Run it last before the target pipeline: a pass that changes a
    kernel for one of its launches (cluster sizes, occupancy hints,
    programmatic launch) must have run already.
  }];
}

def ProgrammaticLaunch : Pass<"fusion-programmatic-launch", "::mlir::ModuleOp"> {
  let summary = "Lets a kernel that follows another be launched before it ends";
  let description = [{
    For every `gpu.launch_func` that directly follows another in a host
    block (no copy between them), sets `kfuse.programmatic` on it: the
    runtime then launches it with programmatic stream serialization
    (`cuLaunchKernelEx`, sm_90 and later). Its kernel starts with
    `nvvm.griddepcontrol wait`, which holds every thread until the kernels
    before it in the stream have ended and their memory is visible, so it
    computes exactly what a plain launch would; the kernel before it issues
    `nvvm.griddepcontrol launch_dependents` as it starts, so the follower's
    blocks are placed on SMs the last wave leaves free and wait there,
    instead of being launched once the whole grid has drained. A kernel
    with split partials (an L2 norm's) then starts its finishing kernel
    while the last partials are still being summed.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def AlignWorkgroup : Pass<"fusion-align-workgroup", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Aligns the workgroup buffers of kernels to 16 bytes";
  let description = [{
    Sets `llvm.align = 16` on every workgroup attribution of every `gpu.func`
    that has none. LLVM's load-store vectorizer merges loads of consecutive
    constant indices of a workgroup array (a cluster exchange reads every
    block's slot that way) into 16-byte `ld.shared.v4` while the NVPTX
    printer declares the array with its element's alignment (`.align 4`):
    nothing would keep the vector loads aligned.
  }];
}

def ExternDynamicShared : Pass<"fusion-extern-dynamic-shared",
                               "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declares a kernel's dynamic shared memory extern";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to a
    zero-sized shared array with internal linkage, which the NVPTX back end
    demotes into the kernel as a one-byte static `.shared` variable: the
    launch's dynamic shared memory then starts after it and may overlap the
    kernel's other shared variables. Gives every zero-sized array in the
    shared address space (3) external linkage, so that PTX declares it
    `.extern .shared ... []`, the block's dynamic shared memory.
  }];
}

#endif // KFUSE_TRANSFORMS_PASSES_TD
