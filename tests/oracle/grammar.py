"""Correct Pallas kernels generated from a grammar of what semfix reasons about; a seed is a case.

A kernel first copies x to o whole, then runs a few blocks. Each block owns one or two
2-row chunks of o, writes them by DMA from chunks of x (of the other device's x, for a remote
copy; doubled through VMEM, for a helper that stores values), or only signals and waits a
REGULAR or barrier semaphore. Every semaphore a block uses is one element no other block
uses, so every signal is balanced by a wait and a mistake that names another semaphore hangs
or leaves a count. `expected()` is written beside the kernel from the same plan, so the
module checks itself.

Every semaphore argument, DMA buffer, local view, helper argument and allocation kind is
written as a *site*: a token in the template, with its correct text and the texts of the
mistakes that may be planted there (mutants.py). `Case.correct` and `Case.mutant` render
the template; the plan (`Plan`) is kept so the shrinker can drop parts and render again.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace

from .mutants import buffer_mutants, kind_mutants, render, sem_mutants

CHUNKS = 8  # x and o are (16, 128): 8 chunks of 2 rows
LAUNCHES = ("pallas_call", "pl.kernel", "prefetch", "remote", "build")
SPELLINGS = ("literal", "constant", "times", "param")
WRAPS = ("none", "when", "fori", "cond", "closure")
#: How the launch names the kernel: as written, made by a factory, a staticmethod, a method
#: (`self.kernel`), a `functools.partial` held in a local, a lambda that calls it.
WRAPPERS = ("plain", "plain", "factory", "staticmethod", "method", "partial", "lambda")
#: One module, or a package `kern` (issue 43 §1, §3): the kernel in `ops.py`, its launch (`run()`,
#: `build()`) in a sibling `api.py`, and/or `pl`/`pltpu` re-exported by a sibling `_compat.py`.
LAYOUTS = ("module",) * 6 + ("sibling", "compat", "sibling+compat")
#: The line that starts each module of a package case's text (`modules` splits it there).
MODULE = "# --- kern/{}.py ---\n"


@dataclass
class Site:
    """One place a mistake may be planted: its correct text and (mutation, text) pairs."""

    role: str
    text: str
    mutants: list[tuple[str, str]]
    alloc: Alloc | None = None  # the allocation whose semaphore it names (None: a buffer)


@dataclass
class Alloc:
    """A semaphore allocation: a kernel (or run_scoped body) parameter."""

    name: str
    kind: str  # REGULAR, DMA or BARRIER
    rank: int
    scoped: bool
    container: str = ""  # "tuple" or "list": two scalar Refs, not an array
    site: int = -1  # the site of its kind
    unshown: bool = False  # its shape a parameter: the file does not show its rank

    def elements(self) -> list[tuple[int, ...]]:
        if self.container:
            return [(0,), (1,)]
        cells = [()]
        for _ in range(self.rank):
            cells = [c + (i,) for c in cells for i in (0, 1)]
        return cells


@dataclass
class Plan:
    """The choices a case is rendered from; the shrinker edits it (drops blocks, plain forms)."""

    seed: int
    launch: str
    spelling: str
    scoped: str  # "", "positional", "keyword", "decorator"
    blocks: list[dict[str, object]] = field(default_factory=list)
    plain: frozenset[str] = frozenset()  # features the shrinker turned off
    wrapper: str = "plain"  # how the launch reaches the kernel (WRAPPERS)
    imports: str = "plain"  # "try": Pallas imported in `try:`, `pl = pltpu = None` on ImportError
    alias: bool = False  # the kernel signals and waits through names bound by a version check
    layout: str = "module"  # LAYOUTS: one module, or a package `kern` of the kernel module and its siblings
    via: str = "from"  # how a sibling launch names the kernel module: `from .ops import kernel` or `from . import ops`


class Writer:
    """Renders a plan into a module template with site tokens."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed * 7919 + 1)
        self.sites: list[Site] = []
        self.allocs: list[Alloc] = []
        self.helpers: dict[str, str] = {}
        self.constants: dict[str, str] = {}
        self.expected: list[str] = []
        self.deferred: list[str] = []
        self.names: dict[str, int] = {}
        self.features: set[str] = {plan.launch, f"shape-{plan.spelling}", f"scoped-{plan.scoped or 'none'}"}
        self.holder = ""  # a NamedTuple of the kernel's allocations, when one is made
        self.vmem = False
        self.barrier = False

    # -- small parts -------------------------------------------------------------------------
    def on(self, feature: str, chance: float = 0.5) -> bool:
        """A random choice of a feature, never one the shrinker turned off."""
        return feature not in self.plan.plain and self.rng.random() < chance

    def fresh(self, stem: str) -> str:
        self.names[stem] = self.names.get(stem, 0) + 1
        return stem if self.names[stem] == 1 else f"{stem}{self.names[stem]}"

    def site(self, role: str, text: str, mutants: list[tuple[str, str]]) -> str:
        self.sites.append(Site(role, text, mutants))
        return f"\x00{len(self.sites) - 1}\x00"

    def alloc(self, kind: str) -> tuple[Alloc, tuple[int, ...]]:
        """An unused semaphore element of `kind`: from an allocation with one free, or a new one."""
        for a in self.allocs:
            used = self.used.setdefault(a.name, set())
            free = [e for e in a.elements() if e not in used]
            if a.kind == kind and free and self.rng.random() < 0.7:
                element = self.rng.choice(free)
                used.add(element)
                return a, element
        scoped = bool(self.plan.scoped) and (kind == "BARRIER" or self.rng.random() < 0.5)
        container = ""
        if kind != "BARRIER" and self.on("container", 0.2):
            container = self.rng.choice(["tuple", "list"])
        rank = 0 if kind == "BARRIER" else self.rng.choice([0, 1, 1, 2, 2, 3])
        stem = {"REGULAR": "flags", "DMA": "sems", "BARRIER": "bar"}[kind] if not container else "pair"
        a = Alloc(self.fresh(stem), kind, rank, scoped, container)
        self.allocs.append(a)
        self.used[a.name] = {element := self.rng.choice(a.elements())}
        return a, element

    used: dict[str, set[tuple[int, ...]]]

    def shape(self, a: Alloc) -> str:
        """The allocation's text, its kind a site (the wrong-kind mistake)."""
        kind = self.site("alloc", f"pltpu.SemaphoreType.{a.kind}", kind_mutants(a.kind))
        a.site = len(self.sites) - 1
        self.sites[a.site].alloc = a
        if a.container:
            pair = f"{kind}, pltpu.SemaphoreType.{a.kind}"
            return f"({pair})" if a.container == "tuple" else f"[{pair}]"
        if a.rank == 0:
            return kind
        literal = "(" + ", ".join(["2"] * a.rank) + ("," if a.rank == 1 else "") + ")"
        spelling = self.plan.spelling
        if spelling == "constant":
            name = f"{a.name.upper()}_SHAPE"
            self.constants[name] = literal
            return f"{kind}({name})"
        if spelling == "times":
            return f"{kind}((2,) * {a.rank})"
        if spelling == "param" and not a.scoped and self.plan.launch == "build":
            a.unshown = True
            return f"{kind}({a.name}_shape)"
        return f"{kind}({literal})"

    # -- naming a semaphore element ----------------------------------------------------------
    def base(self, a: Alloc, lines: list[str]) -> str:
        if self.holder and not a.scoped and self.on("namedtuple", 0.4):
            return f"{self.holder}.{a.name}"
        return a.name

    def sem(self, a: Alloc, element: tuple[int, ...], lines: list[str], ctx: dict[str, object]) -> str:
        """An expression naming `element` of `a` (lines it needs are added to `lines`); its
        sites hold the allocation."""
        first = len(self.sites)
        token = self._sem(a, element, lines, ctx)
        for site in self.sites[first:]:
            site.alloc = a
        return token

    def _sem(self, a: Alloc, element: tuple[int, ...], lines: list[str], ctx: dict[str, object]) -> str:
        base = self.base(a, lines)
        if a.container:
            if self.on("unpack", 0.3):
                first, second = self.fresh("first"), self.fresh("second")
                lines.append(f"{first}, {second} = {base}")
                self.features.add("unpack")
                name = (first, second)[element[0]]
                return self.site("sem", name, sem_mutants(name, [], self.rng))
            self.features.add(f"container-{a.container}")
            text = f"{base}[{element[0]}]"
            return self.site("sem", text, sem_mutants(base, [[str(element[0])]], self.rng, at=False))
        if a.rank == 1 and self.on("comprehension", 0.2):  # a container of views the kernel builds
            views, form = self.fresh("views"), self.rng.choice(["list", "tuple", "dict"])
            each = self.site("view", f"{base}.at[i]", sem_mutants(base, [["i"]], self.rng))
            made = {"list": f"[{each} for i in range(2)]", "tuple": f"tuple({each} for i in range(2))"}
            lines.append(f"{views} = {made.get(form, f'{{i: {each} for i in range(2)}}')}")
            self.features.add(f"comprehension-{form}")
            picked = f"{views}[{self.index(element[0], lines, ctx, traced=False)}]"
            return self.site("sem", picked, sem_mutants(views, [[picked[len(views) + 1 : -1]]], self.rng, at=False))
        if a.rank == 0:
            if self.on("alias", 0.3):
                alias = self.fresh("sem")
                lines.append(f"{alias} = {self.site('sem', base, sem_mutants(base, [], self.rng))}")
                base = alias
            return self.site("sem", base, sem_mutants(base, [], self.rng))
        indices = [self.index(i, lines, ctx) for i in element]
        if a.rank >= 1 and self.on("local-view", 0.35):  # `row = sems.at[0]`, then `row.at[1]`
            cut = self.rng.randint(1, a.rank)
            row = self.fresh("row" if cut < a.rank else "one")
            view = [indices[:cut]]
            lines.append(f"{row} = {self.site('view', render(base, view), sem_mutants(base, view, self.rng))}")
            self.features.add("local-view")
            base, indices = row, indices[cut:]
            if not indices:
                return self.site("sem", row, sem_mutants(row, [], self.rng))
        if len(indices) > 1 and self.on("tuple-index", 0.2):
            held = self.fresh("sem_idx")
            lines.append(f"{held} = ({', '.join(indices)})")
            self.features.add("tuple-index")
            subs = [[held]]
        elif len(indices) > 1 and self.on("chain", 0.4):
            cut = self.rng.randint(1, len(indices) - 1)
            subs = [indices[:cut], indices[cut:]]
            self.features.add("chain")
        else:
            subs = [indices]
        layout = self.rng.choice(["plain"] * 4 + ["comment", "break"]) if "layout" not in self.plan.plain else "plain"
        if layout != "plain":
            self.features.add(f"layout-{layout}")
        token = self.site("sem", render(base, subs, layout), sem_mutants(base, subs, self.rng, layout=layout))
        if self.on("conditional-argument", 0.1):  # the argument a conditional expression
            self.constants["FLIP"] = "True"
            self.features.add("conditional-argument")
            return f"({token} if FLIP else {render(base, subs)})"
        return token

    def index(self, value: int, lines: list[str], ctx: dict[str, object], traced: bool = True) -> str:
        """A spelling of a constant index: a literal, a local, a conditional expression, a loop
        variable (0 in a one-step fori_loop) or a scalar-prefetch read (`traced`: not into a
        Python container, which a traced value cannot index)."""
        options = ["literal"] * 3 + ["local", "conditional"]
        if ctx.get("loop") and traced:
            options += ["loop"] * 2
        if self.plan.launch == "prefetch" and traced:
            options += ["prefetch"]
        form = self.rng.choice(options) if "index" not in self.plan.plain else "literal"
        self.features.add(f"index-{form}")
        if form == "local":
            slot = self.fresh("slot")
            lines.append(f"{slot} = {value}")
            return slot
        if form == "conditional":
            self.constants["FLIP"] = "True"
            return f"{value} if FLIP else {1 - value}"
        if form == "loop":
            return f"{ctx['loop']} + {value}" if value else str(ctx["loop"])
        if form == "prefetch":
            return f"idx_ref[{value}]"
        return str(value)

    def buffer(self, ref: str, chunk: int, lines: list[str], role: str = "buffer") -> str:
        """`ref.at[a:b]` for a chunk, sometimes held in a local (`window = x_hbm.at[0:2]`)."""
        rows = f"{2 * chunk}:{2 * chunk + 2}"
        text = f"{ref}.at[{rows}]"
        if self.on("buffer-local", 0.2):
            window = self.fresh("window")
            lines.append(f"{window} = {self.site('buffer', text, buffer_mutants(ref, rows, self.rng))}")
            self.features.add("buffer-local")
            return self.site(role, window, [("read", window + self.rng.choice(["[...]", "[()]"]))])
        return self.site(role, text, buffer_mutants(ref, rows, self.rng))

    def to_helper(self, *tokens: str) -> str:
        """The arguments of a helper call: a read planted there is a value given to a helper."""
        for token in tokens:
            site = self.sites[int(token.split("\x00")[1])]  # the first site a token names
            site.role = "helper-arg"
            site.mutants = [("value-to-helper" if m == "read" else m, t) for m, t in site.mutants]
        return ", ".join(tokens)

    # -- blocks ------------------------------------------------------------------------------
    def block(self, spec: dict[str, object], ctx: dict[str, object]) -> list[str]:
        kind = str(spec["kind"])
        self.features.add(f"block-{kind}")
        return getattr(self, f"block_{kind.replace('-', '_')}")(spec, ctx)

    def op(self, name: str, args: str) -> str:
        if self.plan.alias and "alias" not in self.plan.plain:  # bound in both branches of a version check
            self.constants[f"semaphore_{name}"] = (
                f'pl.semaphore_{name} if hasattr(pl, "semaphore_{name}") else pltpu.semaphore_{name}'
            )
            self.features.add("version-alias")
            return f"semaphore_{name}({args})"
        return f"pl.semaphore_{name}({args})"

    def block_signal(self, spec: dict[str, object], ctx: dict[str, object]) -> list[str]:
        lines: list[str] = []
        kind = str(spec.get("kind_", "REGULAR"))
        a, element = self.alloc(kind)
        n = int(spec.get("n", 1))
        peer = ", device_id=(peer,)" if self.plan.launch == "remote" and kind == "REGULAR" else ""
        s_sig = self.sem(a, element, lines, ctx)
        helper = str(spec.get("helper", ""))
        if helper == "pulse":  # two levels: _pulse -> _signal/_wait
            self.helpers["_signal"] = "def _signal(sem, n):\n    pl.semaphore_signal(sem, n)\n"
            self.helpers["_wait"] = "def _wait(sem, n):\n    pl.semaphore_wait(sem, n)\n"
            self.helpers["_pulse"] = "def _pulse(sem, n):\n    _signal(sem, n)\n    _wait(sem, n)\n"
            return [*lines, f"_pulse({self.to_helper(s_sig)}, {n})"]
        if helper == "slot" and a.rank >= 1 and not a.container:  # the helper indexes its parameter itself
            self.helpers["_wait_at"] = (
                "def _wait_at(sem, n, slot=None):\n"
                "    if slot is None:\n        pl.semaphore_wait(sem, n)\n"
                "    else:\n        pl.semaphore_wait(sem.at[slot], n)\n"
            )
            base = self.base(a, lines)
            head = [str(i) for i in element[:-1]]
            row = self.site(
                "helper-arg",
                render(base, [head]) if head else base,
                sem_mutants(base, [head] if head else [], self.rng),
            )
            self.sites[-1].alloc = a
            self.features.add("helper-slot")
            return [
                *lines,
                self.op("signal", f"{s_sig}, {n}{peer}"),
                f"_wait_at({self.to_helper(row)}, {n}, {element[-1]})",
            ]
        s_wait = self.sem(a, element, lines, ctx) if self.on("respell", 0.5) else s_sig
        if helper == "pass":
            self.helpers["_signal"] = "def _signal(sem, n):\n    pl.semaphore_signal(sem, n)\n"
            self.helpers["_wait"] = "def _wait(sem, n):\n    pl.semaphore_wait(sem, n)\n"
            self.to_helper(s_sig, s_wait)
            return [*lines, f"_signal({s_sig}, {n})", f"_wait({s_wait}, {n})"]
        signal = self.op("signal", f"{s_sig}, {n}{peer}")
        wait = self.op("wait", f"{s_wait}, {n}")
        if self.on("far", 0.3) and not ctx.get("wrapped"):
            self.deferred.append(wait)
            self.features.add("waited-far")
            return [*lines, signal]
        return [*lines, signal, wait]

    def copy_call(
        self, src: str, dst: str, a: Alloc, element: tuple[int, ...], lines: list[str], ctx: dict[str, object]
    ) -> str:
        if self.plan.launch == "remote":
            recv, relement = self.alloc("DMA")
            send, got = self.sem(a, element, lines, ctx), self.sem(recv, relement, lines, ctx)
            return f"pltpu.make_async_remote_copy({src}, {dst}, {send}, {got}, device_id=(peer,))"
        return f"pltpu.make_async_copy({src}, {dst}, {self.sem(a, element, lines, ctx)})"

    def chunk_expect(self, source: int, target: int, remote: bool = False) -> None:
        data = "peer" if remote else "x"
        self.expected.append(f"o[{2 * target}:{2 * target + 2}] = {data}[{2 * source}:{2 * source + 2}]")

    def block_copy(self, spec: dict[str, object], ctx: dict[str, object]) -> list[str]:
        lines: list[str] = []
        source, target = int(spec["source"]), int(spec["target"])  # type: ignore[call-overload]
        a, element = self.alloc("DMA")
        src, dst = self.buffer("x_hbm", source, lines), self.buffer("o_hbm", target, lines)
        self.chunk_expect(source, target, self.plan.launch == "remote")
        form = str(spec.get("form", "plain"))
        if self.plan.launch == "remote" and form in ("helper", "nested", "async", "far"):
            form = "plain"
        self.features.add(f"copy-{form}")
        if form == "async":
            call = f"pltpu.async_copy({src}, {dst}, {self.sem(a, element, lines, ctx)}).wait()"
            return [*lines, call]
        if form == "helper":  # a helper returns the descriptor
            self.helpers["_copy"] = "def _copy(src, dst, sem):\n    return pltpu.make_async_copy(src, dst, sem)\n"
            c = self.fresh("copy")
            args = self.to_helper(src, dst, self.sem(a, element, lines, ctx))
            return [*lines, f"{c} = _copy({args})", f"{c}.start()", f"{c}.wait()"]
        if form == "nested":  # the parameter reaches the DMA only inside a nested def
            self.helpers["_dma"] = (
                "def _dma(src, dst, sem):\n    def go():\n"
                "        c = pltpu.make_async_copy(src, dst, sem)\n        c.start()\n        c.wait()\n\n    go()\n"
            )
            call = f"_dma({self.to_helper(src, dst, self.sem(a, element, lines, ctx))})"
            return [*lines, call]
        if form == "far" and not ctx.get("wrapped"):  # started here, waited at the kernel's end
            start = f"pltpu.make_async_copy({src}, {dst}, {self.sem(a, element, lines, ctx)}).start()"
            again: list[str] = []
            wait_src = self.buffer("x_hbm", source, again)
            wait_dst = self.buffer("o_hbm", target, again)
            wait = f"pltpu.make_async_copy({wait_src}, {wait_dst}, {self.sem(a, element, again, {})}).wait()"
            self.deferred += [*again, wait]
            return [*lines, start]
        c = self.fresh("copy")
        if form == "branches":  # built in either branch of a Python `if`
            self.constants["SPLIT"] = "True"
            one = self.copy_call(src, dst, a, element, lines, ctx)
            other: list[str] = []
            two = self.copy_call(
                self.buffer("x_hbm", source, other), self.buffer("o_hbm", target, other), a, element, other, ctx
            )
            body = ["if SPLIT:", *indent(lines), f"    {c} = {one}", "else:", *indent(other), f"    {c} = {two}"]
            return [*body, f"{c}.start()", f"{c}.wait()"]
        call = self.copy_call(src, dst, a, element, lines, ctx)
        return [*lines, f"{c} = {call}", f"{c}.start()", f"{c}.wait()"]

    def block_pairs(self, spec: dict[str, object], ctx: dict[str, object]) -> list[str]:
        """Two copies in one Python loop: over (src, dst, sem) triples, or a list of descriptors."""
        lines: list[str] = []
        triples = []
        for source, target in spec["chunks"]:  # type: ignore[attr-defined]
            a, element = self.alloc("DMA")
            src, dst = self.buffer("x_hbm", source, lines), self.buffer("o_hbm", target, lines)
            triples.append((src, dst, self.sem(a, element, lines, ctx)))
            self.chunk_expect(source, target)
        if spec.get("form") == "list":
            self.features.add("copy-list")
            made = ", ".join(f"pltpu.make_async_copy({s}, {d}, {m})" for s, d, m in triples)
            copies = self.fresh("copies")
            return [
                *lines,
                f"{copies} = [{made}]",
                f"for c in {copies}:",
                "    c.start()",
                f"for c in {copies}:",
                "    c.wait()",
            ]
        self.features.add("loop-pairs")
        rows = ", ".join(f"({s}, {d}, {m})" for s, d, m in triples)
        sem = self.site("sem", "sem", sem_mutants("sem", [], self.rng))
        src = self.site("buffer", "src", [("read", "src[...]")])
        c = self.fresh("copy")
        return [
            *lines,
            f"for src, dst, sem in ({rows}):",
            f"    {c} = pltpu.make_async_copy({src}, dst, {sem})",
            f"    {c}.start()",
            f"    {c}.wait()",
        ]

    def block_mixed(self, spec: dict[str, object], ctx: dict[str, object]) -> list[str]:
        """A helper that stores its `src` as a value on one path and copies it by DMA on another."""
        self.vmem = True
        self.helpers["_emit"] = (
            "def _emit(src, dst, sem=None):\n"
            "    if sem is None:\n        dst[...] = src\n"
            "    else:\n        c = pltpu.make_async_copy(src, dst, sem)\n        c.start()\n        c.wait()\n"
        )
        lines: list[str] = []
        source, target = int(spec["source"]), int(spec["target"])  # type: ignore[call-overload]
        a, element = self.alloc("DMA")
        stage = self.buffer("stage", target, lines)
        self.expected.append(f"o[{2 * target}:{2 * target + 2}] = x[{2 * source}:{2 * source + 2}] * 2.0")
        self.features.add("helper-mixed")
        rows = f"{2 * target}:{2 * target + 2}"
        args = self.to_helper(stage, self.buffer("o_hbm", target, lines), self.sem(a, element, lines, ctx))
        fill = f"pltpu.sync_copy(x_hbm.at[{2 * source}:{2 * source + 2}], stage.at[{rows}])"
        if self.rng.random() < 0.5:  # the value a plain read, stored back where it was read
            return [
                *lines,
                fill,
                f"stage[{rows}] = stage[{rows}] * 2.0",
                f"_emit(stage[{rows}], stage.at[{rows}])",
                f"_emit({args})",
            ]
        return [*lines, fill, f"_emit(stage[{rows}] * 2.0, stage.at[{rows}])", f"_emit({args})"]

    # -- wrapping a block --------------------------------------------------------------------
    def wrap(self, spec: dict[str, object]) -> list[str]:
        how = str(spec.get("wrap", "none"))
        if how in self.plan.plain:
            how = "none"
        if how == "none":
            return self.block(spec, {})
        self.features.add(f"wrap-{how}")
        name = self.fresh("step")
        if how == "fori":
            body = self.block(spec, {"loop": "i", "wrapped": True})
            return [
                f"def {name}(i, carry):",
                *indent(body),
                "    return carry",
                "",
                f"jax.lax.fori_loop(0, 1, {name}, 0)",
            ]
        body = self.block(spec, {"wrapped": True})
        if how == "when":
            return [f"@pl.when({self.true()})", f"def {name}():", *indent(body)]
        if how == "cond":
            return [f"def {name}():", *indent(body), "", f"jax.lax.cond({self.true()}, {name}, lambda: None)"]
        return [f"def {name}():", *indent(body), "", f"{name}()"]  # a closure over the kernel's Refs

    def true(self) -> str:
        return {"pl.kernel": 'jax.lax.axis_index("core") == 0', "remote": 'jax.lax.axis_index("x") >= 0'}.get(
            self.plan.launch, "pl.program_id(0) == 0"
        )


