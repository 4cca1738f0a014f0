"""SEM103 device-id-type-mesh

## What it does
Drops `device_id_type=<...>.DeviceIdType.MESH` from `semaphore_signal`, `make_async_remote_copy`
and `async_remote_copy` (however `DeviceIdType` is spelled: `pl.`, `pltpu.`, imported by name,
a private `jax._src.pallas` path, an alias, `getattr(pltpu, "DeviceIdType")`), with its comma,
and the import it leaves unused;
so too MESH given by position to the two copies, their last positional parameter in every
release (`catalog.DEVICE_ID_TYPE_POSITION`: dropping it moves no other argument).
Reports, without a fix, a `device_id_type=` of any other value (`LOGICAL`, a variable) and
every other use of `DeviceIdType`, and an import of it that only other modules of the run read
(`from .sync import DeviceIdType`, or a package's `__init__` exports). Off by default: select
it (`--select SEM103`, or `SEM1`).

## Why is this bad?
JAX 0.12.0 deprecated the keyword and the enum: each of these functions warns "device_id_type
is deprecated and will be removed in a future release." when it is given (a `DeprecationWarning`
that `-W error` turns into a failure), and `pl.DeviceIdType` warns that it "will be removed
along with the device_id_type= parameter". MESH is what every supported JAX does without it:
the three functions' signatures say `device_id_type: DeviceIdType = DeviceIdType.MESH` in every
release from 0.4.35 to 0.11.0, and `device_id_type: DeviceIdType | None = None`, made MESH
without a warning, in 0.12.0 and 0.12.1 (`catalog.DEVICE_ID_TYPE_FUNCTIONS`).

## Example
```python
pl.semaphore_signal(sem, 1, device_id=peer, device_id_type=pl.DeviceIdType.MESH)
```
Use instead:
```python
pl.semaphore_signal(sem, 1, device_id=peer)
```

## Fix safety
Safe: the call passes what the default gives, on every supported JAX (so no JAX floor is
needed). The keyword goes with one comma and the blanks between, the rest of the call byte for
byte: `f(a, device_id_type=M, b=1)` and a keyword on its own line before another lose the
keyword up to the next argument; a last one loses the text from the previous argument's end
(or from after its comma, when the keyword has a trailing comma). A comment after the keyword on
its line is not the keyword's: it stays (`device_id_type=M,  # wake the peer` on a line of its
own leaves `# wake the peer` there). Where anything else stands in that text (a comment before
it, a line continuation, a parenthesis around an argument), the edit is not sure: reported
without a fix. An import left unused goes as SEM101's do (with the same care for
a package's `__init__.py`, strings, doctests and notebook magics); with SEM101 on, a
`pltpu.DeviceIdType.MESH` in a dropped keyword is dropped, not renamed.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from semfix.analysis.context import Context
from semfix.analysis.nodes import Rewrite, unchain
from semfix.analysis.run_imports import STAR
from semfix.analysis.scopes import Scope
from semfix.catalog import DEVICE_ID_TYPE_DEPRECATED, DEVICE_ID_TYPE_FUNCTIONS, DEVICE_ID_TYPE_POSITION, Operation
from semfix.jax_versions import spelled
from semfix.patterns import compiled
from semfix.rules.base import Invalid, Rule

CODE = "SEM103"
_DEPRECATED = f"deprecated in JAX {spelled(DEVICE_ID_TYPE_DEPRECATED)}"
#: Where JAX defines or exports `DeviceIdType` (0.4.35 to 0.12.1).
OWNERS = frozenset(
    {
        "jax.experimental.pallas",
        "jax.experimental.pallas.tpu",
        "jax.pallas",
        "jax.pallas.tpu",
        "jax._src.pallas.primitives",
        "jax._src.pallas.mosaic.primitives",
    }
)
MESH = frozenset(f"{owner}.DeviceIdType.MESH" for owner in OWNERS)

RULE = Rule(
    code=CODE,
    name="device-id-type-mesh",
    summary="`device_id_type=` and `DeviceIdType` were deprecated in JAX 0.12; MESH is the default in every JAX.",
    fix="safe",
    fix_note="`device_id_type=...DeviceIdType.MESH` dropped with its comma, and the import it leaves unused; "
    "other values and other uses of `DeviceIdType` reported",
    docs=__doc__ or "",
    needs_tree=True,
    tracks="DeviceIdType",  # every read of it is reported (`finish`)
    valid=(
        """\
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 1, device_id=0)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 1, device_id=0, device_id_type=pl.DeviceIdType.MESH)
""",
            """\
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 1, device_id=0)
""",
            select=("SEM103",),
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 1, device_id=0, device_id_type=pl.DeviceIdType.LOGICAL)
""",
            None,  # LOGICAL is not the default: the author must rewrite the device id
            select=("SEM103",),
        ),
    ),
)


