"""Parser for the PTX that kfuse's CUDA target emits (LLVM's NVPTX back end).

Turns a module's text into kernels: parameters, register classes, shared
and local variables, cluster shape, and a flat list of statements (guard,
opcode split at its dots, operands) with labels resolved to statement
indices (calls of the module's `.func`s inlined: parameters as registers,
the callee's registers and labels renamed per call site, `ret` a branch past
it); and the module's global variables (libdevice's tables) with their
initial bytes. The PTX emulator (`emulator.py`) executes these. Only numpy
is needed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ..errors import PtxError


@dataclass(frozen=True)
class Reg:
    name: str


@dataclass(frozen=True)
class Imm:
    text: str            # as written: 12, -1, 0x1F, 0f3F800000, 0d3FF0000000000000


@dataclass(frozen=True)
class Sym:
    name: str            # a shared variable, a parameter or a label


@dataclass(frozen=True)
class Mem:
    base: Optional[object]   # Reg, Sym or None (an absolute address)
    offset: int


@dataclass(frozen=True)
class Vec:
    items: Tuple[object, ...]   # Reg or Sym("_") (an ignored lane)


@dataclass
class Stmt:
    line: int                     # 1-based line in the PTX text
    text: str                     # the statement as written (for messages)
    guard: Optional[Tuple[str, bool]]   # (predicate register, negated)
    op: Tuple[str, ...]           # opcode split at '.' ("ld", "global", "v4", "b32")
    args: Tuple[object, ...]      # second destination (a|b) as a tuple of two


@dataclass
class SharedVar:
    name: str
    offset: int
    size: int


@dataclass
class GlobalVar:
    """A module-level `.global` variable: its bytes as initialized (zeros
    where the declaration gives no initializer)."""
    name: str
    align: int
    data: bytes


@dataclass
class Kernel:
    name: str
    params: List[Tuple[str, str]]          # (name, type: u64, u32, f32, ...)
    regs: Dict[str, str] = field(default_factory=dict)   # register -> class (pred, b16, ...)
    shared: Dict[str, SharedVar] = field(default_factory=dict)
    shared_bytes: int = 0
    local: Dict[str, SharedVar] = field(default_factory=dict)   # per thread (.local)
    local_bytes: int = 0
    globals: Dict[str, GlobalVar] = field(default_factory=dict)  # the module's
    cluster: Tuple[int, int, int] = (1, 1, 1)
    body: List[Stmt] = field(default_factory=list)
    labels: Dict[str, int] = field(default_factory=dict)
    # jump tables (a label's `.branchtargets`) -> their labels, for brx.idx
    branch_tables: Dict[str, List[str]] = field(default_factory=dict)


_SIZES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
          "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "s16x2": 4, "u16x2": 4,
          "b64": 8, "u64": 8, "s64": 8, "f64": 8, "pred": 1}


def type_size(t: str) -> int:
    return _SIZES[t]


def int_literal(text: str) -> int:
    """A PTX integer: decimal or 0x hex, optionally negative, optional U suffix."""
    t = text.rstrip("uU")
    neg = t.startswith("-")
    t = t[1:] if neg else t
    v = int(t[2:], 16) if t[:2].lower() == "0x" else int(t, 10)
    return -v if neg else v


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _split_top(s: str) -> List[str]:
    """Splits at commas outside braces and brackets."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


_INT = re.compile(r"^-?(0[xX][0-9a-fA-F]+|\d+)[uU]?$")
_FLT = re.compile(r"^0[fFdD][0-9a-fA-F]+$")