def indent(lines: list[str], width: int = 4) -> list[str]:
    return [" " * width + line if line else line for line in lines]


# ------------------------------------------------------------------------------------------
HEADER = '''"""Generated by tests/oracle (seed {seed})."""
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
'''


PALLAS = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
TRY_PALLAS = (
    "try:\n    from jax.experimental import pallas as pl\n    from jax.experimental.pallas import tpu as pltpu\n"
    "except ImportError:  # a machine without Pallas: the module imports, its kernels do not run\n"
    "    pl = pltpu = None\n"
)


def plan_for(seed: int) -> Plan:
    """The random choices of case `seed`: the launch, the shape spelling, the blocks."""
    rng = random.Random(seed)
    launch = rng.choice(LAUNCHES)
    plan = Plan(seed, launch, rng.choice(SPELLINGS), rng.choice(["", "", "positional", "keyword", "decorator"]))
    if plan.spelling == "param" and launch != "remote":
        plan.launch = launch = "build"
    targets = rng.sample(range(CHUNKS), CHUNKS)
    kinds = ["copy", "copy", "signal", "signal", "pairs", "mixed"] + (["barrier"] if launch == "remote" else [])
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(kinds)
        if kind == "mixed" and launch == "remote":
            kind = "copy"
        spec: dict[str, object] = {"kind": kind, "wrap": rng.choice(WRAPS + ("none",) * 3)}
        if kind in ("copy", "mixed"):
            if not targets:
                continue
            spec |= {"source": rng.randrange(CHUNKS), "target": targets.pop()}
            spec["form"] = rng.choice(["plain", "plain", "async", "helper", "nested", "far", "branches"])
        elif kind == "pairs":
            if len(targets) < 2:
                continue
            spec |= {"chunks": [(rng.randrange(CHUNKS), targets.pop()) for _ in range(2)]}
            spec["form"] = rng.choice(["loop", "list"])
        elif kind == "barrier":
            spec = {"kind": "signal", "barrier": True, "wrap": "none"}
        else:
            spec |= {"n": rng.randint(1, 3), "helper": rng.choice(["", "", "pass", "pulse", "slot"])}
            if plan.scoped and rng.random() < 0.25:  # a barrier semaphore run_scoped allocates
                spec["kind_"] = "BARRIER"
        plan.blocks.append(spec)
    plan.wrapper = rng.choice(WRAPPERS)  # drawn last: the older choices of a seed stay as they were
    plan.imports = rng.choice(["plain", "plain", "try"])
    plan.alias = rng.random() < 0.25
    plan.layout, plan.via = rng.choice(LAYOUTS), rng.choice(["from", "module"])  # drawn last, as the wrapper
    return plan


