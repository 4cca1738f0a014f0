"""Generated Pallas kernels for the runtime property test: a correct kernel, then one planted bug.

A kernel copies x to o in two halves by DMA and signals and waits regular semaphores. Every
semaphore is named through one of many expressions (the Ref, an alias, an `.at[i]` view, one
indexed by a name or by the SMEM Ref `idx`, an element of a tuple or list of separate Refs, an
attribute of a holder `h` or `self`; the same text may also be spelled about another object in
a comprehension binding its own `h`), and rebinding statements in between change what those
expressions denote (writing `idx` too, through a view or not). A carried read sometimes reads
the whole semaphore array instead of the one semaphore the correct kernel names, where the
kernel shows the array's allocation. The generator tracks
that in a small model (`Env`), so each site names the semaphore it means, and the correct
kernel balances every signal with a wait: a fix that names another semaphore hangs or leaves a
count at kernel exit. The planted kernel differs from the correct one only by the bug.

SEM005 cases plant the bug in a DMA's buffer instead (`_buffer_plan`): a slice or element read
for a view, a read of a view or of a whole Ref (the VMEM `stage`, filled from x by `sync_copy`
and copied on to o), or a read carried in a variable to the DMA's source. Sometimes the carried
read is followed by a write to `stage`: the planted kernel means the data read, so the correct
kernel's write keeps the data (`* 1.0`) and a fix that passes the Ref copies what was written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

STAGE = "pltpu.VMEM((4, 128), jnp.float32)"  # the DMA buffer a store may write
REGULAR = ("R0", "R1", "RS0", "RS1", "P1")  # semaphore ids: scalars, array elements, tuple items
DMA = ("D0", "D1", "DS0", "DS1", "P0")
ROWS = ("0:4", "4:8")
COPIES = [  # both halves copied on d0 and d1: the lines every hand-written case needs
    line.format(r=ROWS[i], s=f"d{i}", i=i)
    for i in (0, 1)
    for line in ("c{i} = pltpu.make_async_copy(x_hbm.at[{r}], o_hbm.at[{r}], {s})", "c{i}.start()", "c{i}.wait()")
]


@dataclass
class Env:
    """What each name in the kernel denotes: a semaphore id, an array ("RS"), or a tuple of ids."""

    holder: str
    values: dict[str, object] = field(default_factory=dict)

    def expressions(self, target: str) -> list[str]:
        """Every expression the model offers for `target` here, the plainest first."""
        slot = self.values["slot"]
        found: list[str] = []
        for name, value in self.values.items():
            shown = name.replace("H.", f"{self.holder}.")
            if value == target:
                found.append(shown)
            elif isinstance(value, str) and target[:-1] == value:  # an array: a view of one element
                found.append(f"{shown}.at[{target[-1]}]")
                if str(slot) == target[-1]:
                    found.append(f"{shown}.at[slot]")
                if str(self.values["idx"]) == target[-1]:  # the index held in the SMEM Ref `idx`
                    found.append(f"{shown}.at[idx[0]]")
            elif isinstance(value, tuple) and target in value:  # separate Refs: x[i] is the Ref
                index = value.index(target)
                found.append(f"{shown}[{index}]")
                if slot == index:
                    found.append(f"{shown}[slot]")
        return found


def _rebinds(env: Env) -> list[tuple[str, tuple[str, ...], dict[str, object | None]]]:
    """(statement, names it rebinds, new values; None deletes) for every rebinding valid here."""
    h, v = env.holder, env.values
    found: list[tuple[str, tuple[str, ...], dict[str, object | None]]] = []
    for source in ("r0", "r1"):
        if source in v:
            for form in (
                "al = {s}",
                "(al := {s})",
                "for al in ({s},):\n    pass",
                "with contextlib.nullcontext({s}) as al:\n    pass",
            ):
                found.append((form.format(s=source), ("al",), {"al": v[source]}))
            found.append((f"{h}.sem = {source}", ("H.sem",), {"H.sem": v[source]}))
            found.append((f'setattr({h}, "sem", {source})', ("H.sem",), {"H.sem": v[source]}))
    if "al" in v:
        found.append(("del al", ("al",), {"al": None}))
    found.append(("r0, r1 = r1, r0", ("r0", "r1"), {"r0": v.get("r1"), "r1": v.get("r0")}))
    found.append(("d0, d1 = d1, d0", ("d0", "d1"), {"d0": v["d1"], "d1": v["d0"]}))
    found.append((f"{h}.dsem = d1", ("H.dsem",), {"H.dsem": v["d1"]}))
    found.append(("slot = 1 - slot", ("slot",), {"slot": 1 - v["slot"]}))
    found.append(("slot ^= 1", ("slot",), {"slot": 1 - v["slot"]}))
    for form in ("idx.at[0:1][...] = 1 - idx[0:1]", "idx.at[0:1].at[0:1][...] = 1 - idx[0:1]", "idx[0] = 1 - idx[0]"):
        found.append((form, ("idx",), {"idx": 1 - v["idx"]}))  # a write to the index Ref, through a view or not
    found.append((f"{h}.arr = (r0, r1)", ("H.arr",), {"H.arr": (v.get("r0"), v.get("r1"))}))
    found.append((f"{h}.arr = rs", ("H.arr",), {"H.arr": "RS"}))
    return found


def _touches(expression: str, names: tuple[str, ...], holder: str) -> bool:
    """Whether `expression` reads one of `names` (a name, or an attribute of the holder)."""
    return any(
        re.search(rf"(?<![\w.]){re.escape(name.replace('H.', holder + '.'))}(?!\w)", expression) for name in names
    )


def _moves(env: Env, rebinding: tuple, expression: str, target: str) -> bool:
    """Whether `expression` stops naming `target` after `rebinding` (so a fix there is wrong)."""
    after = Env(env.holder, dict(env.values))
    for name, value in rebinding[2].items():
        if value is None:
            after.values.pop(name, None)
        else:
            after.values[name] = value
    return expression not in after.expressions(target)


class KernelCase:
    """A correct kernel module and the same module with one bug planted (or none)."""

    def __init__(self, correct: str, planted: str, mutation: str, body: str) -> None:
        self.correct = correct  # a module with run(): the known-correct kernel
        self.planted = planted  # the same module with the bug planted
        self.mutation = mutation  # "none" or "SEM001" to "SEM005"
        self.body = body  # the planted kernel's body, for reading a failing example

    @classmethod
    def of(cls, correct: list[str], planted: list[str], mutation: str, holder: str = "h") -> KernelCase:
        """A hand-written case: kernel bodies (copies included) in the generated layout."""
        return cls(
            _module(correct, holder, False, True), _module(planted, holder, False, True), mutation, "\n".join(planted)
        )

    @property
    def planted_lines(self) -> frozenset[int]:
        """The 1-based lines where the planted kernel differs from the correct one."""
        pairs = zip(self.correct.splitlines(), self.planted.splitlines())
        return frozenset(n for n, (good, bad) in enumerate(pairs, 1) if good != bad)

    def __repr__(self) -> str:
        layout = {
            "holder": "self" if "class Steps" in self.planted else "h",
            "run_scoped": "run_scoped" in self.planted,
            "scratch_inline": "scratch_shapes=[" in self.planted,
        }
        return f"KernelCase({self.mutation}, {layout}):\n{self.body}"


HEADER = """import contextlib
import types

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
"""

HOLDER_CLASS = """

