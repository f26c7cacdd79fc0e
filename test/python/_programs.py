"""The .mlir test programs under test/python/programs/, by file name."""
import os

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def program_text(name: str) -> str:
    with open(os.path.join(PROGRAMS, name)) as f:
        return f.read()