@dataclass
class Case:
    """A rendered case: the template, its sites, what it exercises."""

    plan: Plan
    template: str
    sites: list[Site]
    features: set[str]

    @property
    def seed(self) -> int:
        return self.plan.seed

    def correct(self) -> str:
        return self.render({})

    def mutant(self, site: int, text: str) -> str:
        return self.render({site: text})

    def copies(self, site: int, text: str) -> list[tuple[int, int]]:
        """Where the mutant `mutant(site, text)` holds the planted text: a (start, end) for each
        place the site is rendered at (a signal and its wait may share one)."""
        marked = self.render({site: f"\x01{text}\x02"})
        spans, removed = [], 0
        for match in re.finditer("\x01[^\x01\x02]*\x02", marked):
            start = match.start() - removed
            spans.append((start, start + len(match.group()) - 2))
            removed += 2
        return spans

    def render(self, changes: dict[int, str]) -> str:
        return re.sub("\x00(\\d+)\x00", lambda m: self._text(int(m.group(1)), changes), self.template)

    def _text(self, n: int, changes: dict[int, str]) -> str:
        text = changes.get(n, self.sites[n].text)
        return re.sub("\x00(\\d+)\x00", lambda m: self._text(int(m.group(1)), changes), text)


def generate(seed: int) -> Case:
    """Case `seed`, generated from the grammar: the same seed gives the same case."""
    return build(plan_for(seed))