class Dropped(Rewrite):
    """An argument removed from its call: the tree the proof expects has it no more."""

    __slots__ = ("keyword",)

    def __init__(
        self, call: ast.Call, argument: ast.expr, edits: list[tuple[int, int, str]], keyword: ast.keyword | ast.expr
    ) -> None:
        super().__init__(call, argument, argument, edits)
        self.keyword = keyword  # an expression: the argument given by position

    def declare(self) -> None:
        assert isinstance(self.call, ast.Call) and self.keyword is not None  # `check` sets both
        if isinstance(self.keyword, ast.keyword):
            self.call.keywords.remove(self.keyword)
        else:
            self.call.args.remove(self.keyword)


class Drop(NamedTuple):
    """A keyword to drop: its text edit, its change, its finding and the name it stops reading."""

    edit: tuple[int, int, str]
    change: Dropped
    finding: int
    root: ast.Name


class Drops(NamedTuple):
    """The file's drops, and the names of the keywords seen (not reported again in `finish`)."""

    made: list[Drop]
    seen: set[int]


def check(ctx: Context, drops: Drops, call: ast.Call, operation: Operation) -> list[tuple[int, int]]:
    """A catalog call's `device_id_type=`: dropped when it gives MESH, else reported. Returns
    the spans (offsets) dropped, which SEM101 leaves alone."""
    if CODE not in ctx.settings.enabled or operation.name not in DEVICE_ID_TYPE_FUNCTIONS:
        return []
    if operation.sem_params and operation.sem_params[0].name == "semaphore":
        return []  # Mosaic GPU's own semaphore_signal
    spans = []
    scope = ctx.scopes.scope_of[id(call)]
    given: list[ast.keyword | ast.expr] = [k for k in call.keywords if k.arg == "device_id_type"]
    position = DEVICE_ID_TYPE_POSITION.get(operation.name, -2) + operation.partial  # after partial's function
    if len(call.args) == position + 1 and not any(isinstance(a, ast.Starred) for a in call.args):
        given.append(call.args[position])  # by position: the last argument the function takes
    for argument in given:
        value = argument.value if isinstance(argument, ast.keyword) else argument
        drops.seen.update(id(n) for n in ast.walk(value))
        names, root = _resolved(ctx, value, scope)
        message = f"`device_id_type{'=' if isinstance(argument, ast.keyword) else ''}` was {_DEPRECATED}"
        if not names or not names <= MESH:
            ctx.report(CODE, argument, message + "; only MESH, the default, can be dropped (not fixed)", None)
            continue
        span = _span(ctx, call, argument)
        if span is None:
            ctx.report(
                CODE, argument, message + "; MESH is the default (not fixed: a comment or an unusual layout)", None
            )
        elif ctx.report(CODE, argument, message + "; MESH is the default", "", span=_located(ctx, span)):
            assert isinstance(root, ast.Name)  # `qualified` resolved it through an import
            edit = (*span, "")
            dropped = Dropped(call, value, [edit], argument)
            drops.made.append(Drop(edit, dropped, len(ctx.findings) - 1, root))
            spans.append(span)
    return spans


def _resolved(ctx: Context, value: ast.expr, scope: Scope) -> tuple[set[str] | None, ast.expr]:
    """What `value` names, and the name it reads first: through the imports, or through
    `getattr(pltpu, "DeviceIdType")` (the builtin, a constant name), a reference SEM101 renames:
    a MESH read so is dropped alike, else a second run would drop the renamed one."""
    root, steps, _ = unchain(value)
    if isinstance(root, ast.Call) and None not in steps and (names := ctx.qualified(root, scope)):
        return {name + "".join(f".{step}" for step in steps) for name in names}, unchain(root.args[0])[0]
    return ctx.qualified(value, scope), root