def _operand(tok: str, line: int, stmt: str):
    tok = tok.strip()
    if tok.startswith("{") and tok.endswith("}"):
        return Vec(tuple(_operand(t, line, stmt) for t in _split_top(tok[1:-1])))
    if tok.startswith("[") and tok.endswith("]"):
        inner = tok[1:-1].replace(" ", "")
        if _INT.match(inner):
            return Mem(None, int_literal(inner))
        m = re.match(r"^([%$\w.]+)(?:\+(-?(?:0[xX][0-9a-fA-F]+|\d+)))?$", inner)
        if not m or not (m.group(1) or m.group(2)):
            raise PtxError(f"line {line}: cannot read the address {tok!r} in {stmt!r}")
        base, off = m.group(1), int_literal(m.group(2)) if m.group(2) else 0
        if base is None:
            return Mem(None, off)
        if _INT.match(base):
            return Mem(None, int_literal(base) + off)
        return Mem(Reg(base) if base.startswith("%") else Sym(base), off)
    if "|" in tok:   # shfl's second destination, setp's p|q
        a, b = tok.split("|")
        return (_operand(a, line, stmt), _operand(b, line, stmt))
    if _FLT.match(tok) or _INT.match(tok):
        return Imm(tok.rstrip("uU") if _INT.match(tok) else tok)
    if tok.startswith("%") or tok == "_":
        return Reg(tok)
    if tok.startswith("!"):
        raise PtxError(f"line {line}: negated operands are not supported: {stmt!r}")
    return Sym(tok)


_KERNEL = re.compile(r"\.(?:visible\s+|weak\s+)?\.?entry\s+([$\w]+)\s*\(", re.S)