def build(plan: Plan) -> Case:
    """Render a plan (a generated one, or one the shrinker cut down)."""
    w = Writer(plan)
    w.used = {}
    remote = plan.launch == "remote"
    if plan.blocks and any(b.get("barrier") for b in plan.blocks):
        w.barrier = True
    holder = not plan.scoped and w.on("namedtuple", 0.25)
    if holder:
        w.holder = "held"
    body: list[str] = []
    for spec in plan.blocks:
        if spec.get("barrier"):
            w.features.add("barrier")
            sig, wait = (w.site("sem", "bar", sem_mutants("bar", [], w.rng)) for _ in "ab")
            body += [
                "bar = pltpu.get_barrier_semaphore()",
                f"pl.semaphore_signal({sig}, 1, device_id=(peer,))",
                f"pl.semaphore_wait({wait}, 1)",
            ]
            continue
        body += w.wrap(spec)
    body += w.deferred
    scratch = [a for a in w.allocs if not a.scoped]
    scoped = [a for a in w.allocs if a.scoped]
    if w.vmem:
        scratch.insert(0, Alloc("stage", "VMEM", 2, False))
    params = ["x_hbm", "o_hbm"] + [a.name for a in scratch]
    if plan.launch == "prefetch":
        params.insert(0, "idx_ref")
    shapes = [("pltpu.VMEM((16, 128), jnp.float32)" if a.kind == "VMEM" else w.shape(a)) for a in scratch]
    if plan.wrapper == "method":
        params.insert(0, "self")
    name, scale = ("_kernel", ", *, scale") if plan.wrapper == "partial" else ("kernel", "")
    kernel = [f"def {name}({', '.join(params)}{scale}):", "    pltpu.sync_copy(x_hbm, o_hbm)"]
    if remote:
        kernel.append('    peer = 1 - jax.lax.axis_index("x")')
    if holder and scratch:
        fields = [a.name for a in scratch if a.kind != "VMEM"]
        if fields:
            w.helpers["Held"] = "class Held(NamedTuple):\n" + "".join(f"    {f}: Any\n" for f in fields)
            kernel.append(f"    held = Held({', '.join(fields)})")
            w.features.add("namedtuple")
    if scoped:
        names = [a.name for a in scoped]
        types = [w.shape(a) for a in scoped]
        inner = [f"def body({', '.join(names)}):", *indent(body or ["pass"])]
        keywords = ", ".join(f"{n}={t}" for n, t in zip(names, types))
        if plan.scoped == "decorator":  # the body is called at once: its types as keywords
            inner = [f"@functools.partial(pl.run_scoped, {keywords})", *inner]
        elif plan.scoped == "keyword":
            inner += ["", f"pl.run_scoped(body, {keywords})"]
        else:
            inner += ["", f"pl.run_scoped(body, {', '.join(types)})"]
        body = inner
    kernel += indent(body)
    pallas = PALLAS
    if plan.imports == "try" and "imports" not in plan.plain:
        pallas = TRY_PALLAS
        w.features.add("import-try")
    layout = plan.layout if "package" not in plan.plain else "module"
    header = HEADER.format(seed=plan.seed).replace(PALLAS, COMPAT if "compat" in layout else pallas)
    module = [header]
    module += [f"{name} = {value}" for name, value in sorted(w.constants.items())]
    module += ["", ""] + [text + "\n" for _, text in sorted(w.helpers.items())]
    kernel, launch = wrapped(plan, kernel, launch_text(plan, w, shapes))
    w.features.add(f"launched-{plan.wrapper}")
    module += ["\n".join(kernel), "", ""]
    tail = [launch, "", "", expected_text(plan, w)]
    if layout == "module":
        return Case(plan, tidy(module + tail), w.sites, w.features)
    texts = {"ops": tidy(module)}
    if "sibling" in layout:  # the launch and expected() in `api.py`, naming the kernel module's names
        tail[0] = qualified(plan, w, launch)
        texts["api"] = tidy([header, sibling_import(plan, w, launch), "", "", *tail])
        if re.search(r"pl\.(pallas_call|kernel)\(", tail[0]):  # not a method launched in its class
            w.features.add("sibling-launch")
    else:
        texts["ops"] = tidy(module + tail)
    if "compat" in layout:
        texts["_compat"] = (
            f'"""Pallas, re-exported for the kernels of the package."""\n{pallas}\n__all__ = ["pl", "pltpu"]\n'
        )
        w.features.add("compat-module")
    return Case(plan, "".join(MODULE.format(name) + text for name, text in texts.items()), w.sites, w.features)


