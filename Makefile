# The two commands of the README, and what they need. Each target sets itself
# up: a virtual environment with the pinned wheels (.venv), a CMake/Ninja
# build of the native part (build/), then the job. Re-running is quick: the
# venv is rebuilt only when pyproject.toml changes and ninja rebuilds only
# what changed.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.kfuse-deps
BUILD  := build

.PHONY: demo test build lit pytest bench-artifacts sanitize clean

demo: build
	$(VPY) -m kfuse demo

test: build
	$(VENV)/bin/lit -sv test
	$(VPY) -m pytest -q -n auto --maxprocesses 8 test/python

build: $(BUILD)/build.ninja
	$(VENV)/bin/ninja -C $(BUILD)

$(STAMP): pyproject.toml tools/deps.py
	$(PYTHON) -m venv $(VENV)
	$(VPY) tools/deps.py > $(VENV)/requirements.txt
	$(VPY) -m pip install -q --disable-pip-version-check -r $(VENV)/requirements.txt
	$(VPY) -c 'import site, sys; open(site.getsitepackages()[0] + "/kfuse-dev.pth", "w").write(sys.argv[1] + "\n")' $(CURDIR)/python
	touch $@

# (the CMake configuration both build trees share)
CONFIGURE = cmake -G Ninja -S . -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja \
	  -DKFUSE_SITE_PACKAGES=$$($(VPY) -c 'import site; print(site.getsitepackages()[0])') \
	  -DPython3_EXECUTABLE=$(CURDIR)/$(VPY)

$(BUILD)/build.ninja: $(STAMP) CMakeLists.txt
	$(CONFIGURE) -B $(BUILD)

# Compiled CUDA programs for the GPU tests and benchmarks (no GPU needed here);
# bench/gpu_session.sh runs them all on the GPU machine.
bench-artifacts: build
	$(VPY) bench/make_artifacts.py --out .artifacts --suite --row-variants
	$(VPY) bench/make_artifacts.py --out .artifacts/c8 --row-chunks 8
	$(VPY) bench/make_artifacts.py --out .artifacts/s0 --row-chunks 0

# The lit suite under AddressSanitizer and UndefinedBehaviorSanitizer: fuse-opt
# alone, built in build-san (the Python extension of build/ stays as it is;
# MLIR's own libraries are not instrumented). A report fails the target even
# where a test expected fuse-opt to fail (`not fuse-opt`), since each is
# written to build-san/reports. allow_user_poisoning=0: LLVM's allocators,
# inlined into kfuse's code, poison their slabs, which MLIR's uninstrumented
# code then fills without unpoisoning (a false use-after-poison).
SAN := build-san
sanitize: $(STAMP)
	$(CONFIGURE) -B $(SAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
	$(VENV)/bin/ninja -C $(SAN) fuse-opt
	rm -rf $(SAN)/reports && mkdir -p $(SAN)/reports
	KFUSE_BUILD_DIR=$(SAN) \
	  ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0:log_path=$(CURDIR)/$(SAN)/reports/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:log_path=$(CURDIR)/$(SAN)/reports/ubsan \
	  $(VENV)/bin/lit -sv test
	@if ls $(SAN)/reports/* >/dev/null 2>&1; then \
	  echo "sanitizer reports in $(SAN)/reports:"; head -40 $(SAN)/reports/*; exit 1; fi

clean:
	rm -rf $(BUILD) $(SAN) $(VENV)
