"""Generated corpora for the benchmark: plain Python, and Pallas kernels with planted bugs.

Everything here is written for this benchmark. Kernel modules mix import styles, scalar and
array semaphores, DMA descriptors, run_scoped and pallas_call, and offer call sites where a
bug can be planted: `sem` becomes `sem[...]`, `sems.at[i]` becomes `sems.at[i][...]`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

_IMPORTS = [
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n",
    "import jax.experimental.pallas as pl\nimport jax.experimental.pallas.tpu as pltpu\n",
    "from jax.experimental import pallas as pl\nimport jax.experimental.pallas.tpu as pltpu\n",
]

# Each template is one kernel; {n} makes names unique, and «X» marks a plantable argument.
_KERNELS = [
    '''
def ring_step_{n}(x_hbm, o_hbm, send_sems, recv_sems, ready_sem, *, axis, steps={s}):
    """Shift a block to the right neighbour, {s} times, and count arrivals."""
    me = jax.lax.axis_index(axis)
    right = jax.lax.rem(me + 1, {s})
    for step in range({s}):
        slot = step % 2
        copy = pltpu.make_async_remote_copy(
            x_hbm.at[slot],
            o_hbm.at[slot],
            «send_sems.at[slot]»,
            «recv_sems.at[slot]»,
            device_id=(right,),
        )
        copy.start()
        pl.semaphore_signal(«ready_sem», 1, device_id=(right,))
        pl.semaphore_wait(«ready_sem», 1)
        copy.wait()
    return me
''',
    '''
def double_buffer_{n}(x_hbm, o_vmem, buffers, sems):
    """Prefetch block i + 1 while block i is scaled by {s}."""
    def fetch(i, slot):
        return pltpu.make_async_copy(x_hbm.at[i], buffers.at[slot], «sems.at[slot]»)

    fetch(0, 0).start()
    for i in range({s}):
        slot = i % 2
        if i + 1 < {s}:
            fetch(i + 1, 1 - slot).start()
        pltpu.make_async_copy(x_hbm.at[i], buffers.at[slot], «sems.at[slot]»).wait()
        o_vmem[i] = buffers[slot] * {s}.0
''',
    '''
def scoped_copy_{n}(x_hbm, o_hbm):
    """Copy through a scoped DMA semaphore; the count is read back for a check."""
    def body(sem, flags):
        pltpu.async_copy(x_hbm, o_hbm, «sem»).wait()
        pl.semaphore_signal(«flags.at[0]», {s})
        seen = pl.semaphore_read(«flags.at[0]»)
        pl.semaphore_wait(«flags.at[0]», {s})
        return seen

    return pl.run_scoped(body, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR(({s},)))
''',
    '''
def barrier_{n}(o_ref, barrier_sem, core_sem):
    """Meet every core, then every device, before writing {s}."""
    pltpu.core_barrier(«core_sem», core_axis_name="core")
    for peer in range({s}):
        pl.semaphore_signal(«barrier_sem», 1, device_id=(peer,))
    pl.semaphore_wait(«barrier_sem», {s})
    o_ref[...] = jnp.full(o_ref.shape, {s}, o_ref.dtype)


def run_barrier_{n}(x):
    return pl.pallas_call(
        barrier_{n},
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR],
    )()
''',
]

_PLAIN = [
    '''
class Accumulator{n}:
    """Keeps a running total and a history of at most {s} values."""

    def __init__(self, start: float = 0.0) -> None:
        self.total = start
        self.history: list[float] = []

    def add(self, value: float) -> float:
        self.total += value
        self.history.append(value)
        if len(self.history) > {s}:
            self.history.pop(0)
        return self.total

    def mean(self) -> float:
        return sum(self.history) / max(len(self.history), 1)
''',
    """
def tokenize_{n}(text: str) -> list[str]:
    # Split on spaces and punctuation, keep words longer than {s} characters.
    words = []
    for raw in text.replace(",", " ").replace(".", " ").split():
        word = raw.strip().lower()
        if len(word) > {s} and word.isalpha():
            words.append(word)
    return words


def histogram_{n}(words: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {{}}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return {{k: v for k, v in sorted(counts.items()) if v > 1}}
""",
    '''
def matrix_{n}(rows: int, cols: int) -> list[list[int]]:
    """A {s}-banded matrix as nested lists, with a checksum in the corner."""
    grid = [[(r * cols + c) % {s} for c in range(cols)] for r in range(rows)]
    checksum = sum(sum(row) for row in grid)
    if rows and cols:
        grid[-1][-1] = checksum % 97
    return grid


async def fetch_all_{n}(client, urls: list[str]) -> list[bytes]:
    results = []
    for url in urls:
        try:
            response = await client.get(url, timeout={s})
        except TimeoutError:
            continue
        results.append(response.body)
    return results
''',
]


@dataclass
class Module:
    clean: str
    planted: str
    bugs: int


def _fill(template: str, n: int, rng: random.Random) -> str:
    return template.replace("{n}", str(n)).replace("{s}", str(rng.randint(2, 9))).replace("{{", "{").replace("}}", "}")


def plain_module(rng: random.Random, lines: int) -> str:
    parts = ['"""Generated helper module."""\nimport asyncio\nimport math\n']
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(_fill(rng.choice(_PLAIN), n, rng))
        n += 1
    return "\n".join(parts)


def kernel_module(rng: random.Random, lines: int, bug_rate: float) -> Module:
    """A kernel module; each «argument» is planted as a bug with probability `bug_rate`."""
    parts = ['"""Generated Pallas kernels."""\nimport jax\nimport jax.numpy as jnp\n' + rng.choice(_IMPORTS)]
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(_fill(rng.choice(_KERNELS), n, rng))
        n += 1
    marked = "\n".join(parts)
    clean, planted, bugs = [], [], 0
    for index, piece in enumerate(marked.split("«")):
        if index == 0:
            clean.append(piece)
            planted.append(piece)
            continue
        argument, rest = piece.split("»", 1)
        clean.append(argument + rest)
        if rng.random() < bug_rate:
            planted.append(f"{argument}[...]{rest}")
            bugs += 1
        else:
            planted.append(argument + rest)
    return Module("".join(clean), "".join(planted), bugs)