_CLUSTER_DIMS = re.compile(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def _closing_brace(src: str, brace: int, what: str) -> int:
    """The index of the '}' closing the '{' at `brace` (scopes nest; vector
    operands sit inside statements)."""
    depth = 0
    for i in range(brace, len(src)):
        if src[i] == "{":
            depth += 1
        elif src[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise PtxError(f"{what}: unterminated body")


def _cluster_of(directives: str) -> Tuple[int, int, int]:
    """The cluster shape a kernel's directives (between its parameters and its
    body) name with .reqnctapercluster; (1, 1, 1) where they name none."""
    m = _CLUSTER_DIMS.search(directives)
    return tuple(int(g) if g else 1 for g in m.groups()) if m else (1, 1, 1)


def cluster_shapes(text: str) -> Dict[str, Tuple[int, int, int]]:
    """The cluster shape of each kernel of a PTX module, read from the kernels'
    headers alone (no statement is parsed: cheap enough for loading a module)."""
    src = _strip_comments(text)
    shapes = {}
    for m in _KERNEL.finditer(src):
        close = src.index(")", m.end())
        shapes[m.group(1)] = _cluster_of(src[close + 1:src.index("{", close)])
    return shapes


def grid_waiting_kernels(text: str) -> Set[str]:
    """Kernels of a PTX module that wait for the grids before them in the
    stream (griddepcontrol.wait), the ones a programmatic launch may start
    early. Read from the text alone, like cluster_shapes."""
    src = _strip_comments(text)
    waiting = set()
    for m in _KERNEL.finditer(src):
        brace = src.index("{", src.index(")", m.end()))
        body = src[brace:_closing_brace(src, brace, f"kernel {m.group(1)}")]
        if re.search(r"\bgriddepcontrol\.wait\s*;", body):
            waiting.add(m.group(1))
    return waiting


@dataclass
class _Func:
    """A module's `.func`: the names of its return and value parameters,
    and its body's text."""
    name: str
    rets: List[str]
    params: List[str]
    body: str


# A `.func` declared (`;`) or defined (`{`): its results, name, parameters.
FUNC_HEADER = re.compile(r"(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.func\s*(\(([^)]*)\))?\s*"
                         r"([$\w%]+)\s*(?:\(([^)]*)\))?\s*([;{])", re.S)


def _param_list(text: str, what: str) -> List[str]:
    """The names of a `.func`'s parameters (scalars or byte arrays)."""
    out = []
    for p in _split_top(text or ""):
        m = re.fullmatch(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([$\w]+)\s*(\[\d+\])?",
                         p.strip())
        if m is None or m.group(1) not in _SIZES:
            raise PtxError(f"{what}: cannot read parameter {p!r}")
        out.append(m.group(2))
    return out


def _functions(src: str) -> Tuple[str, Dict[str, _Func]]:
    """The module's `.func` definitions, and `src` with them (and their
    declarations) blanked out, line breaks kept."""
    funcs: Dict[str, _Func] = {}
    out, prev, pos = [], 0, 0
    while True:
        m = FUNC_HEADER.search(src, pos)
        if m is None:
            break
        end = m.end()
        if m.group(5) == "{":
            name = m.group(3)
            close = _closing_brace(src, m.end() - 1, f"function {name}")
            funcs[name] = _Func(name, _param_list(m.group(2), f"function {name}"),
                                _param_list(m.group(4), f"function {name}"),
                                src[m.end():close])
            end = close + 1
        out.append(src[prev:m.start()])
        out.append("\n" * src.count("\n", m.start(), end))
        prev = pos = end
    out.append(src[prev:])
    return "".join(out), funcs


_CALL = re.compile(r"call(?:\.uni)?\s+(?:\(([^)]*)\)\s*,\s*)?([$\w]+)\s*"
                   r"(?:,\s*\(([^)]*)\))?\s*;")
_PARAM_DECL = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([$\w]+)\s*(\[\d+\])?\s*;")
_PARAM_ST = re.compile(r"st\.param\.(\w+)\s+\[\s*([$\w]+)\s*(?:\+\s*(\d+))?\s*\]\s*,\s*([^;]+);")
_PARAM_LD = re.compile(r"ld\.param\.(\w+)\s+([^,;]+),\s*\[\s*([$\w]+)\s*(?:\+\s*(\d+))?\s*\]\s*;")


def _inline_calls(body: str, funcs: Dict[str, _Func], counter: List[int],
                  widths: Optional[Dict[str, int]] = None, depth: int = 0) -> str:
    """`body` with every call replaced by the callee's body (registers and
    labels renamed for the call site, `ret` a branch past it), on one line
    so that the caller's lines keep their numbers. A call's parameters,
    scalars or byte arrays, become registers, one per byte offset accessed
    (`retval0[16]` written as a b64 at 0 and a b32 at 8: two), which the
    caller's stores and the callee's loads (and the callee's stores and the
    caller's loads) move values through. Recursion, calls through pointers
    and an offset read at another width than written are refused."""
    if "call" not in body and ".param" not in body:
        return body
    if depth > 8:
        raise PtxError("function calls nest more than 8 deep (recursion?): the PTX "
                       "emulator inlines calls")
    widths = {} if widths is None else widths

    def slot(name: str, off, t: str, what: str) -> Tuple[str, int]:
        if t not in _SIZES or t == "pred":
            raise PtxError(f"{what}: cannot move a .{t} through a call parameter")
        bits = max(16, 8 * _SIZES[t])
        key = f"{name}_o{int(off or 0)}"
        if widths.setdefault(key, bits) != bits:
            raise PtxError(f"{what}: byte {int(off or 0)} of call parameter {name!r} read "
                           f"or written {bits} bits wide, elsewhere {widths[key]}: the PTX "
                           f"emulator moves each offset at one width")
        return key, bits

    def moves(text: str, stores: Dict[str, str], loads: Dict[str, str]) -> str:
        """Parameter stores and loads as moves: `stores` / `loads` map the
        parameter names written / read here to the call's slot names."""
        def st(m):
            if m.group(2) not in stores:
                return m.group(0)
            key, bits = slot(stores[m.group(2)], m.group(3), m.group(1), m.group(0).strip())
            return f".reg .b{bits} {key}; mov.b{bits} {key}, {m.group(4).strip()};"

        def ld(m):
            if m.group(3) not in loads:
                return m.group(0)
            key, bits = slot(loads[m.group(3)], m.group(4), m.group(1), m.group(0).strip())
            return f".reg .b{bits} {key}; mov.b{bits} {m.group(2).strip()}, {key};"
        return _PARAM_LD.sub(ld, _PARAM_ST.sub(st, text))

    # the caller's call parameters (declared in each call sequence)
    declared = {m.group(2) for m in _PARAM_DECL.finditer(body)}
    body = _PARAM_DECL.sub("", body)
    body = moves(body, {n: n for n in declared}, {n: n for n in declared})

    def call(m):
        name = m.group(2)
        f = funcs.get(name)
        if f is None:
            raise PtxError(f"call of {name!r}: no such function in the module (calls "
                           f"through pointers and external functions are not supported "
                           f"by the PTX emulator)")
        rets = [r.strip() for r in (m.group(1) or "").split(",") if r.strip()]
        args = [a.strip() for a in (m.group(3) or "").split(",") if a.strip()]
        if len(rets) != len(f.rets) or len(args) != len(f.params):
            raise PtxError(f"call of {name!r} with {len(args)} argument(s) and "
                           f"{len(rets)} result(s); it takes {len(f.params)} and "
                           f"returns {len(f.rets)}")
        counter[0] += 1
        pfx = f"__c{counter[0]}_"
        text = f.body
        # the callee's registers and labels, renamed for this call site
        names = set()
        for decl in re.findall(r"\.reg\s+\.\w+\s+([^;]+);", text):
            for d in decl.replace(",", " ").split():
                names.add(re.sub(r"<\d+>$", "", d))
        regs = sorted((n for n in names if n.startswith("%")), key=len, reverse=True)
        if regs:
            text = re.sub("(" + "|".join(re.escape(r) for r in regs) + r")(\d*)\b",
                          lambda r: r.group(1).replace("%", "%" + pfx, 1) + r.group(2), text)
        labels = set(re.findall(r"(?:^|[;{}\s])([$\w]+):", text))
        if labels:
            text = re.sub(r"(?<![$\w])(" + "|".join(re.escape(x) for x in labels) + r")(?![$\w])",
                          lambda r: pfx + r.group(1).lstrip("$"), text)
        # its parameters are the call's; its stores to its results, the call's
        text = moves(text, dict(zip(f.rets, rets)), dict(zip(f.params, args)))
        text = re.sub(r"(?<![$\w.])ret(?:\.uni)?\s*;", f"bra {pfx}end;", text)
        text = _inline_calls(text, funcs, counter, widths, depth + 1)
        return " ".join(text.split("\n")) + f" {pfx}end: "
    return _CALL.sub(call, body)


def parse(text: str) -> Dict[str, Kernel]:
    """Kernels of a PTX module by name, calls of the module's `.func`s
    inlined. Raises PtxError on what it cannot read (.const and .extern
    variables but the dynamic shared memory, calls of other functions)."""
    src, funcs = _functions(_strip_comments(text))
    kernels: Dict[str, Kernel] = {}
    spans: List[Tuple[int, int]] = []   # (start, end) of each kernel
    pos = 0
    for m in _KERNEL.finditer(src):
        if m.start() < pos:
            continue
        name = m.group(1)
        # parameters up to the matching ')'
        close = src.index(")", m.end())
        params = []
        for p in _split_top(src[m.end():close]):
            parts = p.split()
            ptype = next((t[1:] for t in parts if t[1:] in _SIZES), None)
            if not parts or ptype is None or "[" in p:
                raise PtxError(f"kernel {name}: parameter {p!r} is not a scalar or pointer")
            params.append((parts[-1], ptype))
        brace = src.index("{", close)
        k = Kernel(name, params)
        k.cluster = _cluster_of(src[close + 1:brace])
        i = _closing_brace(src, brace, f"kernel {name}")
        body_start = src.count("\n", 0, brace + 1) + 1
        _parse_body(k, _inline_calls(src[brace + 1:i], funcs, [0]), body_start)
        kernels[name] = k
        spans.append((m.start(), i + 1))
        pos = i
    outside, prev = [], 0
    for a, b in spans:
        outside.append(src[prev:a])
        prev = b
    outside = "".join(outside) + src[prev:]
    variables = _global_variables(outside)
    for k in kernels.values():
        k.globals = variables
    # The block's dynamic shared memory (`.extern .shared .align A .b8 name[];`):
    # after the kernel's static shared variables, `smem` bytes of the launch.
    for m in _DYNAMIC_SHARED.finditer(outside):
        align = int(m.group(1) or 1)
        for k in kernels.values():
            off = -(-k.shared_bytes // align) * align
            k.shared[m.group(2)] = SharedVar(m.group(2), off, 0)
            k.shared_bytes = off
    outside = _DYNAMIC_SHARED.sub("", outside)
    for bad in (".const", ".func", ".extern"):
        if re.search(r"^\s*(\.visible\s+|\.weak\s+)?" + re.escape(bad) + r"\s", outside, re.M):
            raise PtxError(f"module-level {bad} declarations are not supported by the "
                           f"PTX emulator")
    return kernels


_DYNAMIC_SHARED = re.compile(
    r"^\s*\.extern\s+\.shared\s+(?:\.align\s+(\d+)\s+)?\.b8\s+([$\w]+)\s*\[\s*\]\s*;", re.M)

_GLOBAL_VAR = re.compile(
    r"^\s*(?:\.visible\s+|\.weak\s+)?\.global\s+([^;=]*?)([$\w]+)\s*(?:\[(\d*)\])?\s*"
    r"(?:=\s*([^;]*))?;", re.M)


def _global_variables(outside: str) -> Dict[str, GlobalVar]:
    """The module-level `.global` variables declared in `outside` (the text
    between kernels), such as `.global .align 4 .b8 name[24] = {65, 144};`."""
    variables: Dict[str, GlobalVar] = {}
    for m in _GLOBAL_VAR.finditer(outside):
        mods, name, count, init = m.group(1).split(), m.group(2), m.group(3), m.group(4)
        cls = next((t[1:] for t in mods if t[1:] in _SIZES), None)
        align = int(mods[mods.index(".align") + 1]) if ".align" in mods else 1
        if cls is None or count == "" or any(
                t not in (".align", f".{cls}") and not t.isdigit() for t in mods):
            raise PtxError(f"module-level variable {m.group(0).strip()!r} is not supported "
                           f"by the PTX emulator")
        width = _SIZES[cls]
        n = int(count) if count else 1
        data = bytearray(width * n)
        if init is not None:
            items = init.strip().strip("{}").replace(",", " ").split()
            if len(items) > n or not cls.startswith(("b", "u", "s")):
                raise PtxError(f"module-level variable {name!r}: initializer "
                               f"{init.strip()[:60]!r} is not supported by the PTX emulator")
            for j, x in enumerate(items):
                v = int_literal(x) & ((1 << (8 * width)) - 1)
                data[j * width:(j + 1) * width] = v.to_bytes(width, "little")
        variables[name] = GlobalVar(name, align, bytes(data))
    if re.search(r"^\s*(\.visible\s+|\.weak\s+)?\.global\s",
                 _GLOBAL_VAR.sub("", outside), re.M):
        raise PtxError("a module-level .global declaration the PTX emulator cannot read")
    return variables


def _parse_body(k: Kernel, body: str, first_line: int) -> None:
    line = first_line
    i, n = 0, len(body)
    last_label = None   # (the label a `.branchtargets` right after it names)
    while i < n:
        ch = body[i]
        if ch == "\n":
            line += 1
            i += 1
            continue
        if ch.isspace() or ch in "{}":
            i += 1
            continue
        m = re.match(r"([$\w]+):", body[i:])
        if m:
            k.labels[m.group(1)] = len(k.body)
            last_label = m.group(1)
            i += m.end()
            continue
        end = body.index(";", i)
        stmt = " ".join(body[i:end].split())
        stmt_line = line
        line += body.count("\n", i, end)
        i = end + 1
        if stmt.startswith(".branchtargets"):
            if last_label is None:
                raise PtxError(f"line {stmt_line}: .branchtargets without a label")
            k.branch_tables[last_label] = stmt[len(".branchtargets"):].replace(",", " ").split()
            last_label = None
            continue
        last_label = None
        if stmt.startswith("."):
            _directive(k, stmt, stmt_line)
            continue
        guard = None
        gm = re.match(r"@(!?)(%?[A-Za-z_$][\w$]*)\s+", stmt)
        if gm:
            guard = (gm.group(2), gm.group(1) == "!")
            stmt = stmt[gm.end():]
        sp = stmt.find(" ")
        opcode, rest = (stmt, "") if sp < 0 else (stmt[:sp], stmt[sp + 1:])
        args = tuple(_operand(t, stmt_line, stmt) for t in _split_top(rest))
        k.body.append(Stmt(stmt_line, stmt, guard, tuple(opcode.split(".")), args))
    # scoped registers are written without '%' ({ .reg .b32 tmp; ... })
    def reg(a):
        if isinstance(a, Sym) and a.name in k.regs:
            return Reg(a.name)
        if isinstance(a, Vec):
            return Vec(tuple(reg(x) for x in a.items))
        if isinstance(a, tuple):
            return tuple(reg(x) for x in a)
        return a
    for s in k.body:
        s.args = tuple(reg(a) for a in s.args)
        if s.op[0] == "bra" and (len(s.args) != 1 or not isinstance(s.args[0], Sym)
                                 or s.args[0].name not in k.labels):
            raise PtxError(f"line {s.line}: branch to an unknown label: {s.text!r}")
        if s.op[0] == "brx" and (len(s.args) != 2 or not isinstance(s.args[1], Sym)
                                 or s.args[1].name not in k.branch_tables
                                 or any(t not in k.labels
                                        for t in k.branch_tables[s.args[1].name])):
            raise PtxError(f"line {s.line}: indirect branch through an unknown table: "
                           f"{s.text!r}")


def _directive(k: Kernel, stmt: str, line: int) -> None:
    parts = stmt.replace(",", " ").split()
    if parts[0] == ".reg":
        cls = parts[1][1:]
        for decl in parts[2:]:
            m = re.match(r"^([%\w]+)<(\d+)>$", decl)
            if m:
                for j in range(int(m.group(2))):
                    k.regs[f"{m.group(1)}{j}"] = cls
            else:
                k.regs[decl] = cls
        return
    if parts[0] in (".shared", ".local"):
        align, cls, decl = 1, None, None
        j = 1
        while j < len(parts):
            if parts[j] == ".align":
                align = int(parts[j + 1])
                j += 2
                continue
            if parts[j].startswith(".") and parts[j][1:] in _SIZES:
                cls = parts[j][1:]
            elif not parts[j].startswith("."):
                decl = parts[j]
            j += 1
        if cls is None or decl is None:
            raise PtxError(f"line {line}: cannot read {stmt!r}")
        m = re.match(r"^([$\w]+)(?:\[(\d+)\])?$", decl)
        if not m:
            raise PtxError(f"line {line}: cannot read {stmt!r}")
        size = _SIZES[cls] * (int(m.group(2)) if m.group(2) else 1)
        if parts[0] == ".local":
            off = -(-k.local_bytes // align) * align
            k.local[m.group(1)] = SharedVar(m.group(1), off, size)
            k.local_bytes = off + size
            return
        off = -(-k.shared_bytes // align) * align
        k.shared[m.group(1)] = SharedVar(m.group(1), off, size)
        k.shared_bytes = off + size
        return
    if parts[0] == ".param":
        raise PtxError(f"line {line}: function calls ({stmt!r} declares a call's parameter) "
                       f"are not supported by the PTX emulator")
    if parts[0] in (".extern", ".global", ".const"):
        raise PtxError(f"line {line}: {parts[0]} memory ({stmt!r}) is not supported by the "
                       f"PTX emulator")
    if parts[0] in (".pragma", ".loc", ".file"):
        return
    raise PtxError(f"line {line}: unknown directive {stmt!r}")