def finish(ctx: Context, drops: Drops) -> None:
    """Every other read of `DeviceIdType` (an alias, a comparison, a LOGICAL), and an import of it
    that only other modules of the run read: reported."""
    if CODE not in ctx.settings.enabled or ctx.tree is None or RULE.tracks not in ctx.text.text:
        return  # the tree is there for SEM101, perhaps: no need to track every access
    every = ctx.tracking().accesses
    named = _may_name_it(ctx.scopes.imports)
    for accesses in every.values():
        for access in accesses:
            if id(access.name) in drops.seen:
                continue
            if named is not None and access.name.id not in named and RULE.tracks not in access.steps:
                continue  # it names `DeviceIdType` only through an import or an attribute that spells it
            qualified = ctx.qualified(access.name, access.scope) or set()
            steps = [step for step in access.steps if step is not None]
            chain = {f"{q}.{'.'.join(steps)}" if steps else q for q in qualified}
            if any(_names_device_id_type(q) for q in chain):
                ctx.report(CODE, access.top, f"`DeviceIdType` was {_DEPRECATED}", None)
    kept = ctx.settings.imported_by_run
    for statement in ctx.scopes.imports:  # read by no code here, but by the modules that import it
        if isinstance(statement, ast.ImportFrom) and statement.module in OWNERS and not statement.level:
            for alias in statement.names:
                bound = alias.asname or alias.name
                # a package's `__init__` re-exporting it warns on import too (`-W error` fails it)
                exported = ctx.settings.package_init or kept & {bound, STAR}
                if alias.name == "DeviceIdType" and not every.get(bound) and exported:
                    why = "kept for the modules that import it from here; drop it once they read it no more"
                    ctx.report(CODE, statement, f"`DeviceIdType` was {_DEPRECATED} (not fixed: {why})", None)


def _may_name_it(imports: list[ast.Import | ast.ImportFrom]) -> set[str] | None:
    """The names an import may bind to `DeviceIdType` or to a name under it: the only roots
    (`Context.qualified` follows imports alone) through which an access whose attributes do not
    spell it names it. Asking every access of a file was a fifth of SEM103's check. None where
    a star import from a module spelled with it may bind any name."""
    names = {RULE.tracks}
    for statement in imports:
        module = getattr(statement, "module", None) or ""
        for alias in statement.names:
            if RULE.tracks in module or RULE.tracks in alias.name:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _names_device_id_type(qualified: str) -> bool:
    return any(qualified == f"{o}.DeviceIdType" or qualified.startswith(f"{o}.DeviceIdType.") for o in OWNERS)


def _located(ctx: Context, span: tuple[int, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The span of offsets as a finding's: (line, 0-based column, offset) at each end, so that
    its replacement (nothing) over it is the whole edit (an editor's quick fix applies it)."""
    ends = []
    for offset in span:
        line = ctx.text.line_of(offset)
        ends.append((line, offset - ctx.text.starts[line - 1], offset))
    return ends[0], ends[1]


_BETWEEN = compiled(r"[ \t\f\r\n]*,[ \t\f\r\n]*")
_BLANKS = compiled(r"[ \t\f\r\n]*")
# After a keyword, the rest of its line: its comma, perhaps, then a comment (`# wake the peer`)
_COMMENTED = compiled(r"[ \t\f]*(,?)[ \t\f]*#[^\r\n]*")


def _span(ctx: Context, call: ast.Call, keyword: ast.keyword | ast.expr) -> tuple[int, int] | None:
    """The text to remove with `keyword` (offsets), or None where that text holds anything but
    blanks, line breaks and the one comma (a comment, a backslash, a parenthesis). A comment
    after the keyword on its line stays: the text removed ends before it."""
    items: list[ast.expr | ast.keyword] = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    index = items.index(keyword)
    if index == 0:
        return None  # never: the semaphore comes first
    text = ctx.text.text
    start, end = ctx.text.start(keyword)[2], ctx.text.end(keyword)[2]
    previous = ctx.text.end(items[index - 1])[2]
    last = index + 1 == len(items)
    commented = _COMMENTED.match(text, end)
    if commented and (commented.group(1) or last):  # `device_id_type=M,  # why`: the keyword (and its comma) go
        line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
        if not text[line_start:start].strip(" \t\f"):  # its indent and the comment stay
            return start, commented.start() + commented.group().index("#")
        if not _BETWEEN.fullmatch(text, previous, start):
            return None
        return (text.index(",", previous) + 1, commented.end(1)) if commented.group(1) else (previous, end)
    if commented:
        return None  # its comma on a later line
    if not last:  # up to the next argument
        following = ctx.text.start(items[index + 1])[2]
        return (start, following) if _BETWEEN.fullmatch(text, end, following) else None
    close = ctx.text.end(call)[2] - 1  # the `)`
    after = re.compile(r"[ \t\f\r\n]*(,?)[ \t\f\r\n]*").fullmatch(text, end, close)
    comma = _BETWEEN.fullmatch(text, previous, start)
    if after is None or comma is None:
        return None
    if after.group(1):  # a trailing comma: keep the previous argument's
        return text.index(",", previous) + 1, text.index(",", end) + 1
    return previous, end
