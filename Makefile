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

.PHONY: demo test build lit pytest bench-artifacts clean

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

$(BUILD)/build.ninja: $(STAMP) CMakeLists.txt
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja \
	  -DKFUSE_SITE_PACKAGES=$$($(VPY) -c 'import site; print(site.getsitepackages()[0])') \
	  -DPython3_EXECUTABLE=$(CURDIR)/$(VPY)

# Compiled CUDA programs for the GPU tests and benchmarks (no GPU needed here);
# bench/gpu_session.sh runs them all on the GPU machine.
bench-artifacts: build
	$(VPY) bench/make_artifacts.py --out .artifacts --suite --row-variants
	$(VPY) bench/make_artifacts.py --out .artifacts/c8 --row-chunks 8
	$(VPY) bench/make_artifacts.py --out .artifacts/s0 --row-chunks 0

clean:
	rm -rf $(BUILD) $(VENV)