def tidy(lines: list[str]) -> str:
    return "\n".join(lines).replace("\n\n\n\n", "\n\n\n") + "\n"


COMPAT = "from ._compat import pl, pltpu\n"
#: The kernel module's name a launch of each wrapper calls (else `kernel`).
NAMED = {"factory": "make_kernel", "staticmethod": "Kernels", "method": "Op", "partial": "_kernel"}


def sibling_import(plan: Plan, w: Writer, launch: str) -> str:
    """The launch module's import of what it names from the kernel module (`ops`); with
    `plan.via == "module"` it names them `ops.NAME` instead (the launch's text is edited)."""
    names = [c for c in [NAMED.get(plan.wrapper, "kernel"), *w.constants] if re.search(rf"\b{c}\b", launch)]
    return f"from .ops import {', '.join(sorted(names))}" if plan.via == "from" else "from . import ops"


def qualified(plan: Plan, w: Writer, launch: str) -> str:
    """The launch's text naming the kernel module's names as `ops.NAME` (`plan.via == "module"`)."""
    if plan.via != "module":
        return launch
    for name in [NAMED.get(plan.wrapper, "kernel"), *w.constants]:
        launch = re.sub(rf"(?<![\w.]){name}\b(?! =)", f"ops.{name}", launch)
    return launch


