#!/usr/bin/env bash
# Everything a GPU session checks, on the GPU machine (from the repository
# root, artifacts compiled here first with `make bench-artifacts`). A device
# call carries at most 64 MiB and runs at most 10 minutes, so the work comes
# in parts, each carrying only its artifacts:
#   bash bench/gpu_session.sh tests   carry .artifacts/tests (about 49 MiB):
#        tests.log     test_gpu.py + test_runtime.py on .artifacts/tests
#   bash bench/gpu_session.sh wide    carry .artifacts/tests_wide (about 50 MiB):
#        tests_wide.log  test_gpu.py on .artifacts/tests_wide (rows of 262144:
#                      clusters, streaming; long rows split with a tail;
#                      two blocks an SM, row_occupancy=2)
#   bash bench/gpu_session.sh c8      carry .artifacts/c8 (about 63 MiB):
#        tests_c8.log  test_gpu.py on .artifacts/c8/tests (row_chunks=8)
#   bash bench/gpu_session.sh s0      carry .artifacts/s0 (about 63 MiB):
#        tests_s0.log  test_gpu.py on .artifacts/s0/tests (row_chunks=0: every
#                      row kernel streams, max and sum of exp in one pass)
#        (c8 and s0 are now more than a call carries with the tree: copy the
#        program directories wanted into a folder of their own, carry that,
#        and point KFUSE_GPU_ARTIFACTS at it, as session 31 did)
#   bash bench/gpu_session.sh new     carry .artifacts/tests_new (about 44 MiB):
#        tests_new.log  test_gpu.py on the programs no GPU has run yet
#                      (make_artifacts.NEW_ON_HARDWARE); `bench` runs them
#                      too, first, where .artifacts/tests_new is carried
#   bash bench/gpu_session.sh bench   carry .artifacts/suite (about 13 MiB):
#        suite.json    bench_suite.py with every variant (name__...), and its log;
#        compare.md    bench/compare.py on it: targets met, variants vs defaults;
#        occupancy.log  cluster_occupancy.py on the occupancy_* programs
#        (ONLY="softmax_w32768 softmax_w32768__occ2 ..." bash bench/gpu_session.sh
#        bench: only those programs, a variant after its workload; every
#        workload also compiles torch.compile cold, up to seconds each, and a
#        run over all 150 programs has not been timed against LIMIT)
#   bash bench/gpu_session.sh owed    carry .artifacts/suite and .artifacts/tests_new
#        (about 57 MiB, 63 with the tree: measured 2026-12-07, just under the
#        64 a call carries; make_artifacts.TUNED_PAIRS keeps it so): new (its
#        tuned_softmax_f32 tests kfuse.autotune's runtime choice), then bench
#        over the programs
#        still owed a hardware time ($OWED below, or ONLY=...), and the
#        occupancy report, then `kernels` (each part timed out at LIMIT, the
#        report at 60 s, kernels at KLIMIT: give the device call LIMIT * 2 +
#        60 s + KLIMIT or so)
#   bash bench/gpu_session.sh kernels carry .artifacts/suite:
#        kernels.md    kernel_times.py: each kernel of the programs of several
#                      kernels timed (prefix programs) against the bytes it
#                      moves, and torch.profiler's kernels of kfuse and of
#                      torch.compile (KERNELS= other suite directories; at
#                      most KLIMIT seconds, default 150, its JSON written after
#                      each program; `owed` runs it last); with each launch's
#                      clusters or blocks at once and its waves of them
#   bash bench/gpu_session.sh probe   carry .artifacts/suite:
#        probe.md      timing_probe.py: short programs (with temporaries, with
#                      programmatic launches) timed per call, batched, from an
#                      idle GPU and on the host (PROBE= other suite directories)
#   bash bench/gpu_session.sh first   carry .artifacts/suite and .artifacts/tests_wide
#        (about 68 MiB with the tree, measured 2026-12-07: more than a call
#        carries since tests_wide grew; run `owed`, or `bench` and `wide` in
#        calls of their own): bench, then wide, in one call
# (Sizes without each program's stages/, which make_artifacts.py drops unless
# --keep-stages.) (no argument: all five, for a machine that has every artifact). Logs and
# JSON go under $OUT (or ./gpu-out). Each part stops after $LIMIT seconds
# (default 240): a kernel that hangs must not spend the session's device time.
# A session lent 15 minutes of device time (a machine's start takes one or
# two of them) fits two calls: `LIMIT=200 KLIMIT=100 bash
# bench/gpu_session.sh owed` (timeout_s about 580: the programs no GPU has
# run, then the numbers still owed, suite.json written after each
# workload), then, with five minutes left, `LIMIT=200 bash
# bench/gpu_session.sh tests` (timeout_s 260); wide, c8 and s0 wait for a
# session with more.
set -u
what=${1:-all}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONPATH=python PYTHONUNBUFFERED=1
limit=${LIMIT:-240}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
    KFUSE_GPU_ARTIFACTS=.artifacts/tests timeout "$limit" python3 -m pytest -q -p no:cacheprovider \
        test/python/test_gpu.py test/python/test_runtime.py > "$out/tests.log" 2>&1
    tail -3 "$out/tests.log"
