#!/usr/bin/env bash
# Everything a GPU session checks, in one command on the GPU machine (from the
# repository root, artifacts compiled here first with `make bench-artifacts`
# and carried along: about 55 MB). Writes logs and JSON under $OUT (or
# ./gpu-out):
#   tests.log      test_gpu.py + test_runtime.py on .artifacts/tests
#   tests_c4.log   test_gpu.py on .artifacts/c4/tests (row_chunks=4), if present
#   suite.json     bench_suite.py with every variant (name__...), and its log
#
#   bash bench/gpu_session.sh [tests|bench]   (default: both; a device call is
#                                              limited to 10 minutes, so a long
#                                              suite may need its own call)
set -u
what=${1:-all}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONPATH=python PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
if [ "$what" != bench ]; then
    KFUSE_GPU_ARTIFACTS=.artifacts/tests python3 -m pytest -q -p no:cacheprovider \
        test/python/test_gpu.py test/python/test_runtime.py > "$out/tests.log" 2>&1
    tail -3 "$out/tests.log"
    if [ -d .artifacts/c4/tests ]; then
        KFUSE_GPU_ARTIFACTS=.artifacts/c4/tests python3 -m pytest -q -p no:cacheprovider \
            test/python/test_gpu.py > "$out/tests_c4.log" 2>&1
        tail -3 "$out/tests_c4.log"
    fi
fi
[ "$what" = tests ] && exit 0
python3 bench/bench_suite.py --artifacts .artifacts/suite --variants \
    --out "$out/suite.json" > "$out/suite.log" 2>&1
tail -40 "$out/suite.log"
