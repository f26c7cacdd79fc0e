"""Exceptions a kfuse user can see. Every error a user can cause is one of these."""


class KfuseError(Exception):
    """Base class of every error kfuse raises on purpose."""


class BuilderError(KfuseError, ValueError):
    """A program built with the builder API is ill-formed (shape, dtype, operand)."""


class UnsupportedOpError(KfuseError):
    """The input uses an operation kfuse cannot compile; the message names it."""


class CompileError(KfuseError):
    """A compiler stage failed. ``diagnostics`` holds the MLIR diagnostics, ``repro``
    the fuse-opt command line that reproduces the failure when one could be written."""

    def __init__(self, message, diagnostics=(), repro=None):
        super().__init__(message)
        self.diagnostics = list(diagnostics)
        self.repro = repro


class ParseError(CompileError):
    """The MLIR text given to kfuse.compile does not parse or verify."""


class CallError(KfuseError, TypeError):
    """A compiled program was called with the wrong number, shape or dtype of arguments."""


class DeviceError(KfuseError, RuntimeError):
    """No usable GPU, or the CUDA driver reported an error; the message says which."""


class GuardError(KfuseError, IndexError):
    """A call of a compiled program read a tensor at an index outside it (a gather
    whose index comes from the data: a token id past the vocabulary, a label past the
    classes). The program read in-bounds elements instead, so its outputs are not
    meaningful; the message names each gather that failed and one index that did.
    ``failed`` holds their messages, ``indices`` that index of each (None where the
    program recorded none)."""

    def __init__(self, message, failed=(), indices=None):
        super().__init__(message)
        self.failed = list(failed)
        self.indices = list(indices) if indices is not None else [None] * len(self.failed)


class ArtifactError(KfuseError):
    """A saved program directory is missing files or does not match this kfuse version."""


class EmulatorError(KfuseError):
    """A kernel run by the PTX emulator did something a GPU leaves undefined
    (an out-of-bounds or misaligned access, a data race, a barrier or shuffle
    not every thread reaches) or never finished; the message names the PTX
    statement, block and thread."""


class PtxError(KfuseError):
    """PTX the emulator cannot read or does not support; the message names it."""