fi
bench() {
    # (ONLY="a a__v b ...": those programs alone, each variant after its
    # workload, whose peers' times it shares; default: every workload, then
    # every variant)
    local sel="--variants"
    [ -n "${ONLY:-}" ] && sel="--only $ONLY"
    timeout "$limit" python3 bench/bench_suite.py --artifacts .artifacts/suite $sel \
        --out "$out/suite.json" > "$out/suite.log" 2>&1
    tail -40 "$out/suite.log"
    # the targets, variants against their defaults, times against the
    # last full run with these defaults (BEFORE= another JSON)
    python3 bench/compare.py "$out/suite.json" \
        --before "${BEFORE:-bench/results/2026-11-23-h100-suite-new-defaults.json}" > "$out/compare.md"
    cat "$out/compare.md"
    # how many clusters of 2, 4, 8 and 16 blocks the GPU holds at once (and of
    # the persistent variants, whose launches the runtime cuts to that)
    timeout 60 python3 bench/cluster_occupancy.py .artifacts/suite/occupancy_* $(ls -d .artifacts/suite/*__ps* 2>/dev/null) > "$out/occupancy.log" 2>&1
    cat "$out/occupancy.log"
}
new_tests() {
    [ -d .artifacts/tests_new ] || return 0
    KFUSE_GPU_ARTIFACTS=.artifacts/tests_new timeout "$limit" python3 -m pytest -q \
        -p no:cacheprovider test/python/test_gpu.py > "$out/tests_new.log" 2>&1
    tail -3 "$out/tests_new.log"
}
if [ "$what" = new ] || [ "$what" = first ] || [ "$what" = bench ] || [ "$what" = all ] \
        || [ "$what" = owed ]; then
    new_tests
fi
# The variants no GPU has timed yet, each after its workload's default: the
# persistent kernels (row_persist: as many clusters or blocks as the GPU
# holds, or at most 15 / 132), the L2 prefetch (row_prefetch), two blocks an
# SM (row_occupancy=2), and the workloads torch.compile led on the H200
# (the elementwise ones also with 2 or 4 vectors a thread, __v2 / __v4), and
# layernorm with its registers capped for 4 blocks an SM (__mnc4, PTX
# edited: 40 -> 32 registers, 8 bytes spilled; torch.compile led it by 2-3
# us), bn_train_nhwc, furthest behind torch.compile there (its store now over
# positions and channels in vectors, against the store over the slices,
# __slicestore; twice the slices, __sm264), and the same over 64 channels,
# bn_train_nhwc_c64, whose store's lanes now go 16 a position; the split
# stores that read x again in the order that finds the end of every slice
# still in L2 (__l2order, PTX edited); the NCHW row tiles of 16 and 32
# rows (whole 64- and 128-byte pieces of each channel, not 32-byte sectors:
# softmax_nchw reads x once and ran at 0.68 of the copy bandwidth), and
# bn_train_nchw over clusters of 16 blocks, two an SM (__cl16); and the
# 262144-wide softmax over clusters of 4 (__cl4, 11 of a thread's 16
# vectors in shared memory: its 256 rows in 8 waves where the GPU holds 32
# such clusters at once, 128 SMs; an H100 holds 15 clusters of 8, 120 SMs,
# so 18 waves: bounds of 0.97 and 0.86 of the SMs' time); l2_normalize,
# whose store now runs over pieces of the slices, 8192 blocks of 256
# threads, against the slices' 1024 of 512 (__slicestore), and with its
# store in the order that finds the end of every slice in L2 (__l2order: x
# is 64 MiB, about the L2; read front to back again it misses throughout);
# LAMB's step over BERT-base's 120 vectors, its one-block kernels packed
# into two launches (fusion-pack-launches) against a launch each (__nopack),
# and over all 199 parameters, the matrices' kernels packed too (__packbig),
# and their partials kernels of 64 threads a block, as before the
# underfilled streamed rows took more threads (__trip4);
# last, since torch.compile's cold compile of a 199-parameter loop may take
# a while (suite.json is written after each workload). First, streamed rows
# the trips do not divide, their whole trips untested against every trip
# tested (__nopeel; row_peel): cross-entropy over 50257 and 32000 logits,
# argmax over 128256 (bench/issue_counts.py, PTX warp-instructions per
# 128 B: 13.0 against 19.3, 15.6 against 16.5 and 18.8 against 19.5, the
# online sums' rescale approximate in both; softmax_xent_v50257__trip16
# 10.9, in 32 registers a thread, two blocks of 1024 an SM). Then the
# same for a thread per row (the split partials of the NHWC statistics and
# of colsum_prime: bn_var_nhwc 8.2 against 13.5, colsum_prime 2.4 against
# 4.1), and the cross-entropy programs after their label pick became one
# gather a row (softmax_xent 15.6 -> 10.9, lm_loss 15.8 -> 11.1), and
# whose exps' SASS shrank since (ex2.approx.ftz where no output sees a
# subnormal: bench/sass_loops.py, softmax_xent's loop 187 -> 127 SASS,
# rmsnorm_silu 321 -> 273, group_norm_silu 820 -> 700). Also layernorm
# and rmsnorm_silu, where torch.compile led, with their inputs' loads .nc
# (__nc, readonly_inputs=True: the weights' loads move above the output's
# stores; and with the default's blocks an SM, __nc_mnc3 / __nc_mnc4), and
# gelu_bwd_bias, whose kernel takes 32 registers so, not 40.
OWED="softmax_xent_v50257 softmax_xent_v50257__tuned softmax_w262144
      softmax_w262144__tuned softmax_w32768 softmax_w32768__tuned layernorm
      layernorm__tuned rmsnorm_silu rmsnorm_silu__tuned relu_bn_add_relu
      relu_bn_add_relu__tuned bias_gelu bias_gelu__tuned softmax_xent
      softmax_xent__tuned bn_train_nhwc bn_train_nhwc__tuned softmax softmax__tuned
      softmax_xent_v50257__nopeel softmax_xent_v50257__trip16
      softmax_xent_v50257__trip16_nopeel softmax_xent__nopeel lm_loss lm_loss__nopeel
      bn_var_nhwc bn_var_nhwc__nopeel colsum_prime colsum_prime__nopeel group_norm_silu
      group_norm_silu_b1 gelu_bwd_bias gelu_bwd_bias__nc argmax_v128256
      argmax_v128256__nopeel softmax_w262144__cl4 softmax_w262144__psauto
      softmax_w262144__ps15 softmax_w262144__pf16 softmax_w262144__occ2
      softmax_w32768__psauto softmax_w32768__ps132 softmax_w32768__pf132
      softmax_w32768__occ2 layernorm__psauto layernorm__pf528 layernorm__mnc4
      layernorm__nc layernorm__nc_mnc3 rmsnorm_silu__nc rmsnorm_silu__nc_mnc4
      rmsnorm_silu__psauto rmsnorm_silu__pf528 softmax__psauto bias_gelu__v2
      bias_gelu__v4 ew_chain ew_chain__v2 relu_bn_add_relu__v2 l2norm
      bn_train_nhwc__slicestore bn_train_nhwc__sm264 bn_train_nhwc__pdllate
      bn_train_nhwc__l2order bn_train_nhwc__nopeel bn_train_nhwc_c64
      bn_train_nhwc_c64__slicestore bn_train_nhwc_c64__l2order softmax_dim0
      softmax_dim0__slicestore softmax_dim0__l2order softmax_dim0__tile16
      softmax_dim0__tile32 softmax_nchw softmax_nchw__tile16 softmax_nchw__tile32
      bn_train_nchw bn_train_nchw__cl16 l2_normalize l2_normalize__slicestore
      l2_normalize__l2order softmax_xent_v50257__trip16_occ2
      softmax_xent_v50257__trip8_occ2 lamb_bert_vectors lamb_bert_vectors__nopack
      lamb_bert lamb_bert__nopack lamb_bert__packbig lamb_bert__trip4"
kernels() {
    local dirs=""
    for n in ${KERNELS:-bn_train_nhwc softmax_dim0 l2_normalize bn_var_nhwc \
               softmax_w262144 softmax_w262144__cl4 softmax_w32768 bn_train_nchw \
               softmax_nchw group_norm_silu bn_train_nhwc__l2order softmax_dim0__l2order \
               bn_train_nhwc_c64 layernorm_bwd l2_normalize__l2order}; do
        [ -d ".artifacts/suite/$n" ] && dirs="$dirs .artifacts/suite/$n"
    done
    timeout "${KLIMIT:-150}" python3 bench/kernel_times.py $dirs --profiler --peers \
        --out "$out/kernels.json" > "$out/kernels.md" 2>&1
    cat "$out/kernels.md"
}
if [ "$what" = owed ]; then
    ONLY=$(echo ${ONLY:-$OWED}) bench
    kernels
    exit 0
fi
[ "$what" = kernels ] && kernels
[ "$what" = first ] && bench
if [ "$what" = probe ]; then
    dirs=""
    for n in ${PROBE:-bn_var_nhwc bn_var_nhwc__nopdl l2_normalize l2norm colsum \
               group_norm_silu_b1 softmax_w256}; do
        dirs="$dirs .artifacts/suite/$n"
    done
    timeout "$limit" python3 bench/timing_probe.py $dirs --peers --out "$out/probe.json" \
        > "$out/probe.md" 2>&1
    cat "$out/probe.md"
fi
if [ "$what" = wide ] || [ "$what" = all ] || [ "$what" = first ]; then
    KFUSE_GPU_ARTIFACTS=.artifacts/tests_wide timeout "$limit" python3 -m pytest -q -p no:cacheprovider \
        test/python/test_gpu.py > "$out/tests_wide.log" 2>&1
    tail -3 "$out/tests_wide.log"
fi
if [ "$what" = c8 ] || [ "$what" = all ]; then
    KFUSE_GPU_ARTIFACTS=.artifacts/c8/tests timeout "$limit" python3 -m pytest -q -p no:cacheprovider \
        test/python/test_gpu.py > "$out/tests_c8.log" 2>&1
    tail -3 "$out/tests_c8.log"
fi
if [ "$what" = s0 ] || [ "$what" = all ]; then
    KFUSE_GPU_ARTIFACTS=.artifacts/s0/tests timeout "$limit" python3 -m pytest -q -p no:cacheprovider \
        test/python/test_gpu.py > "$out/tests_s0.log" 2>&1
    tail -3 "$out/tests_s0.log"
fi
[ "$what" = all ] || [ "$what" = bench ] || exit 0
bench
