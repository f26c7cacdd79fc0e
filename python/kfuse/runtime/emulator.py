"""A PTX emulator: runs kfuse's CUDA kernels on the host, with numpy.

It executes the PTX of a compiled CUDA program (the same text the GPU loads)
for every thread of every block, and checks what a GPU would leave undefined
or hang on:

- global loads and stores outside every buffer of the launch, and vector
  accesses that are not aligned to their size;
- shared-memory accesses outside the kernel's shared variables;
- `bar.sync` / cluster barriers that not every thread of the block (cluster)
  reaches, or that threads of one warp reach by different instructions, and
  `shfl.sync` whose member lanes do not all take part, or that reads a lane
  which does not;
- mbarriers (init, arrive with expect-tx, try_wait.parity) and st.async into
  a cluster block's shared memory: a signal to an mbarrier that is not
  initialized, more arrivals than a phase expects, st.async into a block
  that has exited, a load of bytes st.async wrote before the loading thread
  saw their mbarrier's phase complete, and phases that never complete;
- L2 prefetches (cp.async.bulk.prefetch, which read nothing into the kernel)
  and bulk copies into shared memory (cp.async.bulk, completing an mbarrier:
  their bytes checked as st.async's) of ranges outside every buffer or off
  16-byte pieces;
- kernels that never finish (a step limit).

Threads run SIMT-style: all threads of a batch of blocks are numpy lanes;
each step executes the statement at the lowest program counter among the
threads that can run, for every thread standing there (threads that branched
apart run separately and meet again where their paths join). A thread at a
barrier or shuffle waits until its block (cluster, warp) is complete there.
Whole blocks of one thread-block cluster run in the same batch.

Atomics (`atom.inc.u32`, `atom.add`, `atom.exch`) on global memory run one
thread after another (an exchange leaves the last thread's value). A
gpu-scope fence changes the epoch of its block's later global accesses for
the race checks: accesses on either side of fences do not race
(what a split row's last block relies on: the others' partials, stored
before their fence and count, read after its own count and fence).

Not modelled: memory ordering (memory is sequentially consistent here, so
fences and the release / relaxed qualifiers of barriers are not checked; a
cluster barrier's arrive already waits for the whole cluster, so an
mbarrier's initialization always precedes other blocks' signals here).

Floating point follows PTX: f32 add/sub/mul/div/sqrt round once to nearest
(numpy does the same); fma rounds once (exactly, through float64 and an
error term; f64 fma is accurate to an ulp, not exact); `.rm`/`.rp`/`.rz`
round in their direction; `.approx` functions (ex2, rcp, sqrt, rsqrt) use
numpy's correctly rounded ones, so results can differ from a GPU's in the
last bits. It is slow (a step costs microseconds per thread batch): meant
for tests with small shapes, not for timing.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from ..errors import ArtifactError, CallError, EmulatorError, KfuseError
from .cuda import ParamPack
from .plan import HoldsPlan, LaunchPlan
from .ptx import (Imm, Kernel, Mem, PtxError, Reg, Stmt, Sym, Vec, int_literal, parse,
                  type_size)


_STORAGE = {"pred": np.dtype(np.bool_), "b8": np.dtype(np.uint8), "b16": np.dtype(np.uint16),
            "b32": np.dtype(np.uint32), "b64": np.dtype(np.uint64),
            "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32),
            "u64": np.dtype(np.uint64), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16),
            "s32": np.dtype(np.int32), "s64": np.dtype(np.int64), "f16": np.dtype(np.uint16),
            "bf16": np.dtype(np.uint16), "f32": np.dtype(np.uint32), "f64": np.dtype(np.uint64)}

_NUM = {"b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16,
        "s16": np.int16, "f16": np.float16, "bf16": np.uint16, "b32": np.uint32,
        "u32": np.uint32, "s32": np.int32, "f32": np.float32, "f16x2": np.uint32,
        "bf16x2": np.uint32, "s16x2": np.uint32, "u16x2": np.uint32, "b64": np.uint64,
        "u64": np.uint64, "s64": np.int64, "f64": np.float64, "pred": np.bool_}

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _on_halves(fn, half):
    """`fn` on each 16-bit half of two packed 32-bit registers (as `half`)."""
    def split(v):
        v = np.asarray(v).astype(np.uint32)
        return [(v & np.uint32(0xFFFF)).astype(np.uint16).view(half),
                (v >> np.uint32(16)).astype(np.uint16).view(half)]

    def run(a, b):
        with np.errstate(all="ignore"):
            lo, hi = (np.asarray(fn(x, y)).astype(half).view(np.uint16).astype(np.uint32)
                      for x, y in zip(split(a), split(b)))
        return lo | (hi << np.uint32(16))
    return run

GLOBAL_BASE = 0x7F00_0000_0000      # first global address (as device pointers look)
_GUARD = 512                         # bytes between buffers
_RANK_SHIFT = 24                     # shared::cluster addresses: (rank + 1) << 24 | offset
_STEP_LIMIT = 2_000_000
_SHADOW_LIMIT = 16 << 20             # bytes of buffers up to which global races are checked


_CANONICAL_NAN = {2: np.array(0x7FFF, np.uint16).view(np.float16),
                  4: np.array(0x7FFFFFFF, np.uint32).view(np.float32),
                  8: np.array(0x7FFFFFFFFFFFFFFF, np.uint64).view(np.float64)}


def _bf16_to_f32(u):
    return (np.asarray(u).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _f32_to_bf16(x):
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16))
    nan = ((u >> np.uint64(16)) | np.uint64(0x40))
    return np.where(np.isnan(x), nan, r).astype(np.uint16)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_f32(s, err, mode):
    """float32 nearest to (or `mode`-rounded from) the exact value s + err, where
    s is float64 and err a float64 term far below s's last bit."""
    c = s.astype(np.float32)
    cd = c.astype(np.float64)
    if mode == "rn":
        # s halfway between c and a neighbour (numpy kept the even one): the
        # error term decides
        up = np.nextafter(c, np.float32(np.inf))
        dn = np.nextafter(c, np.float32(-np.inf))
        to_up = (s > cd) & (s - cd == (up.astype(np.float64) - cd) / 2) & (err > 0)
        to_dn = (s < cd) & (cd - s == (cd - dn.astype(np.float64)) / 2) & (err < 0)
        return np.where(to_up, up, np.where(to_dn, dn, c))
    above = (cd > s) | ((cd == s) & (err < 0))
    below = (cd < s) | ((cd == s) & (err > 0))
    if mode == "rm":
        return np.where(above & np.isfinite(s), np.nextafter(c, np.float32(-np.inf)), c)
    if mode == "rp":
        return np.where(below & np.isfinite(s), np.nextafter(c, np.float32(np.inf)), c)
    if mode == "rz":
        away = np.where(s > 0, above, below)
        return np.where(away & np.isfinite(s) & (c != 0), np.nextafter(c, np.float32(0)), c)
    raise PtxError(f"rounding mode {mode!r}")


def _split(a):
    c = a * 134217729.0  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _fma64(a, b, c):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, f = _two_sum(p, c)
    r = s + (e + f)
    # (where an infinity or NaN takes part, or a term overflows: the split of
    # a past 2^996, p + c past the largest double, c infinite beside a finite
    # product, whose error terms are then inf - inf: a * b + c as numpy has it)
    return np.where(np.isfinite(r), r, p + c)


def _is_float(t: str) -> bool:
    """A PTX float type: f16, f16x2, bf16, bf16x2, f32, f64."""
    return t[0] == "f" or t.startswith("bf16")


def _bits(v, elem):
    """Values as the unsigned integers of their bits, `elem` wide."""
    v = np.asarray(v)
    if v.dtype.itemsize == np.dtype(elem).itemsize:
        return v.view(elem)
    return v.view(_UINT[v.dtype.itemsize]).astype(elem)


# set bits of each byte value
_POP8 = np.array([bin(i).count("1") for i in range(256)], np.uint32)


def _popcount(x):
    """Set bits of each unsigned integer of `x`, as u32."""
    x = np.ascontiguousarray(x)
    return _POP8[x.view(np.uint8).reshape(x.shape + (x.itemsize,))].sum(-1).astype(np.uint32)


def _leading_zeros(x, bits):
    """Leading zero bits of each unsigned integer of `x` (`bits` wide), as u32."""
    v = np.asarray(x).astype(np.uint64)
    length = np.zeros(v.shape, np.uint32)
    for step in (32, 16, 8, 4, 2, 1):
        if step >= bits:
            continue
        high = v >= np.uint64(1 << step)
        length += np.where(high, np.uint32(step), np.uint32(0))
        v = np.where(high, v >> np.uint64(step), v)
    length += (v > 0).astype(np.uint32)
    return np.uint32(bits) - length


def _ftz(x):
    x = np.asarray(x)
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _mulhi_u64(a, b):
    a = a.astype(np.uint64)
    b = b.astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1 = a & m32, a >> s32
    b0, b1 = b & m32, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    return p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)


def _mulhi_s64(a, b):
    """High 64 bits of the signed 128-bit product: the unsigned high word less
    b where a is negative and a where b is negative (two's complement)."""
    a = np.asarray(a).astype(np.int64)
    b = np.asarray(b).astype(np.int64)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    hi = _mulhi_u64(ua, ub)
    hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
    return hi.view(np.int64)


# ------------------------------------------------------------------ launch state

