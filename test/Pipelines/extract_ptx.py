"""Prints the PTX held by the gpu.binary ops of an MLIR module.

    python extract_ptx.py module.mlir > kernels.ptx

fusion-target-cuda ends with gpu-module-to-binary{format=isa}: each
gpu.binary holds #gpu.object attributes whose string is the PTX text, escaped
the way MLIR prints string attributes (\\XX hex escapes for non-printable
bytes, \\" and \\\\). This reads the module text, so it needs no MLIR Python
bindings; it fails if no PTX is found.
"""

import re
import sys

# A string literal as MLIR prints it.
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
_HEX = re.compile(r"\\([0-9A-Fa-f]{2})|\\(.)", re.S)


def unescape(text):
    out = bytearray()
    pos = 0
    for m in _HEX.finditer(text):
        out += text[pos:m.start()].encode("utf-8")
        if m.group(1) is not None:
            out.append(int(m.group(1), 16))
        else:
            c = m.group(2)
            out += {"n": b"\n", "t": b"\t", "\\": b"\\", '"': b'"'}.get(c, c.encode())
        pos = m.end()
    out += text[pos:].encode("utf-8")
    return out.decode("utf-8")


def ptx_objects(module_text):
    """PTX strings of every #gpu.object in every gpu.binary, in order."""
    found = []
    for line in module_text.splitlines():
        if not line.lstrip().startswith("gpu.binary"):
            continue
        for m in _STRING.finditer(line):
            text = unescape(m.group(1))
            if ".version" in text and ".target" in text:
                found.append(text)
    return found


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: extract_ptx.py MODULE.mlir\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        objects = ptx_objects(f.read())
    if not objects:
        sys.stderr.write("extract_ptx.py: no PTX object in a gpu.binary in %s\n"
                         % argv[1])
        return 1
    sys.stdout.write("\n".join(objects))
    if not objects[-1].endswith("\n"):
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
