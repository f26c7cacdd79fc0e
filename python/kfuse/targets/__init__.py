"""Execution targets that need the compiler (MLIR) at run time."""
