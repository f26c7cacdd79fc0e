"""bench/sass_loops.py: innermost loops of disassembled kernels, their
instructions and global traffic per iteration. The parser on a fixed
listing always; a compiled program through ptxas and nvdisasm where both
are installed (skipped otherwise, saying which is missing)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import sass_loops  # noqa: E402

# (nvdisasm -c's form: a kernel's section, labels, addressed instructions;
# an outer loop around an inner one, the kernel's closing self-branch)
LISTING = """
//--------------------- .text.k_g0             --------------------------
\t.section\t.text.k_g0,"ax",@progbits
k_g0:
.text.k_g0:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   IADD3 R2, R2, 0x1, RZ ;
.L_x_1:
        /*0020*/                   LDG.E.128 R4, desc[UR4][R8.64] ;
        /*0030*/              @!P1 LDG.E R3, desc[UR4][R8.64+0x10] ;
        /*0040*/                   FADD R4, R4, R5 ;
        /*0050*/                   STG.E.64 desc[UR4][R10.64], R4 ;
        /*0060*/              @!P0 BRA `(.L_x_1) ;
        /*0070*/                   LDG.E.U16 R6, desc[UR4][R12.64] ;
        /*0080*/              @P2 BRA `(.L_x_0) ;
        /*0090*/                   EXIT ;
.L_x_2:
        /*00a0*/                   BRA `(.L_x_2);
//--------------------- .text.k_g1             --------------------------
k_g1:
.text.k_g1:
        /*0000*/                   LDG.E.64 R2, desc[UR4][R4.64] ;
        /*0010*/                   FMUL R2, R2, R3 ;
        /*0020*/                   STG.E desc[UR4][R6.64], R2 ;
        /*0030*/                   EXIT ;
"""


def test_parses_kernels_loops_and_traffic():
    kernels = sass_loops.parse_sass(LISTING)
    assert set(kernels) == {"k_g0", "k_g1"}
    k = kernels["k_g0"]
    assert k["labels"] == {".L_x_0": 0x10, ".L_x_1": 0x20, ".L_x_2": 0xa0}
    # the predicated load's opcode, not its guard
    assert [op for _, op, _ in k["insns"]][3:5] == ["LDG.E", "FADD"]
    # the inner loop only: the outer one holds it, the last branch is to itself
    assert sass_loops.innermost_loops(k) == [(0x20, 0x60)]
    s = sass_loops.loop_stats(k, 0x20, 0x60)
    assert (s["insns"], s["load_bytes"], s["store_bytes"]) == (5, 16 + 4, 8)
    assert s["per_128B"] == pytest.approx(4 * 5 / 28, abs=0.01)
    assert dict(s["opcodes"]) == {"LDG": 2, "FADD": 1, "STG": 1, "BRA": 1}
    assert sass_loops.access_bytes("LDG.E.U16") == 2
    assert sass_loops.access_bytes("LDG.E.U8.CONSTANT") == 1
    assert sass_loops.access_bytes("FADD") == 0
    assert sass_loops.innermost_loops(kernels["k_g1"]) == []


def test_a_compiled_softmax_streams_its_rows(tmp_path, capsys):
    ptxas = sass_loops.find_ptxas()
    missing = [t for t, found in (("ptxas", ptxas and os.path.exists(ptxas)),
                                  ("nvdisasm", sass_loops.find_nvdisasm())) if not found]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed")
    import kfuse
    from kfuse import builder as kb
    p = kb.Program("lse")
    x = p.input("x", (64, 50000), "f32")
    m = x.max(axis=1, keepdims=True)
    p.output(kb.log(kb.exp(x - m).sum(axis=1)) + m.sum(axis=1), name="y")
    d = kfuse.compile(p, target="cuda", chip="sm_90").save(tmp_path / "lse")
    res = sass_loops.analyze(d, nvdisasm=sass_loops.find_nvdisasm())
    loops = [loop for k in res.values() for loop in k["loops"] if loop["load_bytes"]]
    # one streaming loop over the row: loads, an exp (MUFU) per element
    assert loops and all(loop["store_bytes"] == 0 for loop in loops)
    ops = dict(loops[0]["opcodes"])
    assert ops["LDG"] >= 1 and ops["MUFU"] >= 1
    sass_loops.main([d])
    assert "| lse | lse_g0 |" in capsys.readouterr().out