def modules(text: str) -> dict[str, str]:
    """A package case's modules by name (`ops`, `api`, `_compat`); {} for a one-module case."""
    parts = re.split(r"^# --- kern/(\w+)\.py ---\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def launch_text(plan: Plan, w: Writer, shapes: list[str]) -> str:
    """`run()`: the kernel launched as the plan says (and `build()`, the launcher of two launches)."""
    rows = 32 if plan.launch == "remote" else 16
    head = f"def run():\n    x = jnp.arange({rows} * 128, dtype=jnp.float32).reshape({rows}, 128)\n"
    anywhere = "pl.BlockSpec(memory_space=pl.ANY)"
    common = f"out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32), in_specs=[{anywhere}], out_specs={anywhere}"
    tail = ", interpret=pltpu.InterpretParams()"
    scratch = "[" + ", ".join(shapes) + "]"
    if plan.launch == "pl.kernel":  # a TensorCoreMesh from 0.11 on, named so that no rule reads it
        new = 'getattr(pltpu, "TensorCoreMesh")(axis_name="core", num_cores=1)'
        old = 'getattr(pltpu, "create_tensorcore_mesh")("core", num_cores=1)'
        out = "jax.ShapeDtypeStruct((16, 128), jnp.float32)"
        return (
            f'{head}    mesh = {new} if hasattr(pltpu, "TensorCoreMesh") else {old}\n'
            f"    return pl.kernel(kernel, out_type={out}, mesh=mesh, scratch_types={scratch}{tail})(x)\n"
        )
    if plan.launch == "prefetch":
        grid = (
            f"num_scalar_prefetch=1, grid=(1,), in_specs=[{anywhere}], out_specs={anywhere}, scratch_shapes={scratch}"
        )
        return (
            f"{head}    grid_spec = pltpu.PrefetchScalarGridSpec({grid})\n"
            "    out_shape = jax.ShapeDtypeStruct((16, 128), jnp.float32)\n"
            f"    call = pl.pallas_call(kernel, out_shape=out_shape, grid_spec=grid_spec{tail})\n"
            "    return call(jnp.array([0, 1], jnp.int32), x)\n"
        )
    if plan.launch == "remote":
        params = ", compiler_params=pltpu.CompilerParams(collective_id=0)" if w.barrier else ""
        specs = 'mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P("x"), check_vma=False'
        return (
            f'{head}    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))\n'
            f"    call = pl.pallas_call(kernel, {common}, scratch_shapes={scratch}{params}{tail})\n"
            f"    return jax.jit(jax.shard_map(call, {specs}))(x)\n"
        )
    if plan.launch == "build":  # launched twice, the shapes given as parameters of the builder
        shaped = [a for a in w.allocs if not a.scoped and not a.container and a.rank]
        params = [f"{a.name}_shape" for a in shaped] if plan.spelling == "param" else []
        sizes = [
            ", ".join("(" + ", ".join([n] * a.rank) + ("," if a.rank == 1 else "") + ")" for a in shaped) for n in "23"
        ]
        w.features.add("two-launches")
        return (
            f"def build({', '.join(params)}):\n"
            f"    return pl.pallas_call(kernel, {common}, grid=(1,), scratch_shapes={scratch}{tail})\n\n\n"
            f"{head}    first, second = build({sizes[0] if params else ''}), build({sizes[1] if params else ''})\n"
            "    return jnp.concatenate([first(x), second(x)])\n"
        )
    return f"{head}    return pl.pallas_call(kernel, {common}, grid=(1,), scratch_shapes={scratch}{tail})(x)\n"


def wrapped(plan: Plan, kernel: list[str], launch: str) -> tuple[list[str], str]:
    """The kernel's lines and the launch's text, with the kernel reached as `plan.wrapper` says."""
    callee = {"factory": "make_kernel(1)", "staticmethod": "Kernels.kernel", "method": "Op().kernel"}
    callee["lambda"] = "lambda *refs: kernel(*refs)"
    if plan.wrapper == "factory":
        kernel = ["def make_kernel(scale):", *indent(kernel), "", "    return kernel"]
    elif plan.wrapper == "staticmethod":
        kernel = ["class Kernels:", "    @staticmethod", *indent(kernel)]
    elif plan.wrapper == "method":
        kernel = ["class Op:", *indent(kernel)]
        if launch.startswith("def run():"):  # launched by a method of the class: `self.kernel`
            method = launch.replace("def run():", "def launch(self):", 1).replace("(kernel,", "(self.kernel,")
            kernel += ["", *indent(method.rstrip("\n").split("\n"))]
            return kernel, "def run():\n    return Op().launch()\n"
    elif plan.wrapper == "partial":  # held in a local of the launching function
        launch = re.sub(
            r"^( +)(.*)\b(pl\.pallas_call|pl\.kernel)\(kernel,",
            r"\1kernel = functools.partial(_kernel, scale=1)\n\1\2\3(kernel,",
            launch,
            flags=re.MULTILINE,
        )
    if plan.wrapper in callee:
        launch = launch.replace("pl.pallas_call(kernel,", f"pl.pallas_call({callee[plan.wrapper]},")
        launch = launch.replace("pl.kernel(kernel,", f"pl.kernel({callee[plan.wrapper]},")
    return kernel, launch


def expected_text(plan: Plan, w: Writer) -> str:
    devices = 2 if plan.launch == "remote" else 1
    rows = 16 * devices
    lines = [
        "def expected():",
        f"    xs = np.split(np.arange({rows} * 128, dtype=np.float32).reshape({rows}, 128), {devices})",
        "    outs = []",
        f"    for me in range({devices}):",
        f"        x, peer = xs[me], xs[(me + 1) % {devices}]",
        "        o = x.copy()",
        *("        " + line for line in w.expected),
        "        outs.append(o)",
    ]
    twice = " * 2" if plan.launch == "build" else ""
    lines.append(f"    return np.concatenate(outs{twice})")
    return "\n".join(lines) + "\n"


def simpler(plan: Plan) -> list[Plan]:
    """Plans one step plainer than `plan`: a block dropped, a wrap or helper or form removed,
    a feature turned off (the shrinker keeps each that fails the same way)."""
    found = [replace(plan, blocks=plan.blocks[:i] + plan.blocks[i + 1 :]) for i in range(len(plan.blocks))]
    for i, spec in enumerate(plan.blocks):
        for key, plain in (("wrap", "none"), ("helper", ""), ("form", "plain")):
            if spec.get(key, plain) != plain and not (key == "form" and spec["kind"] == "pairs"):
                found.append(replace(plan, blocks=[*plan.blocks[:i], {**spec, key: plain}, *plan.blocks[i + 1 :]]))
    for feature in (
        "layout",
        "index",
        "local-view",
        "chain",
        "tuple-index",
        "namedtuple",
        "alias",
        "respell",
        "buffer-local",
        "container",
        "unpack",
        "far",
        "comprehension",
        "package",
    ):
        if feature not in plan.plain:
            found.append(replace(plan, plain=plan.plain | {feature}))
    if plan.scoped:
        found.append(replace(plan, scoped=""))
    if plan.spelling != "literal":
        found.append(replace(plan, spelling="literal"))
    if plan.launch != "pallas_call":
        found.append(replace(plan, launch="pallas_call"))
    if plan.wrapper != "plain":
        found.append(replace(plan, wrapper="plain"))
    if plan.imports != "plain" or plan.alias:
        found.append(replace(plan, imports="plain", alias=False))
    return found
