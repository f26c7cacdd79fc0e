import os
import sys
import tempfile

import pytest

# Import kfuse from this checkout's python/ directory.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python")))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device (skipped when kfuse.runtime.cuda_available() is false)")


@pytest.fixture(autouse=True, scope="session")
def _reproducers_in_the_session_tmp(tmp_path_factory):
    """A failed stage writes a reproducer directory (tempfile.mkdtemp), and
    many tests fail compiles on purpose: keep those under pytest's own
    temporary directory (pruned by pytest) instead of piling up in /tmp."""
    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("tempfile"))
    yield
    tempfile.tempdir = old