class _Batch:
    """Threads of some blocks, run together."""

    def __init__(self, kernel: Kernel, blocks: Sequence[Tuple[int, int, int]],
                 block: Tuple[int, int, int], grid: Tuple[int, int, int], smem: int,
                 params: Dict[str, int], memory: "_Memory", batch: int = 0):
        self.k = kernel
        self.batch = batch
        self.memory = memory
        self.params = params
        self.grid = grid
        self.block_dim = block
        nt = block[0] * block[1] * block[2]
        nb = len(blocks)
        self.n = n = nt * nb
        t = np.arange(n, dtype=np.int64)
        self.block_of = t // nt
        local = t % nt
        self.local = local
        self.tid = (local % block[0], (local // block[0]) % block[1],
                    local // (block[0] * block[1]))
        ctaid = np.asarray(blocks, dtype=np.int64).reshape(nb, 3)
        self.ctaid_of_block = ctaid
        self.ctaid = tuple(ctaid[self.block_of, j] for j in range(3))
        cx, cy, cz = kernel.cluster
        rank = (ctaid[:, 0] % cx) + cx * ((ctaid[:, 1] % cy) + cy * (ctaid[:, 2] % cz))
        cid = (ctaid[:, 0] // cx) + (grid[0] // cx) * (
            (ctaid[:, 1] // cy) + (grid[1] // cy) * (ctaid[:, 2] // cz))
        self.rank_of_block = rank
        self.cluster_of_block = cid
        # block (in this batch) of (cluster, rank)
        self.block_at = {(int(c), int(r)): b for b, (c, r) in enumerate(zip(cid, rank))}
        self.lane = local % 32
        self.warp = self.block_of * (-(-nt // 32)) + local // 32
        self.nwarps = nb * -(-nt // 32)
        self.pc = np.zeros(n, dtype=np.int64)
        self.alive = np.ones(n, dtype=bool)
        self.waiting = np.zeros(n, dtype=bool)
        self.regs: Dict[str, np.ndarray] = {}
        # each thread's .local memory (libdevice's argument reduction)
        self.lmem = np.zeros((n, -(-kernel.local_bytes // 16) * 16), dtype=np.uint8)
        self.carry = np.zeros(n, dtype=np.uint64)   # the carry flag (.cc, addc, madc)
        self.smem_bytes = -(-(kernel.shared_bytes + smem) // 16) * 16
        self.shared = np.zeros((nb, max(self.smem_bytes, 16)), dtype=np.uint8)
        self.sshadow = _Shadow(self.shared.size)
        self.rshadow = _Shadow(self.shared.size)   # remote (cluster) accesses
        self.epoch = np.zeros(nb, dtype=np.int64)  # barriers each block has passed
        self.wepoch = np.zeros(nb * -(-nt // 32), dtype=np.int64)  # shuffles of each warp
        self.cepoch = np.zeros(nb, dtype=np.int64)  # cluster barriers
        self.gfence = np.zeros(nb, dtype=np.int64)  # gpu-scope fences (see _Shadow)
        # mbarriers by flat shared byte (block * bytes + offset):
        # [expected arrivals, pending arrivals, tx-count, completed phases]
        self.mbar: Dict[int, list] = {}
        # bytes st.async wrote: the mbarrier it signalled (-1: none) and its phase then
        self.async_bar = np.full(self.shared.size, -1, dtype=np.int64)
        self.async_phase = np.zeros(self.shared.size, dtype=np.int64)
        # per mbarrier, the phases each thread has seen complete (try_wait);
        # None until a st.async runs (loads then skip the async-bytes check)
        self.seen: Optional[Dict[int, np.ndarray]] = None
        lin = ctaid[:, 0] + grid[0] * (ctaid[:, 1] + grid[1] * ctaid[:, 2])
        self.lin = lin                               # block id within the grid
        self.gid = lin[self.block_of] * nt + local   # thread id within the launch

    # registers
    def reg(self, name: str) -> np.ndarray:
        arr = self.regs.get(name)
        if arr is None:
            cls = self.k.regs.get(name)
            if cls is None:
                raise PtxError(f"kernel {self.k.name}: undeclared register {name}")
            arr = self.regs[name] = np.zeros(self.n, dtype=_STORAGE[cls])
        return arr


_SPACES = ("global", "shared", "local", "param", "const", "shared::cluster",
           "shared::cta")


def _opcode_class(op: Tuple[str, ...]) -> str:
    """A statement's opcode for the issue counts: its name, with the state
    space of a memory access (ld.global, st.shared, atom.global)."""
    space = next((p for p in op[1:] if p in _SPACES), None)
    return f"{op[0]}.{space}" if space else op[0]


def _warps_in(B: "_Batch", sel: np.ndarray) -> int:
    """How many warps threads `sel` (ascending) belong to."""
    w = B.warp[sel]
    return int(np.count_nonzero(w[1:] != w[:-1])) + 1 if w.size else 0


class _Memory:
    """Global memory: one byte arena holding every buffer of a launch sequence,
    each at a 256-byte aligned address, with guard bytes between them."""

    def __init__(self, sizes: Sequence[int], labels: Sequence[str]):
        self.starts, self.ends, self.labels = [], [], list(labels)
        off = 0
        for n in sizes:
            off = -(-off // 256) * 256
            self.starts.append(GLOBAL_BASE + off)
            self.ends.append(GLOBAL_BASE + off + n)
            off += n + _GUARD
        self.arena = np.full(-(-max(off, 16) // 16) * 16, 0xFF, dtype=np.uint8)
        # race checks on global memory, for launch sequences of modest size
        self.shadow = _Shadow(self.arena.size) if self.arena.size <= _SHADOW_LIMIT else None
        self.launch = 0
        self.symbols: Dict[str, int] = {}   # module variables: name -> address
        self.reset_counts()
        self._starts = np.asarray(self.starts, dtype=np.uint64)
        self._ends = np.asarray(self.ends, dtype=np.uint64)

    def reset_counts(self) -> None:
        """Global accesses of the current launch, per kind: requests, sectors,
        bytes, and bytes by buffer; and the PTX instructions its warps issued,
        by kernel statement (KernelProgram._run)."""
        n = len(self.starts)
        self.counts = {k: [0, 0, 0, np.zeros(n, np.int64)] for k in ("load", "store")}
        self.issued: Optional[np.ndarray] = None

    def count(self, kind: str, warps, addr, total: int) -> None:
        """One access instruction: a request per warp, the 32-byte sectors
        each warp touches (accesses are aligned: one sector each)."""
        c = self.counts[kind]
        c[0] += int(np.unique(warps).size)
        c[1] += int(np.unique((warps.astype(np.uint64) << np.uint64(40))
                              + (addr >> np.uint64(5))).size)
        c[2] += int(addr.size) * total
        j = np.searchsorted(self._starts, addr, side="right") - 1
        c[3] += np.bincount(j, minlength=len(self.starts)) * total

    def unique_bytes(self, i: int) -> Tuple[int, int]:
        """Bytes of buffer `i` the current launch read and wrote (needs the shadow)."""
        a, b = self.starts[i] - GLOBAL_BASE, self.ends[i] - GLOBAL_BASE
        return (self.shadow.epoch_count("r", a, b, self.launch),
                self.shadow.epoch_count("w", a, b, self.launch))

    def view(self, i: int) -> np.ndarray:
        a = self.starts[i] - GLOBAL_BASE
        return self.arena[a:a + self.ends[i] - self.starts[i]]

    def check(self, addr: np.ndarray, size: int):
        """Index of the first bad access (out of every buffer) or None."""
        if addr.size == 0:
            return None
        j = np.searchsorted(self._starts, addr, side="right") - 1
        ok = (j >= 0)
        jj = np.clip(j, 0, len(self.starts) - 1)
        ok &= (addr >= self._starts[jj]) & (addr + np.uint64(size) <= self._ends[jj])
        if ok.all():
            return None
        return int(np.flatnonzero(~ok)[0])

    def nearest(self, addr: int) -> str:
        best = min(range(len(self.starts)),
                   key=lambda i: 0 if self.starts[i] <= addr < self.ends[i]
                   else min(abs(addr - self.starts[i]), abs(addr - self.ends[i])))
        return (f"{self.labels[best]} spans [{self.starts[best]:#x}, {self.ends[best]:#x}) "
                f"({self.ends[best] - self.starts[best]} bytes)")


class _Shadow:
    """Who last wrote and read each byte, and when (an epoch: the launch for
    global memory, the barrier count of the block for shared memory). An
    access races when another thread touched the byte in the same epoch, one
    of the two accesses is a write, and no barrier of their block (for global
    memory) or shuffle of their warp came between (a shfl.sync orders the
    lanes that take part, as __syncwarp does). Global accesses also carry the
    gpu-scope fences their block has passed (`gf`): two accesses after
    different numbers of them do not race (a fence is taken to publish, or
    acquire, what an atomic count then orders: a split row's last block
    reading the other blocks' partials)."""

    # Every entry is stored plus one, so that "never" (-1) is 0 and a fresh
    # shadow is np.zeros: pages the OS maps on first touch, where filling 14
    # arrays of int64 per byte with -1 wrote 112 bytes for each byte of the
    # launch's buffers, touched or not. (-2, several readers: stored as -1.)

    def __init__(self, nbytes: int):
        # who, when, block, block epoch, warp, warp epoch, gpu fences (int32
        # but the warp, which carries the batch in its upper bits)
        def fresh():
            return [np.zeros(nbytes, np.int64 if f == 4 else np.int32) for f in range(7)]
        self.w, self.r = fresh(), fresh()

    def epoch_count(self, kind: str, a: int, b: int, epoch: int) -> int:
        """Bytes of [a, b) last read ("r") or written ("w") in `epoch`."""
        return int(np.count_nonzero(getattr(self, kind)[1][a:b] == epoch + 1))

    @staticmethod
    def _clash(prev, byte, who, when, blk, bep, warp, wep, gf):
        p_who, p_when, p_blk, p_bep, p_warp, p_wep, p_gf = (a[byte] for a in prev)
        return ((p_when == when) & (p_who != who) & ~((p_blk == blk) & (p_bep != bep))
                & ~((p_warp == warp) & (p_wep != wep)) & (p_gf == gf))

    def access(self, first, total: int, who, when, blk, bep, warp, wep, new=None, old=None,
               gf=-1):
        """Index (into `first`) of the first racing access, or None. A store
        passes `new` (the bytes it writes, one row per access) and `old` (the
        bytes there now): threads that store the same bytes do not race."""
        byte = (first[:, None] + np.arange(total, dtype=np.int64)).reshape(-1)
        now = [np.repeat(np.broadcast_to(v, (len(first),)), total) + 1
               for v in (who, when, blk, bep, warp, wep, gf)]
        race = self._clash(self.w, byte, *now)
        if new is not None:
            newb = new.reshape(-1)
            race &= old.reshape(-1) != newb                # the same value: benign
            race |= self._clash(self.r, byte, *now)
            # two threads storing different bytes to one place at once
            order = np.argsort(byte, kind="stable")
            sb, sv = byte[order], newb[order]
            clash = (sb[1:] == sb[:-1]) & (sv[1:] != sv[:-1])
            if clash.any():
                race[order[1:][clash]] = True
            for a, v in zip(self.w, now):
                a[byte] = v
        else:
            same = self.r[1][byte] == now[1]
            prev = [self.r[j][byte] for j in (0, 2, 4)]   # who, block, warp
            for a, v in zip(self.r, now):
                a[byte] = v
            # several readers in one epoch: any other thread's store races,
            # unless all of them are in its block (warp) and a barrier
            # (shuffle) came after the last of them
            for j, p in zip((0, 2, 4), prev):
                mixed = (same & (p != now[j])) | (self.r[j][byte] != now[j])
                self.r[j][byte[mixed]] = -1     # (-2: several)
        if race.any():
            i = int(np.flatnonzero(race)[0])
            b = byte[i]
            self.last = (f"last written by thread #{self.w[0][b] - 1} (epoch "
                         f"{self.w[1][b] - 1}), last read by #{self.r[0][b] - 1} (epoch "
                         f"{self.r[1][b] - 1}; -2: several)")
            return i // total
        return None


# ------------------------------------------------------------------ statements

class _Exec:
    """One statement compiled to a function of (batch, selected threads)."""

    __slots__ = ("stmt", "run", "kind", "target", "mask", "ready", "targets")

    def __init__(self, stmt: Stmt, run: Optional[Callable], kind: str = "op",
                 target: int = -1):
        self.stmt = stmt
        self.run = run
        self.kind = kind        # op, bra, ret, bar, cbar, shfl, mbar, nop
        self.target = target    # bra: the statement index it jumps to
        self.mask = None        # shfl: fn(batch, threads) -> member mask per lane
        self.ready = None       # mbar: fn(batch, threads) -> whose wait is over
        self.targets = None     # brx: fn(batch, threads) -> each thread's statement index


def _where(B: _Batch, stmt: Stmt, i: Optional[int] = None) -> str:
    s = f"kernel {B.k.name}, PTX line {stmt.line} ({stmt.text!r})"
    if i is not None:
        b = int(B.block_of[i])
        s += (f", block {tuple(int(v) for v in B.ctaid_of_block[b])}, "
              f"thread {int(B.tid[0][i]), int(B.tid[1][i]), int(B.tid[2][i])}")
    return s


def _shared_target(B: _Batch, sel, a, total: int, cluster: bool, fail):
    """(block in the batch, offset) of the shared addresses `a` of threads `sel`:
    a shared::cluster address names its block by rank ((rank + 1) << 24 |
    offset), any other the thread's own block. `fail(k, message)` raises for
    access k: a rank outside the cluster, a cluster address where `cluster` is
    False, or bytes outside the block's shared memory."""
    blk = B.block_of if sel is None else B.block_of[sel]
    rank = (a >> np.uint64(_RANK_SHIFT)).astype(np.int64)
    off = (a & np.uint64((1 << _RANK_SHIFT) - 1)).astype(np.int64)
    if rank.any():
        if not cluster:
            fail(int(np.flatnonzero(rank)[0]),
                 "a shared::cluster address used by a shared::cta access")
        blk = blk.copy()
        for k in np.flatnonzero(rank):
            key = (int(B.cluster_of_block[int(blk[k])]), int(rank[k]) - 1)
            if key not in B.block_at:
                fail(int(k), f"cluster rank {key[1]} is not in this cluster")
            blk[k] = B.block_at[key]
    if (off < 0).any() or (off + total > B.smem_bytes).any():
        k = int(np.flatnonzero((off < 0) | (off + total > B.smem_bytes))[0])
        fail(k, f"shared access of {total} bytes at offset {int(off[k])} outside the "
                f"block's {B.smem_bytes} bytes of shared memory")
    return blk, off


def _check_async_bytes(B: _Batch, sel, loc, first, total: int, load: bool, fail):
    """Accesses `loc` (into `first`, flat shared bytes) of bytes st.async wrote: a
    load must come after its thread saw the phase that write signalled complete
    (mbarrier.try_wait); a store takes the bytes back from st.async."""
    byte = (first[loc][:, None] + np.arange(total, dtype=np.int64)).reshape(-1)
    bar = B.async_bar[byte]
    if not (bar >= 0).any():
        return
    if not load:
        B.async_bar[byte] = -1
        return
    threads = np.arange(B.n) if sel is None else np.asarray(sel)
    who = np.repeat(threads[loc], total)
    for b in np.unique(bar[bar >= 0]):
        at = np.flatnonzero(bar == b)
        seen = B.seen.get(int(b))
        saw = seen[who[at]] if seen is not None else np.zeros(len(at), np.int64)
        early = np.flatnonzero(saw <= B.async_phase[byte[at]])
        if early.size:
            k = int(loc[at[early[0]] // total])
            row = B.shared.shape[1]
            fail(k, f"load of shared bytes (offset {int(first[k]) % row}) that st.async "
                    f"wrote, before this thread saw the phase of their mbarrier (offset "
                    f"{int(b) % row}) complete")


def _mbar_complete(st: list) -> None:
    """Ends an mbarrier's phase once every arrival and transaction is in."""
    if st[1] == 0 and st[2] == 0:
        st[3] += 1
        st[1] = st[0]


def _low_bits(n):
    """Masks (uint64) of the low n bits, n from 0 to 255 (all 64 from 64 on)."""
    return np.where(n >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(n, np.uint64(63))) - np.uint64(1))


class _Compiler:
    def __init__(self, kernel: Kernel):
        self.k = kernel

    # operand access ---------------------------------------------------------
    def reader(self, op, t: str):
        """fn(B, sel) -> values of operand `op` read as PTX type `t` (numpy dtype)."""
        dt = np.dtype(_NUM[t])
        if isinstance(op, Reg):
            name = op.name
            if name.startswith("%") and "." in name or name in (
                    "%laneid", "%warpid", "%cluster_ctarank", "%cluster_nctarank"):
                return self.special(name, dt)
            cls = self.k.regs.get(name)
            if cls is None:
                raise PtxError(f"kernel {self.k.name}: undeclared register {name}")
            store = _STORAGE[cls]
            if dt == np.bool_:
                if store != np.bool_:
                    raise PtxError(f"register {name} is not a predicate")
                return lambda B, sel: B.reg(name) if sel is None else B.reg(name)[sel]
            if store == np.bool_:
                raise PtxError(f"predicate {name} used as a .{t} value")
            if store.itemsize == dt.itemsize:
                return (lambda B, sel: (B.reg(name) if sel is None
                                        else B.reg(name)[sel]).view(dt))
            ui = _UINT[dt.itemsize]
            return (lambda B, sel: (B.reg(name) if sel is None
                                    else B.reg(name)[sel]).astype(ui).view(dt))
        if isinstance(op, Imm):
            v = self.immediate(op.text, t)
            return lambda B, sel: v
        if isinstance(op, Sym):
            for space in (self.k.shared, self.k.local):
                if op.name in space:
                    v = np.array(space[op.name].offset, dtype=np.uint64).astype(dt)[()]
                    return lambda B, sel: v
            if op.name in self.k.globals:
                name = op.name
                return lambda B, sel: np.array(B.memory.symbols[name],
                                               dtype=np.uint64).astype(dt)[()]
            if any(op.name == p for p, _ in self.k.params):
                raise PtxError(f"parameter {op.name} used outside ld.param")
        raise PtxError(f"kernel {self.k.name}: cannot read operand {op!r}")

    @staticmethod
    def immediate(text: str, t: str):
        dt = np.dtype(_NUM[t])
        if text[:2].lower() == "0f":
            v = np.array(int(text[2:], 16), dtype=np.uint32).view(np.float32)
            if dt.kind == "f":
                return v.astype(dt)[()]
            return v.view(np.uint32).astype(dt)[()]
        if text[:2].lower() == "0d":
            v = np.array(int(text[2:], 16), dtype=np.uint64).view(np.float64)
            return v.astype(dt)[()] if dt.kind == "f" else v.view(np.uint64).astype(dt)[()]
        iv = int_literal(text)
        if dt.kind == "f":
            return dt.type(iv)
        if dt == np.bool_:
            return np.bool_(iv != 0)
        bits = dt.itemsize * 8
        return np.array(iv & ((1 << bits) - 1), dtype=_UINT[dt.itemsize]).view(dt)[()]

    def special(self, name: str, dt):
        def mk(get):
            return lambda B, sel: (get(B) if sel is None else get(B)[sel]).astype(dt)
        axes = {"x": 0, "y": 1, "z": 2}
        base, _, ax = name[1:].partition(".")
        if base == "tid":
            return mk(lambda B: B.tid[axes[ax]])
        if base == "ctaid":
            return mk(lambda B: B.ctaid[axes[ax]])
        if base == "ntid":
            return lambda B, sel: dt.type(B.block_dim[axes[ax]])
        if base == "nctaid":
            return lambda B, sel: dt.type(B.grid[axes[ax]])
        if base == "laneid":
            return mk(lambda B: B.lane)
        if base == "cluster_ctarank":
            return mk(lambda B: B.rank_of_block[B.block_of])
        if base == "cluster_nctarank":
            return lambda B, sel: dt.type(int(np.prod(B.k.cluster)))
        if base == "cluster_ctaid":
            return mk(lambda B: B.ctaid[axes[ax]] % B.k.cluster[axes[ax]])
        if base == "cluster_nctaid":
            return lambda B, sel: dt.type(B.k.cluster[axes[ax]])
        if base == "nclusterid":
            return lambda B, sel: dt.type(B.grid[axes[ax]] // B.k.cluster[axes[ax]])
        raise PtxError(f"special register {name} is not supported by the PTX emulator")

    def writer(self, op):
        """fn(B, sel, value) storing `value` (array or scalar) into register `op`."""
        if not isinstance(op, Reg):
            raise PtxError(f"cannot write to {op!r}")
        name = op.name
        if name == "_":
            return lambda B, sel, v: None
        cls = self.k.regs.get(name)
        if cls is None:
            raise PtxError(f"kernel {self.k.name}: undeclared register {name}")
        store = _STORAGE[cls]

        def conv(v):
            v = np.asarray(v)
            if v.dtype == store:
                return v
            if store == np.bool_ or v.dtype == np.bool_:
                return v.astype(store)
            if v.dtype.itemsize == store.itemsize:
                return v.view(store)
            if v.dtype.kind == "f":
                raise PtxError(f"internal: a {v.dtype} value for the {cls} register {name}")
            if v.dtype.kind == "i" and v.dtype.itemsize < store.itemsize:
                # (a signed value narrower than its register, from cvt.s8 or
                # ld.s8, is sign-extended to the register's width)
                return v.astype(np.int64).astype(store)
            return v.view(_UINT[v.dtype.itemsize]).astype(store)

        def write(B, sel, v):
            v = conv(v)
            if sel is None:
                out = np.empty(B.n, dtype=store)
                out[...] = v
                B.regs[name] = out
            else:
                B.reg(name)[sel] = v
        return write

    # statements -------------------------------------------------------------
    def compile(self, s: Stmt, labels: Dict[str, int]) -> _Exec:
        op = s.op
        h = getattr(self, "op_" + op[0].replace("::", "_"), None)
        if h is None:
            raise PtxError(f"kernel {self.k.name}, PTX line {s.line}: instruction "
                           f"{'.'.join(op)!r} is not supported by the PTX emulator")
        try:
            r = h(s, labels)
        except (KeyError, IndexError, ValueError) as e:
            raise PtxError(f"kernel {self.k.name}, PTX line {s.line}: cannot emulate "
                           f"{s.text!r} ({type(e).__name__}: {e})") from None
        return r if isinstance(r, _Exec) else _Exec(s, r)

    def _type(self, s: Stmt) -> str:
        t = s.op[-1]
        if t not in _NUM:
            raise PtxError(f"PTX line {s.line}: no type in {s.text!r}")
        return t

    def op_bra(self, s, labels):
        return _Exec(s, None, "bra", labels[s.args[0].name])

    def op_brx(self, s, labels):
        # brx.idx %r, table: to the table's %r-th label, thread by thread (a
        # switch LLVM turned into a jump table)
        if s.op[1:2] != ("idx",):
            raise PtxError(f"PTX line {s.line}: only brx.idx is supported: {s.text!r}")
        table = np.array([labels[t] for t in self.k.branch_tables[s.args[1].name]],
                         dtype=np.int64)
        ri = self.reader(s.args[0], "u32")

        def targets(B, sel):
            i = np.asarray(ri(B, sel)).astype(np.int64)
            if (i < 0).any() or (i >= len(table)).any():
                raise EmulatorError(f"brx.idx past its table of {len(table)} targets: "
                                    f"{_where(B, s)}")
            return table[i]
        ex = _Exec(s, None, "brx")
        ex.targets = targets
        return ex

    def op_ret(self, s, labels):
        return _Exec(s, None, "ret")

    op_exit = op_ret

    def op_bar(self, s, labels):
        if s.op[1] not in ("sync",) or (s.args and not (isinstance(s.args[0], Imm)
                                                         and int_literal(s.args[0].text) == 0)):
            raise PtxError(f"PTX line {s.line}: only 'bar.sync 0' is supported: {s.text!r}")
        if len(s.args) > 1:
            raise PtxError(f"PTX line {s.line}: bar.sync with a thread count: {s.text!r}")
        return _Exec(s, None, "bar")

    def op_barrier(self, s, labels):
        if s.op[1] == "cluster" and s.op[2] == "arrive":
            return _Exec(s, None, "cbar")
        if s.op[1] == "cluster" and s.op[2] == "wait":
            return _Exec(s, None, "nop")
        if s.op[1] == "sync" and not s.args[1:]:
            return self.op_bar(Stmt(s.line, s.text, s.guard, ("bar", "sync"), s.args), labels)
        raise PtxError(f"PTX line {s.line}: {s.text!r} is not supported")

    def op_fence(self, s, labels):
        # (fences within a block or cluster order nothing the checks do not;
        # a gpu-scope one counts for the race checks of global memory)
        scope = s.op[-1]
        if not (scope in ("gpu", "sys") or (s.op[0] == "membar" and scope in ("gl", "sys"))):
            return _Exec(s, None, "nop")

        def fence(B, sel):
            blocks = B.block_of if sel is None else B.block_of[sel]
            B.gfence[np.unique(blocks)] += 1
        return _Exec(s, fence)

    op_membar = op_fence

    def op_atom(self, s, labels):
        """atom[.sem][.scope][.global].inc.u32 / .add.u32 / .add.u64 / .exch.b32 /
        .exch.b64 on global memory: the threads' operations one after another,
        in thread order."""
        mods = [m for m in s.op[1:] if m not in ("relaxed", "acquire", "release", "acq_rel",
                                                   "gpu", "sys", "cta", "global")]
        if len(mods) != 2 or (mods[0], mods[1]) not in (("inc", "u32"), ("add", "u32"),
                                                         ("add", "u64"), ("exch", "b32"),
                                                         ("exch", "b64")):
            raise PtxError(f"PTX line {s.line}: only atom.inc.u32, atom.add.u32/u64 and "
                           f"atom.exch.b32/b64 on global memory are supported: {s.text!r}")
        if len(s.args) != 3 or not isinstance(s.args[1], Mem):
            raise PtxError(f"PTX line {s.line}: cannot read {s.text!r}")
        op, t = mods
        size = type_size(t)
        elem = _UINT[size]
        addresses = self._address(s, s.args[1])
        operand = self.reader(s.args[2], t)
        wr = self.writer(s.args[0])
        stmt = s

        def run(B, sel):
            a = addresses(B, sel)
            n = len(a)
            bad = np.flatnonzero(a % np.uint64(size))
            if bad.size == 0:
                k = B.memory.check(a, size)
                bad = np.array([] if k is None else [k])
            if bad.size:
                k = int(bad[0])
                i = int(k if sel is None else sel[k])
                raise EmulatorError(f"atomic {op} of {size} bytes at {int(a[k]):#x} is outside "
                                    f"every buffer or not aligned: {_where(B, stmt, i)}")
            b = np.broadcast_to(np.asarray(operand(B, sel)).astype(elem), (n,))
            view = B.memory.arena.view(elem)
            idx = ((a - np.uint64(GLOBAL_BASE)) // np.uint64(size)).astype(np.int64)
            old = np.empty(n, dtype=elem)
            for k in range(n):
                v = view[idx[k]]
                old[k] = v
                if op == "inc":
                    view[idx[k]] = 0 if v >= b[k] else v + 1
                elif op == "exch":
                    view[idx[k]] = b[k]
                else:
                    view[idx[k]] = v + b[k]       # (wraps, as the GPU's does)
            wr(B, sel, old)
        return _Exec(s, run)

    def op_griddepcontrol(self, s, labels):
        # (grids run one after another here: the grids a kernel waits for
        # have ended, and launching dependents early changes nothing)
        if s.op[1:] not in (("wait",), ("launch_dependents",)):
            raise PtxError(f"PTX line {s.line}: {s.text!r} is not supported")
        return _Exec(s, None, "nop")

    def op_cp(self, s, labels):
        """cp.async.bulk.prefetch.L2.global [addr], size: a hint to the L2 that
        reads nothing into the kernel, so nothing runs; but its range must lie
        in one buffer of the launch, start on 16 bytes and be whole 16-byte
        pieces (the GPU faults, or the PTX is invalid, otherwise).
        cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
        [dst], [src], size, [mbar]: the bytes copied into the thread's own
        block's shared memory at once, completing them on the mbarrier there,
        which loads of them must have seen complete (as st.async's)."""
        if s.op[1:] == ("async", "bulk", "prefetch", "L2", "global") and len(s.args) == 2 \
                and isinstance(s.args[0], Mem):
            return self._bulk(s, s.args[0], s.args[1], None, None)
        if s.op[1:] == ("async", "bulk", "shared::cluster", "global",
                        "mbarrier::complete_tx::bytes") and len(s.args) == 4 \
                and all(isinstance(a, Mem) for a in (s.args[0], s.args[1], s.args[3])):
            return self._bulk(s, s.args[1], s.args[2], s.args[0], s.args[3])
        raise PtxError(f"PTX line {s.line}: only cp.async.bulk.prefetch.L2.global and "
                       f"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                       f"are supported: {s.text!r}")

    def _bulk(self, s, src, nbytes, dst, mbar):
        what = "L2 prefetch" if dst is None else "bulk copy"
        addresses = self._address(s, src)
        size = self.reader(nbytes, "u32")
        to = None if dst is None else self._address(s, dst)
        flat_bar = None if mbar is None else self._mbarriers(s, mbar, True)
        stmt = s

        def run(B, sel):
            a = addresses(B, sel)
            n = np.broadcast_to(np.asarray(size(B, sel)).astype(np.uint64), a.shape)
            idx = np.arange(B.n) if sel is None else sel

            def fail(k, msg):
                raise EmulatorError(f"{msg}: {_where(B, stmt, int(idx[k]))}")
            d = None if to is None else to(B, sel)
            for k in range(len(a)):
                if a[k] % np.uint64(16) or n[k] % np.uint64(16) or n[k] == 0 or (
                        d is not None and d[k] % np.uint64(16)):
                    fail(k, f"{what} of {int(n[k])} bytes at {int(a[k]):#x} is not in whole "
                            f"16-byte pieces from a 16-byte boundary")
                if B.memory.check(a[k:k + 1], int(n[k])) is not None:
                    fail(k, f"{what} of {int(n[k])} bytes at {int(a[k]):#x} lies outside "
                            f"every buffer of the launch (the nearest: "
                            f"{B.memory.nearest(int(a[k]))})")
            if d is None:
                return
            blk, off = _shared_target(B, sel, d, 0, True, fail)
            bars = flat_bar(B, sel)
            row = B.shared.shape[1]
            own = B.block_of if sel is None else B.block_of[sel]
            for k in range(len(a)):
                b, m = int(blk[k]), int(n[k])
                if b != int(own[k]) or bars[k] // row != b:
                    fail(k, "bulk copy into, or signalling, another block than its own")
                if int(off[k]) + m > B.smem_bytes:
                    fail(k, f"bulk copy of {m} bytes at shared offset {int(off[k])} outside "
                            f"the block's {B.smem_bytes} bytes of shared memory")
                st = B.mbar.get(int(bars[k]))
                if st is None:
                    fail(k, "bulk copy signals an mbarrier that is not initialized "
                            "(mbarrier.init)")
                g = int(a[k]) - GLOBAL_BASE
                first = b * row + int(off[k])
                B.shared.reshape(-1)[first:first + m] = B.memory.arena[g:g + m]
                if B.seen is None:
                    B.seen = {}
                B.async_bar[first:first + m] = int(bars[k])
                B.async_phase[first:first + m] = st[3]
                i = int(idx[k])
                pieces = np.uint64(a[k]) + np.arange(0, m, 16, dtype=np.uint64)
                B.memory.count("load", np.full(pieces.size, int(B.warp[i]) + (B.batch << 32),
                                               np.int64), pieces, 16)
                sh = B.memory.shadow
                if sh is not None:
                    # (read by the issuing thread, for the race checks and the
                    # bytes a launch read)
                    bl = int(B.block_of[i])
                    one = np.ones(pieces.size, np.int64)
                    r = sh.access((pieces - np.uint64(GLOBAL_BASE)).astype(np.int64), 16,
                                  one * int(B.gid[i]), B.memory.launch, one * int(B.lin[bl]),
                                  one * int(B.epoch[bl]),
                                  one * (int(B.warp[i]) + (B.batch << 40)),
                                  one * int(B.wepoch[int(B.warp[i])]), None, None,
                                  one * int(B.gfence[bl]))
                    if r is not None:
                        fail(k, f"data race on global memory at {int(pieces[r]):#x}: another "
                                f"thread of the launch writes these bytes with no barrier "
                                f"in between ({sh.last})")
                st[2] -= m
                _mbar_complete(st)
        return _Exec(s, run)

    def op_mov(self, s, labels):
        t = self._type(s)
        dst, src = s.args
        if isinstance(dst, Vec):       # unpack: mov.b64 {lo, hi}, %rd
            parts = len(dst.items)
            w = type_size(t) // parts
            rd = self.reader(src, t)
            ws = [None if (isinstance(d, Reg) and d.name == "_") else self.writer(d)
                  for d in dst.items]
            mask = (1 << (8 * w)) - 1

            def unpack(B, sel):
                v = np.asarray(rd(B, sel)).astype(np.uint64)
                for j, wr in enumerate(ws):
                    if wr is not None:
                        wr(B, sel, ((v >> np.uint64(8 * w * j)) & np.uint64(mask))
                           .astype(_UINT[w]))
            return unpack
        if isinstance(src, Vec):       # pack: mov.b64 %rd, {lo, hi}
            parts = len(src.items)
            w = type_size(t) // parts
            rds = [self.reader(x, {1: "b8", 2: "b16", 4: "b32"}[w]) for x in src.items]
            wr = self.writer(dst)

            def pack(B, sel):
                v = np.uint64(0)
                for j, rd in enumerate(rds):
                    v = v | (np.asarray(rd(B, sel)).astype(np.uint64) << np.uint64(8 * w * j))
                wr(B, sel, np.asarray(v).astype(_UINT[type_size(t)]))
            return pack
        rd = self.reader(src, t)
        wr = self.writer(dst)
        return lambda B, sel: wr(B, sel, rd(B, sel))

    def op_cvta(self, s, labels):
        if "to" not in s.op or "global" not in s.op:
            raise PtxError(f"PTX line {s.line}: only cvta.to.global is supported: {s.text!r}")
        return self.op_mov(Stmt(s.line, s.text, s.guard, ("mov", s.op[-1]), s.args), labels)

    # memory -----------------------------------------------------------------
    def _address(self, s: Stmt, mem: Mem):
        """fn(B, sel) -> the address (uint64 per thread) of a [base + offset] operand:
        a register, a shared variable, or none."""
        if isinstance(mem.base, Sym) and mem.base.name in self.k.regs:
            mem = Mem(Reg(mem.base.name), mem.offset)   # (a register named without %)
        if isinstance(mem.base, Reg):
            base = self.reader(mem.base, "u64")
        elif isinstance(mem.base, Sym):
            if mem.base.name not in self.k.shared:
                raise PtxError(f"PTX line {s.line}: unknown symbol {mem.base.name!r}")
            off0 = self.k.shared[mem.base.name].offset
            base = (lambda o: lambda B, sel: np.uint64(o))(off0)
        else:
            base = lambda B, sel: np.uint64(0)  # noqa: E731
        offset = np.uint64(mem.offset & 0xFFFFFFFFFFFFFFFF)

        def addresses(B, sel):
            a = np.asarray(base(B, sel)).astype(np.uint64) + offset
            n = B.n if sel is None else len(sel)
            return np.broadcast_to(a, (n,))
        return addresses

    def _mbarriers(self, s: Stmt, mem, cluster: bool):
        """fn(B, sel) -> flat shared byte of the 8-byte mbarrier each thread names."""
        if not isinstance(mem, Mem):
            raise PtxError(f"PTX line {s.line}: cannot read {s.text!r}")
        addresses = self._address(s, mem)

        def flat(B, sel):
            a = addresses(B, sel)

            def fail(k, msg):
                raise EmulatorError(f"{msg}: {_where(B, s, int(k if sel is None else sel[k]))}")
            bad = np.flatnonzero(a % np.uint64(8))
            if bad.size:
                fail(int(bad[0]), f"mbarrier at {int(a[bad[0]]):#x} is not 8-byte aligned")
            blk, off = _shared_target(B, sel, a, 8, cluster, fail)
            return blk * B.shared.shape[1] + off
        return flat

    def op_mbarrier(self, s, labels):
        """mbarrier.init, mbarrier.arrive[.expect_tx] (one arrival per thread) and
        mbarrier.try_wait.parity (waits here until the phase is complete)."""
        mods = s.op[1:]
        cluster = "shared::cluster" in mods
        if mods[0] == "init":
            flat = self._mbarriers(s, s.args[0], False)
            rc = self.reader(s.args[1], "u32")

            def init(B, sel):
                count = np.broadcast_to(np.asarray(rc(B, sel)), (B.n if sel is None
                                                                 else len(sel),))
                for f, c in zip(flat(B, sel).tolist(), count.tolist()):
                    B.mbar[f] = [int(c), int(c), 0, 0]
            return init
        if mods[0] == "arrive":
            expect = "expect_tx" in mods
            dst = s.args[0]
            flat = self._mbarriers(s, s.args[1], cluster)
            rtx = self.reader(s.args[2], "u32") if expect else None
            wr = self.writer(dst)

            def arrive(B, sel):
                fl = flat(B, sel)
                tx = (np.broadcast_to(np.asarray(rtx(B, sel)), fl.shape) if expect
                      else np.zeros(fl.shape, np.int64))
                for k, (f, t) in enumerate(zip(fl.tolist(), tx.tolist())):
                    st = B.mbar.get(f)
                    i = int(k if sel is None else sel[k])
                    if st is None:
                        raise EmulatorError(f"arrive on an mbarrier that is not initialized "
                                            f"(mbarrier.init): {_where(B, s, i)}")
                    st[2] += int(t)
                    st[1] -= 1
                    if st[1] < 0:
                        raise EmulatorError(f"more arrivals on an mbarrier than its phase "
                                            f"expects ({st[0]}): {_where(B, s, i)}")
                    _mbar_complete(st)
                wr(B, sel, np.zeros(len(fl), np.uint64))
            return arrive
        if mods[0] == "try_wait" and "parity" in mods:
            wp = self.writer(s.args[0])
            flat = self._mbarriers(s, s.args[1], False)
            rpar = self.reader(s.args[2], "u32")

            def done(B, sel):
                fl = flat(B, sel)
                par = np.broadcast_to(np.asarray(rpar(B, sel)).astype(np.int64) & 1, fl.shape)
                phases = np.array([B.mbar[f][3] if f in B.mbar else -1 for f in fl.tolist()],
                                  dtype=np.int64)
                if (phases < 0).any():
                    k = int(np.flatnonzero(phases < 0)[0])
                    raise EmulatorError(f"wait on an mbarrier that is not initialized "
                                        f"(mbarrier.init): {_where(B, s, int(sel[k]))}")
                # the phase of parity `par` is complete once the current one differs
                return (phases & 1) != par

            def passed(B, sel):
                fl = flat(B, sel)
                if B.seen is None:
                    B.seen = {}
                for f in np.unique(fl).tolist():
                    seen = B.seen.setdefault(f, np.zeros(B.n, np.int64))
                    seen[sel[fl == f]] = B.mbar[f][3]
                wp(B, sel, np.ones(len(sel), np.bool_))
            ex = _Exec(s, passed, "mbar")
            ex.ready = done
            return ex
        raise PtxError(f"PTX line {s.line}: {s.text!r} is not supported by the PTX emulator")

    def _st_async(self, s):
        """st.async.shared::cluster.mbarrier::complete_tx::bytes: a store into a cluster
        block's shared memory that completes its bytes on an mbarrier of that block."""
        mods = s.op[1:]
        if "mbarrier::complete_tx::bytes" not in mods or len(s.args) != 3 \
                or any(m in mods for m in ("v2", "v4")):
            raise PtxError(f"PTX line {s.line}: only scalar st.async with "
                           f"mbarrier::complete_tx::bytes is supported: {s.text!r}")
        t = self._type(s)
        size = type_size(t)
        if not isinstance(s.args[0], Mem):
            raise PtxError(f"PTX line {s.line}: cannot read {s.text!r}")
        addresses = self._address(s, s.args[0])
        rd = self.reader(s.args[1], t)
        flat_bar = self._mbarriers(s, s.args[2], True)
        elem = _UINT[size]

        def run(B, sel):
            a = addresses(B, sel)
            n = len(a)
            idx = np.arange(B.n) if sel is None else sel

            def fail(k, msg):
                raise EmulatorError(f"{msg}: {_where(B, s, int(idx[k]))}")
            bad = np.flatnonzero(a % np.uint64(size))
            if bad.size:
                fail(int(bad[0]), f"st.async of {size} bytes at {int(a[bad[0]]):#x} is not "
                                  f"{size}-byte aligned")
            blk, off = _shared_target(B, sel, a, size, True, fail)
            bars = flat_bar(B, sel)
            if B.seen is None:
                B.seen = {}
            row = B.shared.shape[1]
            vals = np.broadcast_to(_bits(rd(B, sel), elem), (n,))
            for k in range(n):
                b = int(blk[k])
                if bars[k] // row != b:
                    fail(k, "st.async signals an mbarrier of another block than the one "
                            "it writes to")
                if not (B.alive & (B.block_of == b)).any():
                    fail(k, "st.async into the shared memory of a block that has exited")
                st = B.mbar.get(int(bars[k]))
                if st is None:
                    fail(k, "st.async signals an mbarrier that is not initialized "
                            "(mbarrier.init; made visible to the cluster by a fence and "
                            "cluster barrier)")
                first = b * row + int(off[k])
                B.shared.reshape(-1)[first:first + size] = \
                    np.asarray(vals[k]).reshape(1).view(np.uint8)
                B.async_bar[first:first + size] = int(bars[k])
                B.async_phase[first:first + size] = st[3]
                st[2] -= size
                _mbar_complete(st)
        return run

    def op_ld(self, s, labels):
        return self._access(s, load=True)

    def op_st(self, s, labels):
        if "async" in s.op:
            return self._st_async(s)
        return self._access(s, load=False)

    def _access(self, s: Stmt, load: bool):
        mods = s.op[1:]
        t = self._type(s)
        space = next((m for m in mods if m in ("global", "shared", "param", "shared::cta",
                                              "shared::cluster", "local", "const")), None)
        vec = next((int(m[1:]) for m in mods if m in ("v2", "v4", "v8")), 1)
        size = type_size(t)
        regs_op, mem = (s.args[0], s.args[1]) if load else (s.args[1], s.args[0])
        items = regs_op.items if isinstance(regs_op, Vec) else (regs_op,)
        if len(items) != vec or not isinstance(mem, Mem):
            raise PtxError(f"PTX line {s.line}: cannot read {s.text!r}")
        if space == "param":
            if not load or not isinstance(mem.base, Sym):
                raise PtxError(f"PTX line {s.line}: unsupported param access {s.text!r}")
            pname = mem.base.name
            wr = self.writer(items[0])
            ptype = dict(self.k.params).get(pname)
            if ptype is None or mem.offset:
                raise PtxError(f"PTX line {s.line}: unknown parameter {pname!r}")

            def ldparam(B, sel):
                wr(B, sel, np.array(B.params[pname] & ((1 << (8 * size)) - 1),
                                    dtype=_UINT[size]))
            return ldparam
        if space in (None, "global"):
            if space is None:
                space = "global"   # generic addresses: only global memory is emulated
        if space not in ("global", "shared", "shared::cta", "shared::cluster", "local"):
            raise PtxError(f"PTX line {s.line}: {space} memory is not supported: {s.text!r}")
        addresses = self._address(s, mem)
        elem = _UINT[size]
        total = size * vec
        if load:
            wrs = [None if (isinstance(d, Reg) and d.name == "_") else self.writer(d)
                   for d in items]
            signed = t.startswith("s")
        else:
            rds = [self.reader(x, t) for x in items]
        stmt = s

        def fail(B, sel, k, msg):
            i = int(k if sel is None else sel[k])
            raise EmulatorError(f"{msg}: {_where(B, stmt, i)}")

        def misaligned(B, sel, a):
            bad = np.flatnonzero(a % np.uint64(total))
            if bad.size:
                k = int(bad[0])
                fail(B, sel, k, f"{'load' if load else 'store'} of {total} bytes at "
                                f"{int(a[k]):#x} is not {total}-byte aligned")

        def stored(B, sel, n):
            """The values a store writes: (threads, vec) elements."""
            vals = np.empty((n, vec), dtype=elem)
            for j, rd in enumerate(rds):
                vals[:, j] = _bits(rd(B, sel), elem)
            return vals

        def move(B, sel, view, at, vals):
            """A load of view[at(j)] into the j-th register, or a store of
            vals[:, j] there."""
            if load:
                for j, wr in enumerate(wrs):
                    if wr is not None:
                        v = view[at(j)]
                        wr(B, sel, v.view(_NUM[t]) if signed else v)
            else:
                for j in range(vec):
                    view[at(j)] = vals[:, j]

        if space == "global":
            def run(B, sel):
                a = addresses(B, sel)
                misaligned(B, sel, a)
                bad = B.memory.check(a, total)
                if bad is not None:
                    ad = int(a[bad])
                    fail(B, sel, bad, f"{'load' if load else 'store'} of {total} bytes at "
                                      f"{ad:#x} lies outside every buffer of the launch (the "
                                      f"nearest: {B.memory.nearest(ad)})")
                idx = ((a - np.uint64(GLOBAL_BASE)) // np.uint64(size)).astype(np.int64)
                view = B.memory.arena.view(elem)
                B.memory.count("load" if load else "store",
                               (B.warp if sel is None else B.warp[sel]) + (B.batch << 32),
                               a, total)
                sh = B.memory.shadow
                vals = None if load else stored(B, sel, len(idx))
                if sh is not None:
                    who = B.gid if sel is None else B.gid[sel]
                    first = idx * size
                    wp = B.warp if sel is None else B.warp[sel]
                    bl = B.block_of if sel is None else B.block_of[sel]
                    k = sh.access(first, total, who, B.memory.launch, B.lin[bl], B.epoch[bl],
                                  wp + (B.batch << 40),
                                  B.wepoch[wp], None if load else vals.view(np.uint8),
                                  None if load else B.memory.arena[
                                      (first[:, None] + np.arange(total)).reshape(-1)],
                                  B.gfence[bl])
                    if k is not None:
                        fail(B, sel, k, f"data race on global memory at {int(a[k]):#x}: "
                                        f"another thread of the launch "
                                        f"{'accesses' if not load else 'writes'} these bytes "
                                        f"with no barrier in between ({sh.last}; "
                                        f"{B.memory.nearest(int(a[k]))})")
                move(B, sel, view, lambda j: idx + j, vals)
            return run

        if space == "local":
            declared = self.k.local_bytes

            def lrun(B, sel):
                a = addresses(B, sel)
                misaligned(B, sel, a)
                bad = np.flatnonzero(a + np.uint64(total) > np.uint64(declared))
                if bad.size:
                    k = int(bad[0])
                    fail(B, sel, k, f"{'load' if load else 'store'} of {total} bytes at local "
                                    f"address {int(a[k]):#x} lies outside the thread's "
                                    f"{declared} bytes of local memory")
                rows = np.arange(B.n) if sel is None else np.asarray(sel)
                idx = (a // np.uint64(size)).astype(np.int64)
                move(B, sel, B.lmem.view(elem), lambda j: (rows, idx + j),
                     None if load else stored(B, sel, len(idx)))
            return lrun

        cluster = space == "shared::cluster"

        def srun(B, sel):
            a = addresses(B, sel)
            misaligned(B, sel, a)
            blk, off = _shared_target(B, sel, a, total, cluster, lambda k, m: fail(B, sel, k, m))
            own = B.block_of if sel is None else B.block_of[sel]
            remote = blk != own
            first = blk * B.shared.shape[1] + off
            who = B.local if sel is None else B.local[sel]
            k = k2 = None
            if remote.any():
                if not load:
                    fail(B, sel, int(np.flatnonzero(remote)[0]),
                         "stores into another block's shared memory are not supported")
                r = np.flatnonzero(remote)
                # written by the owner since the last cluster barrier?
                k = B.rshadow.access(first[r], total, -3, B.cepoch[blk[r]], -1, -1, -1, -1)
                k = None if k is None else int(r[k])
            loc = np.flatnonzero(~remote)
            if loc.size and B.seen is not None:   # (st.async ran in this batch)
                _check_async_bytes(B, sel, loc, first, total, load,
                                   lambda k, m: fail(B, sel, k, m))
            vals = None if load else stored(B, sel, len(off))
            wp = B.warp if sel is None else B.warp[sel]
            if k is None and loc.size:
                wl = wp[loc]
                if load:
                    k2 = B.sshadow.access(first[loc], total, who[loc], B.epoch[blk[loc]], -1,
                                          -1, wl, B.wepoch[wl])
                else:
                    flat = B.shared.reshape(-1)
                    new = vals[loc].view(np.uint8)
                    old = flat[(first[loc][:, None] + np.arange(total)).reshape(-1)]
                    k2 = B.sshadow.access(first[loc], total, who[loc], B.epoch[blk[loc]], -1,
                                          -1, wl, B.wepoch[wl], new, old)
                    if k2 is None:
                        # read by another block of the cluster since its last barrier
                        k2 = B.rshadow.access(first[loc], total, -4, B.cepoch[blk[loc]], -1,
                                              -1, -1, -1, new, ~new)
                k = None if k2 is None else int(loc[k2])
            if k is not None:
                fail(B, sel, k, f"data race on shared memory (offset {int(off[k])}): another "
                                f"thread touches these bytes with no barrier in between "
                                f"({B.sshadow.last if k2 is not None else 'cluster'})")
            col = off // size
            move(B, sel, B.shared.view(elem), lambda j: (blk, col + j), vals)
        return srun

    def op_mapa(self, s, labels):
        t = self._type(s)
        dst, a, r = s.args
        ra, rr, wr = self.reader(a, t), self.reader(r, "u32"), self.writer(dst)

        def run(B, sel):
            addr = np.asarray(ra(B, sel)).astype(np.uint64) & np.uint64((1 << _RANK_SHIFT) - 1)
            rank = np.asarray(rr(B, sel)).astype(np.uint64) + np.uint64(1)
            wr(B, sel, ((rank << np.uint64(_RANK_SHIFT)) | addr).astype(_NUM[t]))
        return run

    # arithmetic -------------------------------------------------------------
    def _binary(self, s, fn, t=None):
        t = t or self._type(s)
        if t in ("s16x2", "u16x2"):   # (sm_90's packed integer add, min, ...)
            fn = _on_halves(fn, np.int16 if t[0] == "s" else np.uint16)
        d, a, b = s.args
        ra, rb, wr = self.reader(a, t), self.reader(b, t), self.writer(d)
        return lambda B, sel: wr(B, sel, fn(ra(B, sel), rb(B, sel)))

    def _float_op(self, s, fn, nargs):
        """add/sub/mul/fma/div/... on f16, bf16, f32, f64 with rounding modifiers."""
        t = self._type(s)
        mods = set(s.op[1:-1])
        rnd = next((m for m in ("rn", "rz", "rm", "rp") if m in mods), "rn")
        ftz, sat = "ftz" in mods, "sat" in mods
        d, *srcs = s.args
        if len(srcs) != nargs:
            raise PtxError(f"PTX line {s.line}: {s.text!r} needs {nargs} operands")
        # bf16 computes in f32 and rounds back; f16x2 / bf16x2 do each half
        pair = t in ("f16x2", "bf16x2")
        half = t[:-2] if pair else t
        if half == "bf16":
            conv_in, conv_out = _bf16_to_f32, _f32_to_bf16
        elif half == "f16":
            conv_in = lambda v: np.asarray(v).astype(np.uint16).view(np.float16)  # noqa: E731
            conv_out = lambda v: np.asarray(v, np.float16).view(np.uint16)  # noqa: E731
        else:
            conv_in = conv_out = None
        bits = "b32" if pair else "b16" if half in ("f16", "bf16") else t
        rds = [self.reader(x, bits) for x in srcs]
        wr = self.writer(d)

        def compute(vals):
            if conv_in is not None:
                vals = [conv_in(v) for v in vals]
            if ftz:
                vals = [_ftz(v) for v in vals]
            with np.errstate(all="ignore"):
                out = fn(vals, rnd, half)
            if ftz:
                out = _ftz(out)
            if sat:
                out = np.where(np.isnan(out), 0, np.clip(out, 0, 1)).astype(out.dtype)
            if half == "f16":
                out = np.asarray(out).astype(np.float16)
            if out.dtype.kind == "f":     # NaN results are PTX's canonical NaN
                nan = np.isnan(out)
                if nan.any():
                    out = np.where(nan, _CANONICAL_NAN[
                        2 if half == "f16" else out.dtype.itemsize], out)
            return conv_out(out) if conv_out is not None else out

        def run(B, sel):
            vals = [np.asarray(r(B, sel)) for r in rds]
            if not pair:
                out = compute(vals)
            else:
                lo = compute([(v & np.uint32(0xFFFF)).astype(np.uint16) for v in vals])
                hi = compute([(v >> np.uint32(16)).astype(np.uint16) for v in vals])
                out = lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))
            wr(B, sel, out)
        return run

    @staticmethod
    def _directed(vals, rnd, t, exact):
        """f32 op rounded in direction `rnd`: exact(a64, b64) gives the float64
        result and its error term."""
        a = [np.asarray(v, np.float64) for v in vals]
        s, e = exact(*a)
        return _round_f32(np.asarray(s, np.float64), np.asarray(e, np.float64), rnd)

    # extended precision: .cc writes the carry flag, addc / madc add it in
    def _carry_arith(self, s, mad: bool, sub: bool = False):
        """add.cc / addc / mad.cc / madc (carry out and in), and sub.cc /
        subc (borrow out and in: the flag is 1 where a - b - borrow went
        below 0)."""
        t = self._type(s)
        if t not in ("u32", "b32") and not (t == "s32" and not mad):
            raise PtxError(f"PTX line {s.line}: carry arithmetic on .{t} is not supported: "
                           f"{s.text!r}")
        sets, uses, hi = "cc" in s.op, s.op[0] in ("addc", "madc", "subc"), "hi" in s.op
        d, *srcs = s.args
        if len(srcs) != (3 if mad else 2):
            raise PtxError(f"PTX line {s.line}: cannot read {s.text!r}")
        rds = [self.reader(x, "u32") for x in srcs]
        wr = self.writer(d)
        low = np.uint64(0xFFFFFFFF)

        def run(B, sel):
            n = B.n if sel is None else len(sel)
            v = [np.broadcast_to(np.asarray(r(B, sel)).astype(np.uint64), (n,)) for r in rds]
            flag = (B.carry if sel is None else B.carry[sel]) if uses else np.uint64(0)
            if sub:
                # 2^32 + a - b - borrow: below 2^32 exactly where it borrowed
                total = v[0] + (low + np.uint64(1)) - v[1] - flag
                total = total ^ (np.uint64(1) << np.uint64(32))   # the flag: the borrow
            elif mad:
                prod = v[0] * v[1]                       # exact: below 2^64
                total = (prod >> np.uint64(32) if hi else prod & low) + v[2] + flag
            else:
                total = v[0] + v[1] + flag
            if sets:
                if sel is None:
                    B.carry[:] = total >> np.uint64(32)
                else:
                    B.carry[sel] = total >> np.uint64(32)
            wr(B, sel, (total & low).astype(np.uint32))
        return run

    def op_shf(self, s, labels):
        """Funnel shift of the 64-bit pair b:a: .l keeps the high word of
        (b:a) << n, .r the low word of (b:a) >> n; n = c mod 32 (.wrap) or
        min(c, 32) (.clamp)."""
        left, wrap = "l" in s.op, "wrap" in s.op
        if self._type(s) not in ("b32", "u32") or ("clamp" in s.op) == wrap:
            raise PtxError(f"PTX line {s.line}: cannot emulate {s.text!r}")
        d, a, b, c = s.args
        ra, rb, rc = (self.reader(x, "u32") for x in (a, b, c))
        wr = self.writer(d)

        def run(B, sel):
            lo = np.asarray(ra(B, sel)).astype(np.uint64)
            pair = (np.asarray(rb(B, sel)).astype(np.uint64) << np.uint64(32)) | lo
            n = np.asarray(rc(B, sel)).astype(np.uint64)
            n = n & np.uint64(31) if wrap else np.minimum(n, np.uint64(32))
            out = (pair << n) >> np.uint64(32) if left else pair >> n
            wr(B, sel, (out & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        return run

    def op_addc(self, s, labels):
        return self._carry_arith(s, mad=False)

    def op_madc(self, s, labels):
        return self._carry_arith(s, mad=True)

    def op_add(self, s, labels):
        if "cc" in s.op:
            return self._carry_arith(s, mad=False)
        if _is_float(self._type(s)):
            def f(v, rnd, t):
                if t == "f32" and rnd != "rn":
                    return self._directed(v, rnd, t, _two_sum)
                return v[0] + v[1]
            return self._float_op(s, f, 2)
        return self._int_arith(s, lambda a, b: a + b)

    def op_subc(self, s, labels):
        return self._carry_arith(s, mad=False, sub=True)

    def op_sub(self, s, labels):
        if "cc" in s.op:
            return self._carry_arith(s, mad=False, sub=True)
        if _is_float(self._type(s)):
            def f(v, rnd, t):
                if t == "f32" and rnd != "rn":
                    return self._directed([v[0], -v[1]], rnd, t, _two_sum)
                return v[0] - v[1]
            return self._float_op(s, f, 2)
        return self._int_arith(s, lambda a, b: a - b)

    def op_mul(self, s, labels):
        t = self._type(s)
        if _is_float(t):
            def f(v, rnd, t):
                if t == "f32" and rnd != "rn":
                    return self._directed(v, rnd, t, lambda a, b: (a * b, np.zeros_like(a)))
                return v[0] * v[1]
            return self._float_op(s, f, 2)
        mode = s.op[1] if len(s.op) > 2 else "lo"
        if mode == "wide":
            wide = {"u16": np.uint32, "s16": np.int32, "u32": np.uint64, "s32": np.int64}[t]
            return self._binary(s, lambda a, b: np.asarray(a).astype(wide) *
                                np.asarray(b).astype(wide))
        if mode == "hi":
            bits = type_size(t) * 8
            if bits == 64:
                hi64 = _mulhi_u64 if t == "u64" else _mulhi_s64
                return self._binary(s, lambda a, b: hi64(np.asarray(a), np.asarray(b)))
            wide = np.int64 if t[0] == "s" else np.uint64
            return self._binary(s, lambda a, b: ((np.asarray(a).astype(wide) *
                                                  np.asarray(b).astype(wide))
                                                 >> bits).astype(_NUM[t]))
        return self._int_arith(s, lambda a, b: a * b)

    def op_mad(self, s, labels):
        if "cc" in s.op:
            return self._carry_arith(s, mad=True)
        t = self._type(s)
        mode = s.op[1]
        if mode not in ("lo",) or t[0] == "f":
            if t[0] == "f":
                return self.op_fma(s, labels)
            raise PtxError(f"PTX line {s.line}: {s.text!r} is not supported")
        d, a, b, c = s.args
        ra, rb, rc, wr = (self.reader(a, t), self.reader(b, t), self.reader(c, t),
                          self.writer(d))

        def run(B, sel):
            with np.errstate(all="ignore"):
                wr(B, sel, np.asarray(ra(B, sel)) * np.asarray(rb(B, sel)) +
                   np.asarray(rc(B, sel)))
        return run

    def op_fma(self, s, labels):
        def f(v, rnd, t):
            if t == "f32":
                a, b, c = (np.asarray(x, np.float64) for x in v)
                p = a * b                        # exact for f32 inputs
                sm, e = _two_sum(p, c)
                out = _round_f32(sm, e, rnd)
                return np.where(np.isfinite(sm), out, (p + c).astype(np.float32))
            if t == "f64":
                return _fma64(*(np.asarray(x, np.float64) for x in v))
            # f16 / bf16 (as f32 here): one rounding at the end
            return (np.asarray(v[0], np.float64) * v[1] + v[2]).astype(np.float32)
        return self._float_op(s, f, 3)

    def op_div(self, s, labels):
        t = self._type(s)
        if _is_float(t):
            return self._float_op(s, lambda v, rnd, t: v[0] / v[1], 2)
        return self._int_div(s, rem=False)

    def op_rem(self, s, labels):
        return self._int_div(s, rem=True)

    def _int_div(self, s, rem):
        t = self._type(s)

        def f(a, b):
            a, b = np.asarray(a), np.asarray(b)
            safe = np.where(b == 0, 1, b)
            if t[0] == "s" and a.dtype.itemsize < 8:   # truncating, like C
                q = np.trunc(a.astype(np.float64) / safe).astype(a.dtype)
                r = a - q * safe
            elif t[0] == "s":   # (magnitudes as u64: |INT64_MIN| is no int64)
                def mag(v):
                    u = v.astype(np.int64).view(np.uint64)
                    return np.where(v < 0, np.uint64(0) - u, u)
                uq = mag(a) // mag(safe)
                q = np.where((a < 0) != (safe < 0), np.uint64(0) - uq, uq).view(np.int64)
                r = a - q * safe
            else:
                q, r = a // safe, a % safe
            return np.where(b == 0, 0, r if rem else q).astype(a.dtype)
        return self._binary(s, f)

    def _int_arith(self, s, fn):
        def f(a, b):
            with np.errstate(all="ignore"):
                return np.asarray(fn(np.asarray(a), np.asarray(b)))
        return self._binary(s, f)

    def _unary(self, s, fn):
        t = self._type(s)
        d, a = s.args
        ra, wr = self.reader(a, t), self.writer(d)

        def run(B, sel):
            with np.errstate(all="ignore"):
                wr(B, sel, fn(np.asarray(ra(B, sel))))
        return run

    # (halves of bf16, f16x2 and bf16x2 flip or clear their sign bits)
    _SIGN = {"bf16": np.uint16(0x8000), "f16x2": np.uint32(0x80008000),
             "bf16x2": np.uint32(0x80008000)}

    def op_neg(self, s, labels):
        t = self._type(s)
        if t in self._SIGN:
            sign = self._SIGN[t]
            return self._unary(s, lambda a: a ^ sign)
        return self._unary(s, lambda a: -a)

    def op_abs(self, s, labels):
        t = self._type(s)
        if t in self._SIGN:
            keep = ~self._SIGN[t]
            return self._unary(s, lambda a: a & keep)
        return self._unary(s, np.abs)

    def op_not(self, s, labels):
        t = self._type(s)
        return self._unary(s, np.logical_not if t == "pred" else np.invert)

    def _count_bits(self, s, fn):
        # (popc.b32/b64, clz.b32/b64: the result is a u32 whatever the width)
        t = self._type(s)
        d, a = s.args
        ra, wr = self.reader(a, t), self.writer(d)
        bits = type_size(t) * 8

        def run(B, sel):
            wr(B, sel, fn(_bits(ra(B, sel), _UINT[bits // 8]), bits))
        return run

    def op_popc(self, s, labels):
        return self._count_bits(s, lambda x, bits: _popcount(x))

    def op_clz(self, s, labels):
        return self._count_bits(s, _leading_zeros)

    def op_min(self, s, labels):
        return self._minmax(s, np.minimum, np.fmin)

    def op_max(self, s, labels):
        return self._minmax(s, np.maximum, np.fmax)

    def _minmax(self, s, nan_prop, nan_drop):
        t = self._type(s)
        if _is_float(t):
            fn = nan_prop if "NaN" in s.op else nan_drop
            return self._float_op(s, lambda v, rnd, t: fn(v[0], v[1]), 2)
        return self._binary(s, lambda a, b: nan_prop(np.asarray(a), np.asarray(b)))

    def op_and(self, s, labels):
        t = self._type(s)
        return self._binary(s, np.logical_and if t == "pred" else np.bitwise_and)

    def op_or(self, s, labels):
        t = self._type(s)
        return self._binary(s, np.logical_or if t == "pred" else np.bitwise_or)

    def op_xor(self, s, labels):
        t = self._type(s)
        return self._binary(s, np.logical_xor if t == "pred" else np.bitwise_xor)

    def _shift(self, s, left):
        t = self._type(s)
        bits = type_size(t) * 8
        d, a, b = s.args
        ra, rb, wr = self.reader(a, t), self.reader(b, "u32"), self.writer(d)
        arith = t[0] == "s"

        def run(B, sel):
            x = np.asarray(ra(B, sel))
            n = np.minimum(np.asarray(rb(B, sel)).astype(np.int64), bits)
            nn = np.minimum(n, bits - 1).astype(x.dtype)
            if left:
                out = np.where(n >= bits, 0, x << nn)
            elif arith:
                out = x >> nn
            else:
                out = np.where(n >= bits, 0, x >> nn)
            wr(B, sel, np.asarray(out).astype(x.dtype))
        return run

    def op_shl(self, s, labels):
        return self._shift(s, True)

    def op_shr(self, s, labels):
        return self._shift(s, False)

    def op_bfe(self, s, labels):
        """Bit field extract: len bits of a from bit pos, zero-extended (.u) or
        extended with the field's top bit, or a's sign bit where the field
        runs past it (.s); a zero-length field is 0."""
        t = self._type(s)
        bits = type_size(t) * 8
        d, a, b, c = s.args
        ra, rb, rc, wr = (self.reader(a, f"u{bits}"), self.reader(b, "u32"),
                          self.reader(c, "u32"), self.writer(d))
        signed = t[0] == "s"
        ones = np.uint64((1 << bits) - 1)
        one = np.uint64(1)

        def run(B, sel):
            x = np.asarray(ra(B, sel)).astype(np.uint64)
            pos = np.asarray(rb(B, sel)).astype(np.uint64) & np.uint64(0xFF)
            ln = np.asarray(rc(B, sel)).astype(np.uint64) & np.uint64(0xFF)
            shifted = np.where(pos >= bits, np.uint64(0), x >> np.minimum(pos, np.uint64(63)))
            out = shifted & _low_bits(ln)
            if signed:
                top = np.minimum(pos + ln - one, np.uint64(bits - 1))
                sbit = np.where(ln == 0, np.uint64(0), (x >> np.minimum(top, np.uint64(63))) & one)
                width = np.minimum(ln, np.uint64(bits) - np.minimum(pos, np.uint64(bits)))
                high = ones & ~_low_bits(width)
                out = np.where(sbit == one, out | high, out)
            wr(B, sel, (out & ones).astype(_UINT[bits // 8]).view(_NUM[t]))
        return run

    def op_bfi(self, s, labels):
        """Bit field insert: b with its bits pos .. pos + len - 1 (those below
        the type's width) replaced by the low len bits of a."""
        t = self._type(s)
        bits = type_size(t) * 8
        d, a, b, c, e = s.args
        ra, rb, rc, re_, wr = (self.reader(a, f"u{bits}"), self.reader(b, f"u{bits}"),
                               self.reader(c, "u32"), self.reader(e, "u32"),
                               self.writer(d))
        ones = np.uint64((1 << bits) - 1)

        def run(B, sel):
            x = np.asarray(ra(B, sel)).astype(np.uint64)
            y = np.asarray(rb(B, sel)).astype(np.uint64)
            pos = np.asarray(rc(B, sel)).astype(np.uint64) & np.uint64(0xFF)
            ln = np.asarray(re_(B, sel)).astype(np.uint64) & np.uint64(0xFF)
            at = np.minimum(pos, np.uint64(63))
            mask = np.where(pos < bits, (_low_bits(ln) << at) & ones, np.uint64(0))
            out = (y & ~mask) | ((x << at) & mask)
            wr(B, sel, (out & ones).astype(_UINT[bits // 8]).view(_NUM[t]))
        return run

    def op_prmt(self, s, labels):
        if len(s.op) != 2 or s.op[1] != "b32":
            raise PtxError(f"PTX line {s.line}: only the default prmt.b32 mode: {s.text!r}")
        d, a, b, c = s.args
        ra, rb, rc, wr = (self.reader(a, "u32"), self.reader(b, "u32"), self.reader(c, "u32"),
                          self.writer(d))

        def run(B, sel):
            x = (np.asarray(rb(B, sel)).astype(np.uint64) << np.uint64(32)) | \
                np.asarray(ra(B, sel)).astype(np.uint64)
            ctl = np.asarray(rc(B, sel)).astype(np.uint64)
            out = np.zeros(np.broadcast(x, ctl).shape, dtype=np.uint64)
            for i in range(4):
                sel4 = (ctl >> np.uint64(4 * i)) & np.uint64(0xF)
                byte = (x >> ((sel4 & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
                sign = np.where((byte & np.uint64(0x80)) != 0, np.uint64(0xFF), np.uint64(0))
                byte = np.where((sel4 & np.uint64(8)) != 0, sign, byte)
                out |= byte << np.uint64(8 * i)
            wr(B, sel, out.astype(np.uint32))
        return run

    def op_selp(self, s, labels):
        t = self._type(s)
        d, a, b, p = s.args
        ra, rb, rp, wr = (self.reader(a, t), self.reader(b, t), self.reader(p, "pred"),
                          self.writer(d))
        return lambda B, sel: wr(B, sel, np.where(rp(B, sel), ra(B, sel), rb(B, sel))
                                 .astype(_NUM[t]))

    _CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
            "hi": np.greater, "hs": np.greater_equal}

    def op_setp(self, s, labels):
        cmp, t = s.op[1], self._type(s)
        combine = s.op[2] if len(s.op) == 4 and s.op[2] in ("and", "or", "xor") else None
        dst = s.args[0]
        pd, qd = dst if isinstance(dst, tuple) else (dst, None)
        a, b = s.args[1], s.args[2]
        pair = t in ("f16x2", "bf16x2")     # p: the low halves, q: the high halves
        is_float = t[0] == "f" or t.startswith("bf16")
        half = t[:-2] if pair else t
        to_float = {"bf16": _bf16_to_f32,
                    "f16": lambda v: np.asarray(v).astype(np.uint16).view(np.float16)}
        ra, rb = self.reader(a, "b32" if pair else t), self.reader(b, "b32" if pair else t)
        if half == "bf16" and not pair:
            ra0, rb0 = self.reader(a, "b16"), self.reader(b, "b16")
            ra = lambda B, sel: _bf16_to_f32(ra0(B, sel))  # noqa: E731
            rb = lambda B, sel: _bf16_to_f32(rb0(B, sel))  # noqa: E731
        unordered = is_float and cmp.endswith("u") and cmp not in ("nan", "num")
        base = cmp[:-1] if unordered else cmp
        if is_float and base not in self._CMP and base not in ("nan", "num"):
            raise PtxError(f"PTX line {s.line}: comparison {cmp!r}")
        if pair and qd is None:
            raise PtxError(f"PTX line {s.line}: {s.text!r} needs two predicates (p|q)")
        wp = self.writer(pd)
        wq = self.writer(qd) if qd is not None else None
        rc = None
        if combine:
            rc = self.reader(s.args[3], "pred")
        comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(combine)
        compare = self._CMP

        def test(x, y):
            if not is_float:
                return compare[cmp](x, y)
            nan = np.isnan(x) | np.isnan(y)
            if cmp == "nan":
                return nan
            if cmp == "num":
                return ~nan
            if base == "ne" and not unordered:
                return np.not_equal(x, y) & ~nan
            r = compare[base](x, y)
            return (r | nan) if unordered else (r & ~nan)

        def run(B, sel):
            x, y = np.asarray(ra(B, sel)), np.asarray(rb(B, sel))
            n = B.n if sel is None else len(sel)
            if pair:
                lo = [to_float[half]((v & np.uint32(0xFFFF)).astype(np.uint16)) for v in (x, y)]
                hi = [to_float[half]((v >> np.uint32(16)).astype(np.uint16)) for v in (x, y)]
                r, r2 = test(*lo), test(*hi)
            else:
                r = test(x, y)
                r2 = ~r
            r = np.broadcast_to(r, (n,))
            r2 = np.broadcast_to(r2, (n,))
            if comb is not None:
                cv = rc(B, sel)
                r, r2 = comb(r, cv), comb(r2, cv)
            wp(B, sel, r)
            if wq is not None:
                wq(B, sel, r2)
        return run

    def op_cvt(self, s, labels):
        mods = s.op[1:]
        dt_, st_ = mods[-2], mods[-1]
        rnd = next((m for m in mods[:-2] if m in ("rn", "rz", "rm", "rp", "rni", "rzi",
                                                   "rmi", "rpi")), None)
        sat, ftz = "sat" in mods, "ftz" in mods
        if dt_ in ("f16x2", "bf16x2"):
            d, a, b = s.args
            ra, rb, wr = self.reader(a, st_), self.reader(b, st_), self.writer(d)
            half = (lambda v: np.asarray(v, np.float32).astype(np.float16).view(np.uint16)) \
                if dt_ == "f16x2" else _f32_to_bf16

            def pack(B, sel):
                hi = half(ra(B, sel)).astype(np.uint32)
                lo = half(rb(B, sel)).astype(np.uint32)
                wr(B, sel, (hi << np.uint32(16)) | lo)
            return pack
        d, a = s.args
        src_is_bf16 = st_ == "bf16"
        ra0 = self.reader(a, "b16" if src_is_bf16 else st_)
        ra = (lambda B, sel: _bf16_to_f32(ra0(B, sel))) if src_is_bf16 else ra0
        wr = self.writer(d)
        dfloat = dt_[0] == "f" or dt_ == "bf16"
        sfloat = st_[0] == "f" or st_ == "bf16"
        target = np.dtype(_NUM[dt_]) if dt_ != "bf16" else None

        def run(B, sel):
            x = np.asarray(ra(B, sel))
            with np.errstate(all="ignore"):
                if ftz and sfloat:
                    x = _ftz(x)
                if dfloat and sfloat:
                    if rnd in ("rni", "rzi", "rmi", "rpi"):
                        x = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor,
                             "rpi": np.ceil}[rnd](x)
                    if sat:
                        x = np.where(np.isnan(x), 0, np.clip(x, 0, 1)).astype(x.dtype)
                    if dt_ == "bf16":
                        out = _f32_to_bf16(x.astype(np.float32))
                    elif dt_ == "f32" and x.dtype == np.float64 and rnd not in (None, "rn"):
                        out = _round_f32(x, np.zeros_like(x), rnd)
                    else:
                        out = x.astype(target)
                elif dfloat:      # int -> float
                    if dt_ == "bf16":
                        out = _f32_to_bf16(x.astype(np.float64).astype(np.float32))
                    else:
                        out = x.astype(target)
                elif sfloat:      # float -> int: round, saturate, NaN -> 0
                    f = {None: np.trunc, "rzi": np.trunc, "rni": np.rint, "rmi": np.floor,
                         "rpi": np.ceil}[rnd]
                    y = f(x.astype(np.float64))
                    info = np.iinfo(target)
                    y = np.where(np.isnan(y), 0, np.clip(y, info.min, info.max))
                    out = y.astype(target)
                else:             # int -> int: extend by the source's sign or truncate
                    if sat:
                        raise PtxError(f"PTX line {s.line}: saturating integer cvt")
                    src = x.astype(_NUM[st_])
                    if type_size(dt_) > type_size(st_):
                        out = src.astype(np.int64 if st_[0] == "s" else np.uint64) \
                            .astype(target)
                    else:
                        out = src.view(_UINT[src.dtype.itemsize]) \
                            .astype(_UINT[type_size(dt_)]).view(target)
            wr(B, sel, out)
        return run

    def _approx(self, s, fn):
        return self._float_op(Stmt(s.line, s.text, s.guard,
                                   tuple(m for m in s.op if m not in ("approx", "full")),
                                   s.args), lambda v, rnd, t: fn(v[0]), 1)

    def op_ex2(self, s, labels):
        return self._approx(s, np.exp2)

    def op_lg2(self, s, labels):
        return self._approx(s, np.log2)

    def op_sin(self, s, labels):
        return self._approx(s, np.sin)

    def op_cos(self, s, labels):
        return self._approx(s, np.cos)

    def op_tanh(self, s, labels):
        return self._approx(s, np.tanh)

    def op_rcp(self, s, labels):
        return self._approx(s, lambda x: np.asarray(1, x.dtype) / x)

    def op_sqrt(self, s, labels):
        return self._approx(s, np.sqrt)

    def op_rsqrt(self, s, labels):
        return self._approx(s, lambda x: np.asarray(1, x.dtype) / np.sqrt(x))

    def op_copysign(self, s, labels):
        # copysign.f32 d, a, b: |b| with the sign of a
        return self._float_op(s, lambda v, rnd, t: np.copysign(v[1], v[0]), 2)

    def op_shfl(self, s, labels):
        if s.op[1] != "sync" or s.op[-1] != "b32":
            raise PtxError(f"PTX line {s.line}: {s.text!r} is not supported")
        mode = s.op[2]
        dst = s.args[0]
        dd, pd = dst if isinstance(dst, tuple) else (dst, None)
        ra, rb, rc, rm = (self.reader(s.args[1], "b32"), self.reader(s.args[2], "u32"),
                          self.reader(s.args[3], "u32"), self.reader(s.args[4], "u32"))
        wd = self.writer(dd)
        wp = self.writer(pd) if pd is not None else None

        def exchange(B, sel):
            """Runs for complete warps; `sel` sorted by thread."""
            lane = B.lane[sel]
            bv = np.broadcast_to(np.asarray(rb(B, sel)).astype(np.int64), lane.shape) & 31
            cv = np.broadcast_to(np.asarray(rc(B, sel)).astype(np.int64), lane.shape)
            clamp, seg = cv & 31, (cv >> 8) & 31
            max_lane = (lane & seg) | (clamp & ~seg)
            min_lane = lane & seg
            if mode == "up":
                j = lane - bv
                ok = j >= max_lane
            elif mode == "down":
                j = lane + bv
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bv
                ok = j <= max_lane
            elif mode == "idx":
                j = min_lane | (bv & ~seg)
                ok = j <= max_lane
            else:
                raise PtxError(f"PTX line {s.line}: shfl mode {mode!r}")
            j = np.where(ok, j, lane)
            src = np.clip(sel - lane + j, 0, B.n - 1)  # a warp's threads are consecutive
            member = np.zeros(B.n, dtype=bool)
            member[sel] = True
            if not (member[src] & (B.warp[src] == B.warp[sel])).all():
                k = int(np.flatnonzero(~(member[src] & (B.warp[src] == B.warp[sel])))[0])
                raise EmulatorError(f"shfl.sync reads lane {int(j[k])}, which does not take "
                                    f"part: {_where(B, s, int(sel[k]))}")
            a = B.reg(s.args[1].name) if isinstance(s.args[1], Reg) else None
            if a is None:
                val = np.broadcast_to(np.asarray(ra(B, sel)), lane.shape)
            else:
                val = a.view(np.uint32)[src] if a.dtype.itemsize == 4 else \
                    a.astype(np.uint32)[src]
            wd(B, sel, val)
            if wp is not None:
                wp(B, sel, ok)

        def mask_of(B, sel):
            return np.broadcast_to(np.asarray(rm(B, sel)).astype(np.int64) & 0xFFFFFFFF,
                                   (len(sel),))
        ex = _Exec(s, exchange, "shfl")
        ex.mask = mask_of
        return ex


# ------------------------------------------------------------------ execution

class KernelProgram:
    """A kernel compiled for the emulator."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        c = _Compiler(kernel)
        self.code = [c.compile(s, kernel.labels) for s in kernel.body]
        self.guards = [None if s.guard is None else
                       (c.reader(Reg(s.guard[0]), "pred"), s.guard[1]) for s in kernel.body]
        self.end = len(self.code)

    def launch(self, memory: _Memory, grid, block, smem: int, params: Dict[str, int],
               max_threads: int = 1 << 15, sample: Optional[int] = None) -> int:
        """Runs the launch (only about `sample` of its blocks, whole clusters
        drawn from the grid, where given); returns how many blocks
        ran."""
        k = self.kernel
        cx, cy, cz = k.cluster
        if grid[0] % cx or grid[1] % cy or grid[2] % cz:
            raise EmulatorError(f"kernel {k.name}: grid {tuple(grid)} is not a multiple of "
                                f"its cluster shape {k.cluster}")
        nt = block[0] * block[1] * block[2]
        if nt > 1024 or nt <= 0:
            raise EmulatorError(f"kernel {k.name}: block {tuple(block)} has {nt} threads")
        if grid[0] * grid[1] * grid[2] * nt >= 1 << 31:
            # (the race checks keep thread ids as int32)
            raise EmulatorError(f"kernel {k.name}: the emulator runs launches of fewer than "
                                f"2^31 threads, this one has grid {tuple(grid)} of blocks "
                                f"{tuple(block)}")
        per_cluster = cx * cy * cz
        # blocks ordered cluster by cluster, so that a batch holds whole clusters
        order = sorted(((x, y, z) for z in range(grid[2]) for y in range(grid[1])
                        for x in range(grid[0])),
                       key=lambda b: ((b[2] // cz, b[1] // cy, b[0] // cx),
                                      (b[2] % cz, b[1] % cy, b[0] % cx)))
        if sample is not None and sample < len(order):
            # (drawn, not evenly spaced: blocks a fixed stride apart can all
            # fall on rows of one alignment, rows of 50257 floats every 8th
            # on a 32-byte boundary; the same draw for the same grid)
            clusters = len(order) // per_cluster
            take = min(clusters, -(-sample // per_cluster))
            picked = np.sort(np.random.default_rng(clusters).choice(clusters, take,
                                                                    replace=False))
            order = [order[c * per_cluster + j] for c in picked for j in range(per_cluster)]
        step = max(1, max_threads // (nt * per_cluster)) * per_cluster
        for i in range(0, len(order), step):
            B = _Batch(k, order[i:i + step], tuple(block), tuple(grid), smem, params, memory,
                       i // step)
            self._run(B)
        return len(order)

    def _run(self, B: _Batch) -> None:
        code, guards, end = self.code, self.guards, self.end
        pc, alive, waiting = B.pc, B.alive, B.waiting
        gone = end + 1
        steps = 0
        # warp-instructions issued, by statement: each statement a warp's
        # threads run together counts once (predicated off or not), twice
        # where the warp's threads reach it apart (divergence)
        if B.memory.issued is None:
            B.memory.issued = np.zeros(end, dtype=np.int64)
        issued = [0] * end
        while True:
            runnable = alive & ~waiting
            if not runnable.any():
                if not alive.any():
                    B.memory.issued += np.asarray(issued, dtype=np.int64)
                    return
                if not self._release(B):
                    self._deadlock(B)
                continue
            idx = np.flatnonzero(runnable)
            p = pc[idx]
            m = int(p.min())
            at = p == m
            sel = idx if at.all() else idx[at]
            others = p[~at]
            stop = int(others.min()) if others.size else gone + 1
            full = len(sel) == B.n
            nw = B.nwarps if full else _warps_in(B, sel)
            # run the threads at m statement by statement while no other
            # thread can join them (no other thread stands at or before m)
            while True:
                steps += 1
                if steps > _STEP_LIMIT:
                    raise EmulatorError(f"kernel {B.k.name} did not finish within "
                                        f"{_STEP_LIMIT} steps (last at "
                                        f"{_where(B, code[min(m, end - 1)].stmt)})")
                if m >= end:
                    alive[sel] = False
                    pc[sel] = gone
                    break
                issued[m] += nw
                ex = code[m]
                g = guards[m]
                s_arg = None if full else sel
                on = None
                if g is not None:
                    gv = np.broadcast_to(np.asarray(g[0](B, s_arg)), (len(sel),))
                    on = ~gv if g[1] else gv
                kind = ex.kind
                if kind in ("bar", "cbar", "shfl", "mbar"):
                    if on is not None and not on.all():
                        raise EmulatorError(f"a guarded barrier or shuffle is not "
                                            f"supported: {_where(B, ex.stmt)}")
                    pc[sel] = m
                    waiting[sel] = True
                    break
                if kind == "op":
                    if on is None or on.all():
                        ex.run(B, s_arg)
                    elif on.any():
                        ex.run(B, sel[on])
                    m += 1
                elif kind == "nop":
                    m += 1
                elif kind == "brx":
                    go = sel if on is None else sel[on]
                    if go.size:
                        t = np.broadcast_to(ex.targets(B, s_arg), (len(sel),))
                        pc[go] = t if on is None else t[on]
                    if on is not None:
                        pc[sel[~on]] = m + 1
                    break
                elif kind == "bra":
                    if on is None or on.all():
                        m = ex.target
                    elif on.any():
                        pc[sel[on]] = ex.target
                        pc[sel[~on]] = m + 1
                        break
                    else:
                        m += 1
                elif kind == "ret":
                    if on is None or on.all():
                        alive[sel] = False
                        pc[sel] = gone
                        break
                    if on.any():
                        done = sel[on]
                        alive[done] = False
                        pc[done] = gone
                        sel = sel[~on]
                        full = False
                        nw = _warps_in(B, sel)
                    m += 1
                if m >= stop:
                    pc[sel] = m
                    break

    def _release(self, B: _Batch) -> bool:
        """Releases every complete barrier / shuffle group; False if none is."""
        waiting, alive, pc = B.waiting, B.alive, B.pc
        released = False
        w = np.flatnonzero(waiting)
        kinds = np.array([self.code[int(q)].kind for q in pc[w]]) if w.size else np.array([])
        # block barriers: every living thread of the block waits at a bar.sync
        bar = w[kinds == "bar"]
        cbar = w[kinds == "cbar"]
        for at in (bar, cbar):
            if at.size:
                self._one_barrier_per_warp(B, at)
        if bar.size:
            nb = B.shared.shape[0]
            arrived = np.bincount(B.block_of[bar], minlength=nb)
            living = np.bincount(B.block_of[alive], minlength=nb)
            full = (arrived == living) & (arrived > 0)
            go = bar[full[B.block_of[bar]]]
            if go.size:
                waiting[go] = False
                pc[go] += 1
                B.epoch[full] += 1
                released = True
        if cbar.size:
            cl = B.cluster_of_block[B.block_of]
            ncl = int(B.cluster_of_block.max()) + 1
            arrived = np.bincount(cl[cbar], minlength=ncl)
            living = np.bincount(cl[alive], minlength=ncl)
            full = (arrived == living) & (arrived > 0)
            go = cbar[full[cl[cbar]]]
            if go.size:
                waiting[go] = False
                pc[go] += 1
                blocks = full[B.cluster_of_block]
                B.epoch[blocks] += 1
                B.cepoch[blocks] += 1
                released = True
        mb = w[kinds == "mbar"]
        for q in np.unique(pc[mb]) if mb.size else ():
            at = mb[pc[mb] == q]
            ex = self.code[int(q)]
            go = at[ex.ready(B, at)]
            if go.size:
                ex.run(B, go)
                waiting[go] = False
                pc[go] += 1
                released = True
        sh = w[kinds == "shfl"]
        for q in np.unique(pc[sh]) if sh.size else ():
            at = sh[pc[sh] == q]
            ex = self.code[int(q)]
            mask = ex.mask(B, at)
            lane = B.lane[at]
            if ((mask >> lane) & 1).min() == 0:
                k = int(np.flatnonzero(((mask >> lane) & 1) == 0)[0])
                raise EmulatorError(f"shfl.sync by a lane outside its member mask "
                                    f"{int(mask[k]):#x}: {_where(B, ex.stmt, int(at[k]))}")
            warp = B.warp[at]
            starts = np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]])
            counts = np.diff(np.r_[starts, len(at)])
            mmin = np.minimum.reduceat(mask, starts)
            mmax = np.maximum.reduceat(mask, starts)
            if (mmin != mmax).any():
                k = int(starts[np.flatnonzero(mmin != mmax)[0]])
                raise EmulatorError(f"lanes of one warp pass different member masks to "
                                    f"shfl.sync: {_where(B, ex.stmt, int(at[k]))}")
            pop = np.array([bin(int(v)).count("1") for v in mmin])
            ready = counts == pop
            if not ready.any():
                continue
            go = at[np.repeat(ready, counts)]
            ex.run(B, go)
            B.wepoch[np.unique(B.warp[go])] += 1
            waiting[go] = False
            pc[go] += 1
            released = True
        return released

    def _one_barrier_per_warp(self, B: _Batch, at: np.ndarray):
        """The threads of a warp that wait at a block or cluster barrier all wait at
        the same instruction: bar.sync is warp-wide on a GPU, and a cluster
        barrier's arrival by different instructions within a block (one thread
        with release semantics, the rest relaxed) hung on an H100."""
        warp, pcs = B.warp[at], B.pc[at]
        o = np.argsort(warp, kind="stable")
        warp, pcs, at = warp[o], pcs[o], at[o]
        starts = np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]])
        lo = np.minimum.reduceat(pcs, starts)
        hi = np.maximum.reduceat(pcs, starts)
        bad = np.flatnonzero(lo != hi)
        if bad.size:
            k = int(starts[bad[0]])
            first = self.code[int(lo[bad[0]])].stmt
            other = self.code[int(hi[bad[0]])].stmt
            raise EmulatorError(f"threads of one warp wait at barriers by different "
                                f"instructions (PTX lines {first.line} and {other.line}; a "
                                f"GPU counts a warp's arrival per instruction): "
                                f"{_where(B, first, int(at[k]))}")

    def _deadlock(self, B: _Batch):
        w = np.flatnonzero(B.waiting)
        i = int(w[0])
        ex = self.code[int(B.pc[i])]
        b = int(B.block_of[i])
        others = np.flatnonzero(B.alive & (B.block_of == b) &
                                ~(B.waiting & (B.pc == B.pc[i])))
        detail = ""
        if others.size:
            j = int(others[0])
            where = (f"waits at PTX line {self.code[int(B.pc[j])].stmt.line}"
                     if B.waiting[j] else "has exited" if not B.alive[j] else "is elsewhere")
            detail = (f"; thread {int(B.tid[0][j]), int(B.tid[1][j]), int(B.tid[2][j])} of "
                      f"the same block {where}")
        if ex.kind == "mbar":
            raise EmulatorError(f"an mbarrier phase a thread waits for never completes (the "
                                f"arrivals or st.async bytes it expects never come): "
                                f"{_where(B, ex.stmt, i)}")
        what = {"bar": "bar.sync", "cbar": "the cluster barrier", "shfl": "shfl.sync"}[ex.kind]
        raise EmulatorError(f"{what} is never completed (not every thread that must take "
                            f"part reaches it): {_where(B, ex.stmt, i)}{detail}")


# ------------------------------------------------------------------ programs

class EmulatedExecutable(HoldsPlan):
    """A compiled CUDA program run by the PTX emulator: takes and returns numpy
    arrays, like the GPU runtime does for host arrays."""

    def __init__(self, plan: LaunchPlan, ptx_text, constants: Optional[Dict[str, np.ndarray]]
                 = None, path: Optional[str] = None):
        self.last_stats: list = []   # per launch of the last call: see _launch_stats
        # the clusters of a persistent launch an emulated device holds at once (None:
        # the plan's grid), as the GPU runtime cuts them (LaunchStep.grid_on)
        self.resident_clusters: Optional[int] = None
        if plan.target != "cuda":
            raise KfuseError(f"{plan.name!r}: the PTX emulator runs target 'cuda' programs, "
                             f"not {plan.target!r}")
        self.plan = plan
        text = ptx_text.decode() if isinstance(ptx_text, bytes) else ptx_text
        kernels = parse(text)
        # the module's .global variables (one set, shared by its kernels)
        self._globals = next(iter(kernels.values())).globals if kernels else {}
        self.programs: Dict[str, KernelProgram] = {}
        for name in plan.kernels:
            if name not in kernels:
                raise ArtifactError(f"{plan.name!r}: kernel {name!r} is not in the PTX")
            self.programs[name] = KernelProgram(kernels[name])
        self._constants = dict(plan.constant_arrays(constants, path))

    @property
    def name(self) -> str:
        return self.plan.name

    def __call__(self, *args, out=None):
        plan = self.plan
        if out is not None:
            raise CallError("out= is not supported by the PTX emulator")
        mem = self._execute(args)
        for i, b in enumerate(plan.buffers):
            if b.kind == "counter" and mem.view(i).any():
                raise EmulatorError(f"{plan.name!r}: {plan.buffer_label(i)} is not zero after "
                                    f"the call: its kernels must leave their counts zero (the "
                                    f"next call on the stream starts from them)")
        for i, b in enumerate(plan.buffers):
            if b.kind == "status":
                error = plan.guard_error(mem.view(i).view(np.int64), " (emulated)")
                if error is not None:
                    raise error
        outs = []
        for i, b in enumerate(plan.buffers):
            if b.kind == "output":
                outs.append((b.index, i))
        outs.sort()
        results = []
        for k, i in outs:
            spec = plan.outputs[k]
            dt = _host_dtype(spec.dtype)
            results.append(mem.view(i).view(dt).reshape(spec.shape).copy())
        return results[0] if len(results) == 1 else tuple(results)

    def profile(self, *args, blocks: int = 64) -> list:
        """Runs each launch on a sample of about `blocks` of its blocks (whole
        clusters, drawn from the grid with a fixed seed) and returns what they did
        (see last_stats): the accesses and PTX warp-instructions of the
        blocks run, and `sampled`, the blocks run of the grid's. For a model
        of a kernel's cost per byte at sizes too large to emulate whole: the
        results are not computed, nor the counts and guards checked (blocks
        left out may be the ones that finish them)."""
        if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < 1:
            raise CallError(f"profile: blocks must be a positive int, not {blocks!r}")
        self._execute(args, sample=blocks)
        return self.last_stats

    def _execute(self, args, sample: Optional[int] = None) -> "_Memory":
        """Runs the plan's steps on `args` (each launch on about `sample` of
        its blocks where given) and returns global memory after them; the
        launches' stats go to last_stats."""
        plan = self.plan
        plan.check_call(args)
        ins = [np.ascontiguousarray(np.asarray(a)) for a in args]
        sizes = [b.nbytes for b in plan.buffers]
        labels = [plan.buffer_label(i) for i in range(len(sizes))]
        variables = list(self._globals.values())
        mem = _Memory(sizes + [len(v.data) for v in variables],
                      labels + [f"module variable {v.name}" for v in variables])
        for j, v in enumerate(variables):
            mem.view(len(sizes) + j)[:] = np.frombuffer(v.data, np.uint8)
            mem.symbols[v.name] = mem.starts[len(sizes) + j]
        for i, b in enumerate(plan.buffers):
            if b.kind == "input":
                mem.view(i)[:] = ins[b.index].reshape(-1).view(np.uint8)
            elif b.kind == "const":
                mem.view(i)[:] = self._constants[i].reshape(-1).view(np.uint8)
            elif b.kind in ("counter", "status"):  # (zeroed once by the runtime)
                mem.view(i)[:] = 0
        stats = []
        for st in plan.steps:
            if st.op == "copy":
                mem.view(st.dst)[:] = mem.view(st.src)
                continue
            prog = self.programs[st.kernel]
            if len(st.args) != len(prog.kernel.params):
                raise ArtifactError(f"kernel {st.kernel!r} takes {len(prog.kernel.params)} "
                                    f"parameters, the plan passes {len(st.args)}")
            # the parameter bytes the GPU runtime would pass (ParamPack's slots)
            pack = ParamPack(st.args)
            pack.fill(mem.starts)
            params = {pname: int.from_bytes(pack.slot_bytes(i), "little")
                      for i, (pname, _) in enumerate(prog.kernel.params)}
            mem.launch += 1
            mem.reset_counts()
            grid = st.grid_on(self.resident_clusters)
            ran = prog.launch(mem, grid, st.block, st.smem, params, sample=sample)
            stats.append(self._launch_stats(st, grid, mem, prog, ran))
        self.last_stats = stats
        return mem

    def _launch_stats(self, st, grid, mem: _Memory, prog: "KernelProgram",
                      ran: int) -> dict:
        """What one launch (of `grid`; `ran` of its blocks run) did to global
        memory: requests (one per warp and access instruction), 32-byte
        sectors, bytes asked for (in all and by buffer index of the plan), and
        -- for launches small enough for the race checks -- the bytes of each
        buffer it read and wrote at least once; and `issued`, the PTX
        warp-instructions its warps issued, in all, by opcode (ld.global,
        fma, ex2, ...: the opcode, and the state space of memory ops) and by
        line of the PTX text (`by_line`)."""
        d = {"kernel": st.kernel, "grid": tuple(grid), "block": tuple(st.block),
             "sampled": (ran, int(grid[0]) * int(grid[1]) * int(grid[2]))}
        by_op: Dict[str, int] = {}
        by_line: Dict[int, int] = {}
        issued = mem.issued if mem.issued is not None else ()
        for s, n in zip(prog.kernel.body, issued):
            if n:
                key = _opcode_class(s.op)
                by_op[key] = by_op.get(key, 0) + int(n)
                by_line[s.line] = by_line.get(s.line, 0) + int(n)
        d["issued"] = {"warp_instructions": sum(by_op.values()), "by_op": by_op,
                       "by_line": by_line}
        for kind, (req, sectors, nbytes, per_buffer) in mem.counts.items():
            d[kind] = {"requests": req, "sectors": sectors, "bytes": nbytes,
                       "by_buffer": {int(i): int(per_buffer[i])
                                     for i in np.flatnonzero(per_buffer)}}
        if mem.shadow is not None:
            d["read"], d["written"] = {}, {}
            for i in range(len(self.plan.buffers)):
                r, w = mem.unique_bytes(i)
                if r:
                    d["read"][i] = r
                if w:
                    d["written"][i] = w
        return d


def _host_dtype(dt) -> np.dtype:
    from ..dtypes import to_numpy
    try:
        return to_numpy(dt)
    except KeyError:
        return np.dtype(np.uint16)     # bf16 without ml_dtypes: the bits


__all__ = ["EmulatedExecutable", "EmulatorError", "KernelProgram",
           "PtxError"]
