"""bench/mutate_programs.py on a few seeds: mutated MLIR test programs are
refused with a kfuse error or computed right (CPU fused against unfused,
CUDA emulated against the CPU), and nothing crashes. Seeds 34-49 cover the
outcomes that are not failures (compiled and run, refused), and two
reductions whose step the mutation made not associative (seed 43: operands
swapped, x - acc; seed 49: addf turned subf), which the CUDA target refused
before it ran them as ordered kernels."""

import json
import os
import sys

import pytest

pytest.importorskip("mlir")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import mutate_programs  # noqa: E402


def test_mutants_are_deterministic_and_change_the_program():
    corpus = mutate_programs.programs()
    assert len(corpus) >= 50 and "torch/torch_layernorm.mlir" in corpus
    a = mutate_programs.mutant(7, corpus)
    assert a == mutate_programs.mutant(7, corpus)
    changed = [mutate_programs.mutant(s, corpus) for s in range(30)]
    # (a mutation finding nothing of its kind in the program changes nothing)
    assert sum(text != corpus[name] for name, text, _ in changed) >= 25
    assert all(bool(what) == (text != corpus[name]) for name, text, what in changed)


def _campaign(tmp_path, *args):
    """The results of mutate_programs.py with `args`, none of them a failure."""
    out = tmp_path / "results.jsonl"
    status = mutate_programs.main([*args, "--jobs", "2", "--out", str(out),
                                   "--keep", str(tmp_path / "programs")])
    results = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [(r["seed"], r["outcome"], r["detail"][:300]) for r in results
              if r["outcome"] in mutate_programs.FAILURES]
    assert status == 0 and not failed, failed
    return results


def test_seeds_are_refused_or_computed_right(tmp_path):
    results = _campaign(tmp_path, "--seeds", "34:50")
    outcomes = {r["outcome"] for r in results}
    assert {"ok", "refused"} <= outcomes
    by_seed = {r["seed"]: r for r in results}
    assert by_seed[43]["outcome"] == by_seed[49]["outcome"] == "ok"
    # a refusal is a kfuse error that names the problem
    for r in results:
        if r["outcome"] == "refused":
            assert r["detail"].startswith(("ParseError: kfuse", "CompileError: kfuse",
                                           "UnsupportedOpError: kfuse")), r["detail"][:200]


def test_programs_under_drawn_options_agree(tmp_path):
    # seeds 268-281 of --options: sm_80, streamed and occupancy-4 rows, rows
    # widened to 2048 (a softmax and a transpose emulated wide), programs
    # the widening left invalid refused
    results = _campaign(tmp_path, "--options", "--seeds", "268:282")
    emulated_wide = [r for r in results if r["outcome"] == "ok" and not r["detail"]
                     and any(m.startswith("size") for m in r["mutations"])]
    assert len(emulated_wide) >= 2
    assert any(r["options"].get("chip") == "sm_80" for r in results)


def test_suite_workloads_under_drawn_options_agree(tmp_path):
    # --suite: 12 of the 37 benchmark workloads in turn (seeds 39-50, from
    # bn_train_nchw to l2_normalize in name order: batch norms over NCHW
    # and NHWC, column sums, a prime-length split, group norms) under drawn
    # options, half on special values: each emulated CUDA program agrees
    # with the CPU's (the NHWC batch norms and colsum, past 400000
    # elements, compile only)
    results = _campaign(tmp_path, "--suite", "--seeds", "39:51")
    assert len({r["program"] for r in results}) == 12
    assert sum(r["outcome"] == "ok" and not r["detail"] for r in results) >= 8


def test_random_programs_under_drawn_options_agree(tmp_path):
    # --random seeds 0-11: each of random_programs.py's six generators twice
    # (chains and reductions, argmax, large, wide rows, strided views,
    # poolings), under drawn options, half of them on inputs with special
    # values: the emulated CUDA programs agree with the CPU's
    results = _campaign(tmp_path, "--random", "--seeds", "0:12")
    names = [r["program"].rstrip("0123456789_") for r in results]
    assert sorted(set(names)) == ["pooling", "random", "random_arg", "random_large",
                                  "view", "wide"]
    assert sum(r["outcome"] == "ok" and not r["detail"] for r in results) >= 10


def test_every_autotune_variant_agrees(tmp_path):
    # --motifs --tune seeds 0-2: a softmax, an L2 normalization and a
    # log-sum-exp, each variant kfuse.autotune keeps (on sm_90) emulated
    # against the unfused CPU program
    results = _campaign(tmp_path, "--motifs", "--tune", "--seeds", "0:3")
    assert [r["outcome"] for r in results] == ["ok"] * 3
    assert all(r["mutations"][0] == "autotune's variants" and r["options"] == {}
               for r in results)
    assert all(int(r["detail"].split()[0]) >= 2 for r in results), results
    # (alone it has no programs to take: argparse's error, status 2)
    with pytest.raises(SystemExit) as e:
        mutate_programs.main(["--tune", "--seeds", "0:1"])
    assert e.value.code == 2


