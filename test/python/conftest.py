import os
import sys

# Import kfuse from this checkout's python/ directory.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python")))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device (skipped when kfuse.runtime.cuda_available() is false)")