class Steps:
    def __init__(self, sem, arr, dsem, pair):
        self.sem = sem
        self.arr = arr
        self.dsem = dsem
        self.pair = pair

    def run(self, x_hbm, idx, o_hbm, r0, r1, d0, d1, rs, ds, pair, stage):
{body}
"""

RUN = """

def scratch():
    return [{scratch}]


def run():
    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[anywhere, pl.BlockSpec(memory_space=pltpu.SMEM)],
        out_specs=anywhere,
        scratch_shapes={shapes},
        interpret=pltpu.InterpretParams(),
    )(x, jnp.zeros((1,), jnp.int32))
"""


def _module(body: list[str], holder: str, scoped: bool, inline_scratch: bool, fill: str = "") -> str:
    """The whole module around a kernel body (lines without indentation).

    With `scoped`, r1 comes from `pl.run_scoped` and the body runs in a module-level function
    (a nested one could not rebind the kernel's parameters); with holder "self", in a method.
    `fill` is the kernel's first line: outside the body's function in those layouts, so a
    Ref it writes looks unwritten there.
    """
    refs = "x_hbm, idx, o_hbm, r0, r1, d0, d1, rs, ds, pair, stage"
    R, D = "pltpu.SemaphoreType.REGULAR", "pltpu.SemaphoreType.DMA"
    kinds = [R] + ([] if scoped else [R]) + [D, D, f"{R}((2,))", f"{D}((2,))", f"({D}, {R})", STAGE]
    lines = ["al = r0", "slot = 0", "lst = [r0, r1]", *body]
    if holder == "self":
        inner = "\n".join(_indent(line, 8) for line in lines)
        text = HOLDER_CLASS.format(body=inner)
        call = f"Steps(r0, rs, d0, pair).run({refs})"
    else:
        lines.insert(0, "h = types.SimpleNamespace(sem=r0, arr=rs, dsem=d0, pair=pair)")
        inner = "\n".join(_indent(line, 4) for line in lines)
        text = f"\n\ndef steps({refs}):\n{inner}\n" if scoped else ""
        call = f"steps({refs})"
    if scoped:
        kernel = f"    def body(r1):\n        {call}\n\n    pl.run_scoped(body, {R})"
    elif holder == "self":
        kernel = f"    {call}"
    else:
        kernel = inner
    params = refs.replace(" r1,", "") if scoped else refs
    kernel = f"    {fill}\n{kernel}" if fill else kernel
    text += f"\n\ndef kernel({params}):\n{kernel}\n"
    scratch = ", ".join(kinds)
    shapes = f"[{scratch}]" if inline_scratch else "scratch()"
    return HEADER + text + RUN.format(scratch=scratch, shapes=shapes)


def _indent(line: str, width: int) -> str:
    return "\n".join(" " * width + part for part in line.split("\n"))


@st.composite
def kernel_cases(draw: st.DrawFn) -> KernelCase:
    """A correct kernel and the same kernel with one planted bug (or none)."""
    # weighted towards the classes whose fixes need the most proof: carried reads, and none
    # (a correct kernel full of tuple elements and rebinding, which must stay as it is). A carried
    # read may be of a view indexed by `idx` ("-index": `idx` is written before the use, if it can
    # be) or of the whole array ("-whole", in the layout where semfix sees the allocation)
    mutation, _, carry = draw(
        st.sampled_from(
            [
                "SEM003",
                "none",
                "SEM002",
                "SEM003",
                "SEM001",
                "none",
                "SEM004",
                "SEM003",
                "SEM005",
                "SEM005",
                "SEM003-index",
                "SEM003-whole",
            ]
        )
    ).partition("-")
    shown = carry == "whole"  # `rs`, `ds` are the kernel's parameters, given their allocations inline
    holder = "h" if shown else draw(st.sampled_from(["h", "self"]))
    scoped = False if shown else draw(st.booleans())
    inline_scratch = True if shown else draw(st.booleans())

    # operations: two DMA halves on distinct DMA semaphores, 0-2 signal/wait pairs
    halves = draw(st.lists(st.sampled_from(DMA), min_size=2, max_size=2, unique=True))
    ops = [("dma", t, i) for i, t in enumerate(halves)]
    ops += [("sig", t, draw(st.integers(1, 3))) for t in draw(st.lists(st.sampled_from(REGULAR), max_size=2))]
    # an order: each operation starts before it finishes
    items: list[tuple] = []
    started: set[int] = set()
    while len(items) < 2 * len(ops):
        ready = [("start", i) for i in range(len(ops)) if i not in started]
        ready += [("finish", i) for i in started if ("finish", i) not in {x[:2] for x in items}]
        phase, i = draw(st.sampled_from(ready))
        started.add(i)
        items.append((phase, i))
    for _ in range(draw(st.integers(0, 2))):  # rebinding statements anywhere
        items.insert(draw(st.integers(0, len(items))), ("rebind",))

    sites = [n for n, item in enumerate(items) if item[0] in ("start", "finish")]
    arrays = [n for n in sites if ops[items[n][1]][1][:2] in ("RS", "DS")]  # sites with a view
    wanted = arrays if (mutation in ("SEM002", "SEM004") or carry) and arrays else sites
    if carry == "index":  # `idx` holds 0 until a rebinding writes it
        wanted = [n for n in wanted if ops[items[n][1]][1].endswith("0")] or wanted
    if mutation == "SEM005":
        wanted = [n for n in sites if ops[items[n][1]][0] == "dma"]
    chosen = draw(st.sampled_from(wanted))  # the mutated site, or the first use of a carrier
    carriers: dict[int, int] = {}  # position in items -> the site that must use the variable
    if mutation == "SEM003":
        carriers[draw(st.integers(0, chosen))] = chosen
        later = [s for s in sites if s > chosen]
        if later and draw(st.booleans()):  # the same variable assigned again, for another site
            second = draw(st.sampled_from(later))
            carriers[draw(st.integers(chosen + 1, second))] = second
    variable = draw(st.sampled_from(["v", "tok"]))
    read = draw(st.sampled_from(["[...]", "[()]"]))

    env = Env(
        holder,
        {
            "r0": "R0",
            "r1": "R1",
            "d0": "D0",
            "d1": "D1",
            "al": "R0",
            "slot": 0,
            "H.sem": "R0",
            "H.dsem": "D0",
            "H.arr": "RS",
            "H.pair": ("P0", "P1"),
            "lst": ("R0", "R1"),
            "rs": "RS",
            "ds": "DS",
            "pair": ("P0", "P1"),
            "idx": 0,
        },
    )
    correct: list[str] = []
    planted: list[str] = []
    planted_kind = mutation if mutation in ("SEM003", "SEM005") else "none"
    plan = _buffer_plan(draw, holder, items, chosen, ops[items[chosen][1]][2]) if mutation == "SEM005" else BufferPlan()
    for good_line, bad_line in plan.prologue:
        correct.append(good_line)
        planted.append(bad_line)
    if draw(st.booleans()):  # issue 20.3: the holder's `pair` (a tuple of Refs) spelled about an
        # array, in a comprehension binding its own holder name: no evidence that `pair` takes `.at`
        shadowed = f"views = [{holder}.pair.at[0] for {holder} in (types.SimpleNamespace(pair=rs),)]"
        correct.append(shadowed)
        planted.append(shadowed)
    carried: str | None = None  # the semaphore the variable holds, while it does
    must_use: int | None = None

    def rebind(options: list) -> None:
        text, _, update = draw(st.sampled_from(options))
        for name, value in update.items():
            if value is None:
                env.values.pop(name, None)
            else:
                env.values[name] = value
        correct.append(text)
        planted.append(text)

    for n, item in enumerate(items):
        for good_line, bad_line in plan.inserts.get(n, []):
            correct.append(good_line)
            planted.append(bad_line)
        if n in carriers:
            must_use = carriers[n]
            op = ops[items[must_use][1]]
            options = _favour_indirect(env.expressions(op[1]))
            if carry:  # `rs.at[idx[0]]`, or a view of `rs`, `ds` to read whole
                kept = [o for o in options if ("idx[" in o if carry == "index" else o.startswith(("rs.", "ds.")))]
                options = kept or options
            expression = draw(st.sampled_from(options))
            correct.append(f"{variable} = {expression}")
            # the whole semaphore array read instead, where the kernel shows semfix the allocation:
            # elsewhere `f(rs[...])` is not known to be an array either, and SEM001's fix `rs` fails
            # as the read did
            whole = expression.partition(".at[")[0]
            misread = whole if shown and whole in ("rs", "ds") else expression
            planted.append(f"{variable} = {misread}{read}")
            carried = op[1]
            moving = [
                r for r in _rebinds(env) if _touches(expression, r[1], holder) and _moves(env, r, expression, carried)
            ]
            if moving and (carry == "index" or draw(st.integers(0, 3))):  # rebind what the read named, before the use
                rebind(moving)
        if item[0] == "rebind":
            rebind(_rebinds(env))
            continue
        if item[0] not in ("start", "finish"):
            continue
        kind, target, extra = ops[item[1]]
        options = env.expressions(target)
        if n == chosen and mutation in ("SEM002", "SEM004"):
            options = [o for o in options if ".at[" in o] or options
        good = draw(st.sampled_from(_favour_indirect(options)))
        bad = good
        if n == must_use or (carried == target and n > min(carriers, default=n) and draw(st.booleans())):
            good = bad = variable
        elif n == chosen and mutation not in ("none", "SEM005"):
            bad, planted_kind = _plant(mutation, good, read, draw)
        rows = ROWS[extra] if kind == "dma" else ""
        default = (f"x_hbm.at[{rows}]", f"o_hbm.at[{rows}]")
        buffers = plan.buffers.get(n, (default, default))
        for lines, arg, pair in ((correct, good, buffers[0]), (planted, bad, buffers[1])):
            lines.extend(_site(kind, item[0], arg, extra, pair))
    return KernelCase(
        _module(correct, holder, scoped, inline_scratch, plan.fill[0]),
        _module(planted, holder, scoped, inline_scratch, plan.fill[1]),
        planted_kind,
        "\n".join(([plan.fill[1]] if plan.fill[1] else []) + planted),
    )


def _plant(mutation: str, expression: str, read: str, draw: st.DrawFn) -> tuple[str, str]:
    """The planted bug at one site and its rule (SEM002 and SEM004 need a view, else SEM001)."""
    base, _, index = expression.partition(".at[")
    if mutation == "SEM002" and index:
        return f"{base}[{index}", mutation
    if mutation == "SEM004" and index:
        return draw(st.sampled_from([f"{base}.at[0:2]", base, f"{base}.at[:]"])), mutation
    return expression + read, "SEM001"


def _favour_indirect(options: list[str]) -> list[str]:
    """Expressions through the holder, an alias or an index name twice as often as plain ones."""
    return options + [o for o in options if re.search(r"\b(h|self|al|lst)\b|slot|idx", o)]


def _site(kind: str, phase: str, arg: str, extra: int, buffers: tuple[str, str]) -> list[str]:
    if kind == "sig":
        return [f"pl.semaphore_{'signal' if phase == 'start' else 'wait'}({arg}, {extra})"]
    copy = f"pltpu.make_async_copy({buffers[0]}, {buffers[1]}, {arg})"
    return [f"c{extra} = {copy}", f"c{extra}.start()"] if phase == "start" else [f"{copy}.wait()"]


Pair = tuple[str, str]  # a line, or a DMA's (source, destination), as (correct, planted)


@dataclass
class BufferPlan:
    """A SEM005 case: lines before the body, lines before an item, the DMA buffers of the
    mutated copy's sites and the kernel's first line, each as (correct, planted); other sites
    copy x to o directly."""

    prologue: list[Pair] = field(default_factory=list)
    inserts: dict[int, list[Pair]] = field(default_factory=dict)
    buffers: dict[int, tuple[Pair, Pair]] = field(default_factory=dict)
    fill: Pair = ("", "")  # the kernel's first line: x -> stage


def _buffer_plan(draw: st.DrawFn, holder: str, items: list[tuple], chosen: int, half: int) -> BufferPlan:
    """Plant a SEM005 bug on the copy of rows `half` at site `chosen`: see the module docstring."""
    op, rows, other = items[chosen][1], ROWS[half], ROWS[1 - half]
    start, finish = (n for n, item in enumerate(items) if item[:2] in (("start", op), ("finish", op)))
    form = draw(st.sampled_from(["slice", "view", "whole", "carried", "carried", "carried"]))
    staged = form == "whole" or (form == "carried" and draw(st.booleans()))
    plan = BufferPlan()
    names = {"x_hbm": ["x_hbm"], "stage": ["stage"]}
    for name, ref in draw(
        st.lists(
            st.sampled_from([("xa", "x_hbm"), ("H.x", "x_hbm"), ("sv", "stage"), ("H.st", "stage")]),
            max_size=2,
            unique=True,
        )
    ):
        shown = name.replace("H.", f"{holder}.")  # another name for the Ref: an alias or holder attribute
        plan.prologue.append((f"{shown} = {ref}",) * 2)
        names[ref].append(shown)
    source = draw(st.sampled_from(names["stage"])) if staged else f"{draw(st.sampled_from(names['x_hbm']))}.at[{rows}]"
    read = draw(st.sampled_from(["[...]", "[()]"]))
    good = (source, f"o_hbm.at[{rows}]")
    plan.buffers = {start: (good, good), finish: (good, good)}
    in_fill = form == "whole" and draw(st.booleans())  # the read planted in the fill's destination
    if staged:  # x -> stage here, stage -> o at the copy
        fill = f"pltpu.sync_copy(x_hbm.at[{rows}], stage)"
        plan.fill = (fill, fill[:-1] + read + ")" if in_fill else fill)
    if form == "carried":
        variable = draw(st.sampled_from(["buf", "tile"]))
        at = draw(st.integers(0, start))
        plan.inserts.setdefault(at, []).append((f"{variable} = {source}", f"{variable} = {source}{read}"))
        if staged and draw(st.integers(0, 2)):  # a write to the Ref between the read and the copy
            ref = draw(st.sampled_from(names["stage"]))
            write = draw(
                st.sampled_from(
                    [
                        f"{ref}[...] = {ref}[...] * {{f}}",
                        f"{ref}[0:2] = {ref}[0:2] * {{f}}",
                        f"{ref}[...] *= {{f}}",
                        f"{ref}.at[0:2][...] = {ref}.at[0:2][...] * {{f}}",
                        f"pltpu.sync_copy(x_hbm.at[{{r}}], {ref})",
                    ]
                )
            )
            plan.inserts.setdefault(draw(st.integers(at, start)), []).append(
                (write.format(f="1.0", r=rows), write.format(f="2.0", r=other))
            )
        carried = (variable, good[1])
        plan.buffers[start] = (carried, carried)
        if draw(st.booleans()):
            plan.buffers[finish] = (carried, carried)
        return plan
    if in_fill:
        return plan
    bad = list(good)
    side = 0 if form == "whole" else draw(st.sampled_from([1] if staged else [0, 1]))
    base, _, index = good[side].partition(".at[")
    bad[side] = f"{base}[{index}" if form == "slice" else good[side] + read
    plan.buffers[chosen] = (good, (bad[0], bad[1]))
    return plan
