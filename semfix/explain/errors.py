"""Every error JAX raises for this family of mistakes, in one table.

Each row holds JAX's text (as the fixtures and stored tracebacks raise it), the releases that
raise it (read from every release's source, 0.4.35 to 0.12.1), the pattern `semfix explain`
recognises it by and the first words it says, the catalog functions that raise it, the rules
that find the mistake before anything runs, and what explain does with it. JAX 0.12 split the
DMA check's one text in three, each about fewer arguments (`suspects`): explain blames only
those, so one culprit is proven more often. Before 0.7.2 JAX checked no DMA argument at trace
time (a value went through to lowering), and before 0.9.1 none at a DMA's wait.

`semfix explain` (semfix/explain/search.py) reads its recogniser from here, and
`semfix rules --errors` and the README print `markdown()`; tests/test_jax_errors.py holds the
table to explain, to the catalog and to the README, so none of them drifts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from semfix.jax_versions import OLDEST, Version, spelled

_SIGNALS = ("semaphore_signal", "semaphore_wait", "core_barrier", "semaphore_signal_multicast", "SemaphoreSignal")
_DMAS = ("make_async_copy", "async_copy", "make_async_remote_copy", "async_remote_copy")
_BUFFERED = (*_DMAS, "sync_copy")  # sync_copy's buffers are checked as a DMA's
#: The operations the DMA texts are about (explain follows a helper that passes on to one).
DMAS = frozenset(_BUFFERED)
_READS = ("SEM001", "SEM002", "SEM003", "SEM004")  # SEM004: a read of a whole array or a row is a value too


@dataclass(frozen=True)
class JaxError:
    """One error text, who raises it, who finds it first, and what explain does with it."""

    key: str  # explain's name for it
    text: str  # what JAX says
    pattern: str  # how explain recognises it (a regular expression searched in the message)
    words: str  # explain's first line; {verb}, {aval}, {got} are filled from the match
    operations: tuple[str, ...]  # the catalog functions that raise it
    rules: tuple[str, ...]  # the rules that find the mistake before running
    explain: str  # what `semfix explain` does with it
    suspects: frozenset[str] | None = None  # a DMA's: the parameters it is about (None: the call's semaphore)
    wrong_kind: bool = False  # about the semaphore's kind: explain names it and its allocation, fixes nothing
    migration: bool = False  # a name JAX moved: explain makes the migration's fixes (`rules`) under the floor
    viewed: bool = (
        False  # JAX got `x.at[i]` of a value: what it is about is `x`, the value (a caller's, where a parameter)
    )
    since: Version = OLDEST  # the first release that raises it (OLDEST: every supported one)
    until: Version | None = None  # the last one (None: still raised by the newest)

    @property
    def releases(self) -> str:
        """The releases that raise it, as the table prints them: `0.7.2 to 0.11.1`, `0.12.0 on`."""
        return f"{spelled(self.since)} to {spelled(self.until)}" if self.until else f"{spelled(self.since)} on"


#: The names JAX 0.10 moved from `pltpu` to `pl` whose loss the kernel's own call raises.
_MOVED = r"(?P<name>semaphore_signal|semaphore_wait|semaphore_read|semaphore|DeviceIdType)"

ERRORS: tuple[JaxError, ...] = (
    JaxError(
        "value",
        "ValueError: Cannot signal on a non-semaphore Ref: semaphore[]",
        r"Cannot (?P<verb>\w+) on a non-semaphore Ref:? ?(?P<aval>.*)",
        "JAX refused to {verb}: the semaphore argument was {aval}, not the Ref.",
        _SIGNALS,
        _READS,
        "makes the engine's fix of the semaphore argument at the call the traceback names: a safe one, or "
        "the one `fix --unsafe-fixes` makes, said so (the error is about that argument alone)",
    ),
    JaxError(
        "shape",
        "ValueError: Cannot signal on a non-()-shaped semaphore: (2,)",
        r"Cannot (?P<verb>\w+) on a non-\(\)-shaped semaphore: (?P<shape>.+)",
        "JAX needs one semaphore, but got a Ref of shape {shape}: index one with `.at[i]`.",
        _SIGNALS + _DMAS,
        ("SEM004",),
        "names SEM004's finding at the call on that line; no fix, exit 1",
    ),
    JaxError(
        "kind",
        "ValueError: Must signal semaphores of the following types: {<class 'jax._src.pallas.core.semaphore'>, "
        "<class 'jax.numpy.int16'>, <class 'jax._src.pallas.core.barrier_semaphore'>}. Got dma_sem.",
        r"Must (?P<verb>\w+) semaphores of the following types: .*\. Got (?P<got>\w+)\.?",
        "JAX refused to {verb} on {got}: it takes a regular or barrier semaphore.",
        _SIGNALS,
        ("SEM006",),
        "names the argument and the line of its allocation (SEM006's finding); no fix, exit 1",
        wrong_kind=True,
    ),
    JaxError(
        "dma",
        "ValueError: DMA source/destination/semaphore arguments must be Refs.",
        r"DMA source/destination/semaphore arguments must be Refs",
        "A DMA was given a value where it needs a Ref (source, destination or semaphore).",
        _BUFFERED,
        (*_READS, "SEM005"),
        "follows the descriptor from `.start()` back to every copy that may have built it; makes the engine's "
        "safe fixes of the source, destination and semaphore, and names its unsafe ones (exit 1 while one is open)",
        suspects=frozenset({"src_ref", "dst_ref", "sem", "recv_sem"}),
        since=(0, 7, 2),
        until=(0, 11, 1),
    ),
    JaxError(
        "dma_buffers",
        "ValueError: DMA source/destination arguments must be Refs.",
        r"DMA source/destination arguments must be Refs",
        "A DMA was given a value where it needs a buffer Ref (its source or destination).",
        _BUFFERED,
        ("SEM005",),
        "as for the older text, among the source and destination alone",
        suspects=frozenset({"src_ref", "dst_ref"}),
        since=(0, 12, 0),
    ),
    JaxError(
        "dma_dst_sem",
        "ValueError: DMA destination semaphore must be a Ref.",
        r"DMA destination semaphore must be a Ref",
        "A DMA was given a value where it needs its semaphore Ref (`sem`, or a remote copy's `recv_sem`).",
        _DMAS,
        _READS,
        "follows the descriptor back to its copy; fixes `sem` (`recv_sem`)",
        suspects=frozenset({"sem", "recv_sem"}),
        since=(0, 12, 0),
    ),
    JaxError(
        "dma_send",
        "ValueError: DMA source semaphore must be a Ref.",
        r"DMA source semaphore must be a Ref",
        "A DMA was given a value where it needs its source semaphore Ref (a remote copy's `send_sem`, "
        "or a local copy's `src_sem`).",
        _DMAS,
        _READS,
        "follows the descriptor back to its copy; fixes `send_sem` (`src_sem`)",
        suspects=frozenset({"send_sem", "src_sem"}),
        since=(0, 7, 2),
    ),
    JaxError(
        "dma_wait",
        "ValueError: Expected the destination semaphore to be a reference",
        r"Expected the destination semaphore to be a reference",
        "A DMA wait was given a value where it needs the semaphore Ref.",
        _DMAS,
        _READS,
        "follows the descriptor from `.wait()` back to its copy; fixes the semaphores it waits on "
        "(before 0.12 a remote copy's `.wait_send()` said destination too)",
        suspects=frozenset({"sem", "send_sem", "recv_sem"}),
        since=(0, 9, 1),
    ),
    JaxError(
        "dma_wait_src",
        "ValueError: Expected the source semaphore to be a reference",
        r"Expected the source semaphore to be a reference",
        "A DMA wait was given a value where it needs its source semaphore Ref (`src_sem`, or a remote "
        "copy's `send_sem`).",
        _DMAS,
        _READS,
        "follows the descriptor from `.wait()` (`.wait_send()`) back to its copy; fixes `src_sem` (`send_sem`)",
        suspects=frozenset({"src_sem", "send_sem"}),
        since=(0, 12, 0),
    ),
    JaxError(
        "dma_kind",
        "ValueError: dma_wait requires a DMA semaphore, but got a regular semaphore. Use pl.semaphore_wait() instead.",
        r"dma_wait requires a DMA semaphore, but got a regular semaphore",
        "A DMA waited on a semaphore that is not a DMA semaphore (JAX says regular for a barrier one too).",
        _DMAS,
        ("SEM006",),
        "follows the descriptor from `.wait()` back to its copy; names the semaphore and the line of its "
        "allocation (SEM006's finding); no fix, exit 1",
        suspects=frozenset({"sem", "src_sem", "send_sem", "recv_sem"}),
        wrong_kind=True,
        since=(0, 9, 1),
    ),
    JaxError(
        "copy",
        "ValueError: Can only call `copy_gmem_to_smem` on a `Ref`: JitTracer(float32[8,128]).",
        r"Can only call `(?P<verb>copy_gmem_to_smem|copy_smem_to_gmem)` on a `Ref`:? ?(?P<aval>.*)",
        "A Mosaic GPU copy (`{verb}`) was given {aval} where it needs a Ref (source, destination or barrier).",
        ("copy_gmem_to_smem", "copy_smem_to_gmem"),
        (*_READS, "SEM005"),
        "makes the engine's safe fixes of the source, destination and barrier, as for the DMA error",
        suspects=frozenset({"src", "dst", "barrier"}),
    ),
    JaxError(
        "barrier",
        "ValueError: Can only call `barrier_arrive` on a `Ref`: JitTracer(barrier[]).",
        r"Can only call `(?P<verb>barrier_\w+)` on a `Ref`:? ?(?P<aval>.*)",
        "`{verb}` was given {aval}, not the barrier Ref.",
        ("barrier_arrive", "barrier_wait", "barrier_test"),
        _READS,
        "fixes the read at the call the traceback names, as for the semaphore error",
    ),
    JaxError(
        "view_of_a_value",
        "TypeError: Error interpreting argument to semaphore_signal as a JAX value. The problematic value is of "
        "type <class 'jax._src.numpy.array_methods._IndexUpdateRef'> and was passed to semaphore_signal at position 0.",
        r"Error interpreting argument to (?P<verb>semaphore_\w+|barrier_\w+) as a JAX value\. The problematic value "
        r"is of type <class '[\w.]*_IndexUpdateRef'>",
        "`{verb}` was given jnp's `.at` of a value read out of a Ref (`sems[i].at[j]`), not a view of the Ref.",
        _SIGNALS,
        ("SEM002",),
        "fixes the read the view was taken of at the call the traceback names (`sems[i].at[j]` -> "
        "`sems.at[i].at[j]`), or the caller's, where a helper views its parameter, as for the semaphore error",
        viewed=True,
        since=(0, 9, 2),
    ),
    JaxError(
        "dma_view_of_a_value",
        "TypeError: Error interpreting argument to dma_start as a JAX value. The problematic value is of type "
        "<class 'jax._src.numpy.array_methods._IndexUpdateRef'> and was passed to dma_start at position 2.",
        r"Error interpreting argument to (?P<verb>dma_\w+) as a JAX value\. The problematic value is of type "
        r"<class '[\w.]*_IndexUpdateRef'>",
        "A DMA (`{verb}`) was given jnp's `.at` of a value read out of a Ref (`sems[i].at[j]`), not a view of the Ref.",
        _DMAS,
        ("SEM002",),
        "follows the descriptor back to its copy; fixes the read a view was taken of, as for the DMA error",
        suspects=frozenset({"src_ref", "dst_ref", "sem", "recv_sem", "send_sem", "src_sem"}),
        viewed=True,
        since=(0, 9, 2),
    ),
    JaxError(
        "removed",
        "AttributeError: module 'jax.experimental.pallas.tpu' has no attribute 'semaphore_signal'",
        r"module 'jax\.experimental\.pallas\.tpu' has no attribute '" + _MOVED + "'",
        "JAX 0.11 removed `pltpu.{name}`: JAX 0.10 moved it to `pl.{name}` (SEM101, the migration's rule).",
        ("semaphore_signal", "semaphore_wait", "semaphore_read"),
        ("SEM101",),
        "makes SEM101's fixes (the migration's renames) in the file, where the project's JAX floor permits;"
        " else names the floor they need, exit 1",
        migration=True,
        since=(0, 11, 0),
    ),
    JaxError(
        "deprecated",
        "DeprecationWarning: pltpu.semaphore_signal is deprecated, use pl.semaphore_signal instead.",
        r"pltpu\." + _MOVED + r" is deprecated, use pl\.\w+ instead",
        "JAX 0.10 deprecated `pltpu.{name}` (an error under `-W error`): it is `pl.{name}` (SEM101).",
        ("semaphore_signal", "semaphore_wait", "semaphore_read"),
        ("SEM101",),
        "as for the removal",
        migration=True,
        since=(0, 10, 0),
        until=(0, 10, 2),
    ),
)

BY_KEY = {error.key: error for error in ERRORS}


def recognise(message: str) -> tuple[JaxError, re.Match[str]] | None:
    """The first row whose pattern the exception message holds, with the match."""
    for error in ERRORS:
        if match := re.search(error.pattern, message):
            return error, match
    return None


def recognise_start(start: str) -> list[tuple[JaxError, str]]:
    """The rows a message cut short after `start` may be (pytest's summary cuts it to the
    terminal's width), each with the message as far as its first colon after the cut: those
    whose pattern matches, from within `start`, `start` completed by the shortest ending of the
    row's own text that does. Two words at least, or any `Can...` would do."""
    found: list[tuple[JaxError, str]] = []
    for error in ERRORS if len(start.split()) >= 2 else ():
        text = error.text.split(": ", 1)[1]
        for cut in range(len(text), -1, -1):
            match = re.search(error.pattern, start + text[cut:])
            if match and match.start() < len(start):
                found.append((error, start + text[cut:].split(":", 1)[0]))
                break
    return found


_AVALS = {
    "semaphore": "the count read out of a regular semaphore Ref",
    "dma_sem": "the count read out of a DMA semaphore Ref",
    "barrier_semaphore": "the count read out of a barrier semaphore Ref",
    "barrier": "the value read out of a Mosaic GPU barrier Ref",
}
#: The semaphore kinds JAX names after `Got` (their dtypes' names).
_KINDS = {"dma_sem": "a DMA semaphore", "semaphore": "a regular semaphore", "barrier_semaphore": "a barrier semaphore"}


def said(error: JaxError, match: re.Match[str]) -> str:
    """Explain's first line for an error it recognised: the row's words, filled from the match."""
    groups = match.groupdict()
    got = groups.get("got") or ""
    filled = {"aval": _describe_aval(match), "got": _KINDS.get(got, f"a Ref of {got}")}
    return error.words.format(**groups | filled)


def _strip(aval: str) -> str:
    return re.sub(r"^\w*Tracer\((.*)\)$", r"\1", aval.strip().rstrip("."))  # JitTracer(barrier[]): what it traces


def read_shape(match: re.Match[str]) -> str | None:
    """The shape of the semaphore value JAX got (the match's `aval`), as Python prints a tuple
    (`(2,)`), when it is not one semaphore (`semaphore[2]`: a row read out of a 2-D array);
    None otherwise. Every rewrite of a read into a Ref (`x[...]` -> `x`, `x[i]` -> `x.at[i]`)
    keeps that shape, so none of them makes the one semaphore JAX needs. The non-()-shaped
    error names the shape itself."""
    if shaped := match.groupdict().get("shape"):
        return shaped.strip()
    aval = re.fullmatch(r"(?P<name>\w+)\[(?P<shape>[^\]]*)\]", _strip(match.groupdict().get("aval") or ""))
    if aval is None or aval["name"] not in _AVALS or not aval["shape"].strip():
        return None
    dims = [d.strip() for d in aval["shape"].split(",")]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


def _describe_aval(match: re.Match[str]) -> str:
    """JAX's abstract value in words: what it was read out of, and whether it is a whole array."""
    aval = _strip(match.groupdict().get("aval") or "")
    name = re.match(r"\w+(?=\[)", aval)
    if name is None or name[0] not in _AVALS:
        return f"the value `{aval}`" if aval else "a value"
    shape = read_shape(match)
    return _AVALS[name[0]] + (f", of shape {shape}: a read of a whole array of them" if shape else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The table as `semfix rules --errors` prints it and the README holds it."""
    lines = [
        "| JAX error | JAX releases | raised by | found before running by | `semfix explain` |",
        "|---|---|---|---|---|",
    ]
    for error in ERRORS:
        operations = ", ".join(f"`{name}`" for name in error.operations)
        text = f"`` {error.text} ``" if "`" in error.text else f"`{error.text}`"
        rules = ", ".join(error.rules)
        lines.append(f"| {_cell(text)} | {error.releases} | {operations} | {rules} | {_cell(error.explain)} |")
    return "\n".join(lines) + "\n"


#: What JAX's DMA checks unflatten their operands to (`_dma_unflatten(tree, args)`, 0.7.2 to
#: 0.12.1): source, destination, destination semaphore, source semaphore, device id, as the
#: catalog's parameters; a remote copy's `.wait_send()` swaps source and destination.
_OPERANDS: tuple[frozenset[str], ...] = (
    frozenset({"src_ref"}),
    frozenset({"dst_ref"}),
    frozenset({"sem", "recv_sem"}),
    frozenset({"send_sem", "src_sem"}),
    frozenset(),
)
_SWAPPED = (_OPERANDS[1], _OPERANDS[0], _OPERANDS[3], _OPERANDS[2], _OPERANDS[4])


def _items(text: str) -> list[str] | None:
    """The items of the tuple `text` begins with (`(a, b(c, d), e)`), as printed; None for no tuple."""
    if not text.startswith("("):
        return None
    items, depth, start = [], 0, 1
    for at, char in enumerate(text):
        depth += char in "([{<"
        depth -= char in ")]}>"
        if depth == 1 and char == ",":
            items.append(text[start:at].strip())
            start = at + 1
        elif depth == 0:
            last = text[start:at].strip()
            return [*items, last] if last else items
    return None


def values_shown(shown: dict[str, str], swapped: bool) -> frozenset[str] | None:
    """The catalog parameters that JAX's DMA check got a value for, not a Ref, read from the
    arguments pytest's long traceback prints for its frame (`tree = PyTreeDef((*, *, *, None,
    None))`, `args = (Ref<any>{float32[8,128]}, ShapedArray(float32[8,128]), ...)`): direct
    evidence of which argument is the mistake. None where the locals do not say so plainly:
    each operand one leaf (a view's transforms add leaves), each leaf a Ref or a ShapedArray."""
    tree = shown.get("tree", "").removeprefix("PyTreeDef(")
    slots, leaves = _items(tree), _items(shown.get("args", ""))
    if slots is None or leaves is None or len(slots) != len(_OPERANDS) or set(slots) - {"*", "None"}:
        return None
    if slots.count("*") != len(leaves) or not all(leaf.startswith(("Ref<", "ShapedArray(")) for leaf in leaves):
        return None
    operands = iter(leaves)
    given = [next(operands) if slot == "*" else "None" for slot in slots]
    names = _SWAPPED if swapped else _OPERANDS
    return frozenset().union(*(name for name, leaf in zip(names, given) if leaf.startswith("ShapedArray(")))