def test_fast_numerics_rounding_is_told_from_a_wrong_kernel(tmp_path):
    # --motifs seed 4731: sum(exp(bf16(bf16(3x) + 10) - max)) over rows of
    # 1000. Fast numerics contract the multiply and the add (one
    # fma.rn.bf16x2), skipping the product's rounding; near 19.5 one bf16 ulp
    # is 0.125, and the row sums move by up to 12%. The strict build agrees,
    # so the seed is told apart from a mismatch, not hidden by a tolerance.
    [r] = _campaign(tmp_path, "--motifs", "--seeds", "4731:4732")
    assert r["outcome"] == "fast-numerics", r
    assert "in strict numerics it agrees" in r["detail"]


def test_fused_cpu_rounding_is_told_from_a_wrong_program(tmp_path):
    # --random seed 201: the row sums of a twice layer-normalized [2, 131072]
    # tensor, zero but for rounding: the fused CPU program in fast numerics
    # gives -1.1e-5, the unfused one -1.8e-4 (numpy -1.75e-4); the fused
    # one in strict numerics agrees with the unfused.
    [r] = _campaign(tmp_path, "--random", "--seeds", "201:202")
    assert r["outcome"] == "fast-numerics", r
    assert r["detail"].startswith("CPU fused, output 4")
    assert "in strict numerics it agrees" in r["detail"]


def test_lit_cases_under_their_passes_are_refused_or_pass(tmp_path):
    # --passes: lit test cases mutated (memrefs and index constants too) and
    # run through the passes their RUN lines name, IR past bufferization and
    # inside gpu.launch bodies included: each pass succeeds or refuses with
    # an error, none crashes (fusion-pack-launches segfaulted on kernels of
    # one code sharing a buffer until 2026-12-06)
    cases = mutate_programs.lit_cases()
    assert len(cases) >= 200
    assert any("fusion-pack-launches" in " ".join(a) for _, _, runs in cases for a in runs)
    results = _campaign(tmp_path, "--passes", "--seeds", "0:60")
    assert {"ok", "refused"} <= {r["outcome"] for r in results}



def test_a_stage_failing_on_an_upstream_verifier_is_unnamed():
    # a compiler stage past the parser refused by an upstream verifier, no
    # diagnostic of kfuse's among its own: the input had a problem no kfuse
    # check named (mutate_programs --options seed 7914: an expand_shape's
    # output_shape left at the old size, refused only at the bufferized
    # memref.expand_shape), a failure to look at, not a refusal
    from kfuse.errors import CompileError, ParseError, UnsupportedOpError
    upstream = CompileError("kfuse: stage 'codegen' failed", diagnostics=[
        "loc(\"-\":2:8): 'memref.expand_shape' op invalid output shape provided at pos 1"])
    assert mutate_programs._refusal(upstream, "refused")["outcome"] == "unnamed"
    assert mutate_programs._refusal(upstream, "cuda-refused")["outcome"] == "unnamed"
    named = CompileError("kfuse: stage 'normalize' failed", diagnostics=[
        "loc(\"-\":2:8): kfuse: output_shape gives dimension 1 of this "
        "tensor.expand_shape as 16, but its result type 'tensor<1x8192xi64>' has 8192 there"])
    assert mutate_programs._refusal(named, "refused")["outcome"] == "refused"
    by_pass = CompileError("kfuse: stage 'codegen' failed", diagnostics=[
        "loc(\"-\":4:3): fusion-generic-to-gpu: operand #0 must be a buffer"])
    assert mutate_programs._refusal(by_pass, "cuda-refused")["outcome"] == "cuda-refused"
    # (the parser's and verifier's errors on the input name the user's op;
    # an option refused in Python has no diagnostics)
    parse = ParseError("kfuse: <input> is not valid MLIR", diagnostics=[
        "<input>:3:5: 'linalg.yield' op type of yield operand 1 is 'f32'"])
    assert mutate_programs._refusal(parse, "refused")["outcome"] == "refused"
    option = CompileError("option row_cluster=2 needs thread-block clusters")
    assert mutate_programs._refusal(option, "cuda-refused")["outcome"] == "cuda-refused"
    unsupported = UnsupportedOpError("kfuse cannot generate code for 'memref.reshape'",)
    assert mutate_programs._refusal(unsupported, "refused")["outcome"] == "refused"
