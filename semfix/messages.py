"""The words of every finding, in one place, and the counts that summarise them."""

from __future__ import annotations

UNSAFE_SUFFIX = " (unsafe fix: enable with --unsafe-fixes)"
COMMENT_SUFFIX = " (not fixed: a comment inside the brackets would be lost)"
NESTED_READ_SUFFIX = " (not fixed: the value is read more than once)"
_REF_EVIDENCE = "it is indexed with .at or read with [...] in this scope"


def one_line(code: str, limit: int = 60) -> str:
    text = " ".join(code.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def value_read(written: str, ref: str) -> str:
    return f"`{one_line(written)}` reads a value out of the semaphore Ref; pass the Ref `{one_line(ref)}`"


# Why a rule holds `X` a Ref (the reasons `element_read` and `buffer_view` give for a safe fix).
ALLOCATED_ARRAY = "it is allocated as a semaphore array"
VIEWED = "it is a `.at[...]` view, which is always a Ref"


def element_read(written: str, view: str, *, safe: bool, evidence: str | None, base: str) -> str:
    if safe:
        return (
            f"`{one_line(written)}` reads one semaphore out of the array Ref; "
            f"pass the view `{one_line(view)}` ({evidence or _REF_EVIDENCE})"
        )
    return (
        f"`{one_line(written)}` may read one semaphore out of an array Ref: pass the view `{one_line(view)}` "
        f"if `{one_line(base)}` is a Ref (for a tuple of Refs, `{one_line(written)}` is right)"
    )


def given_to_a_view(
    written: str, view: str, *, safe: bool, evidence: str | None, base: str, helper: str, viewed: str
) -> str:
    """SEM002's words for a value read out of a Ref and given to a helper that views its
    parameter (`helper(sems[0])`, `sem.at[slot]` there): jnp's `.at` of a value is no Ref."""
    taken = f"`{helper}` views it as a Ref (`{one_line(viewed)}`), but `{one_line(written)}` is a value read out of"
    if safe:
        return f"{taken} the Ref `{one_line(base)}`; pass the view `{one_line(view)}` ({evidence or _REF_EVIDENCE})"
    return f"{taken} `{one_line(base)}`: pass the view `{one_line(view)}` if `{one_line(base)}` is a Ref"


def value_given_to_a_view(written: str, ref: str, *, helper: str, viewed: str) -> str:
    """SEM001's words for a value read out of a Ref and given to a helper that views its
    parameter (`helper(sem[...])`, `sem.at[slot]` there)."""
    return (
        f"`{helper}` views it as a Ref (`{one_line(viewed)}`), but `{one_line(written)}` reads a value "
        f"out of the Ref; pass the Ref `{one_line(ref)}`"
    )


def rank_unproven(written: str, view: str, base: str) -> str:
    """SEM002's words where the file does not show how many indices pick one semaphore of the
    Ref (`base`: what the views start from): the view may be a row (unsafe fix)."""
    return (
        f"`{one_line(written)}` reads one semaphore out of the array Ref: pass the view `{one_line(view)}` "
        f"if it picks one semaphore (the file does not show how many dimensions `{one_line(base)}` has)"
    )


def not_cut(written: str) -> str:
    """SEM002's words where the text between the value and `[` is not what the edit knows."""
    return (
        f"`{one_line(written)}` reads out of the Ref; pass a `.at[...]` view of it (not fixed: unusual text before `[`)"
    )


def read_of_a_read(written: str, view: str | None) -> str:
    """`X[i][j]` of a Ref `X`: `X[i].at[j]` would take jnp's `.at` of a value. Reported only."""
    use = f"pass the view `{one_line(view)}`" if view else "index the Ref with one `.at[...]`"
    return f"`{one_line(written)}` reads out of the Ref, then out of the value read; {use}"


def read_then_view(read_message: str, view: str, *, safe: bool) -> str:
    """A SEM001 message whose fix also turned the element read into a view (one rewrite)."""
    return (
        read_message.rsplit("; pass the Ref", 1)[0]
        + f"; pass the view `{one_line(view)}`"
        + ("" if safe else " (unsafe fix: the array could be a tuple of Refs)")
    )


def non_scalar(written: str, *, whole_array: bool) -> str:
    what = "a whole semaphore array" if whole_array else "a slice of semaphores"
    return (
        f"`{one_line(written)}` passes {what} where one semaphore is needed (JAX: non-()-shaped semaphore); "
        "index one semaphore with `.at[i]`"
    )


def row(written: str, left: int, rank: int, line: int | str, allocated: str) -> str:
    """SEM004's words for a view or read that leaves dimensions of its allocation unindexed."""
    return (
        f"`{one_line(written)}` passes a row of semaphores where one semaphore is needed (JAX: "
        f"non-()-shaped semaphore): it leaves {left} of the {rank} dimensions of `{one_line(allocated)}` "
        f"({at(line)}) unindexed; index one semaphore along each"
    )


def row_seen(written: str, left: int, axes: int, line: int, view: str) -> str:
    """SEM004's words for a read or view of fewer indices than another view of the same Ref has."""
    return (
        f"`{one_line(written)}` passes a row of semaphores where one semaphore is needed (JAX: "
        f"non-()-shaped semaphore): `{one_line(view)}` (line {line}) indexes {axes} dimensions of it, "
        f"this leaves {left} unindexed; index one semaphore along each"
    )


def carried(name: str, line: int, direct: str) -> str:
    """Another rule's finding on a read, for a variable that carries the read to the argument."""
    return f"`{name}` holds the read at line {line}: {direct}"


def buffer_read(written: str, ref: str) -> str:
    return f"`{one_line(written)}` passes a value read out of the Ref as a DMA buffer; pass the Ref `{one_line(ref)}`"


def buffer_view(written: str, view: str, *, safe: bool, evidence: str | None, base: str) -> str:
    """SEM005's words for `x[i]` or `x[0:8]` passed as a DMA buffer (see `element_read`)."""
    if safe:
        return (
            f"`{one_line(written)}` reads elements out of the Ref as a DMA buffer; "
            f"pass the view `{one_line(view)}` ({evidence or _REF_EVIDENCE})"
        )
    return (
        f"`{one_line(written)}` may read elements out of a Ref as a DMA buffer: pass the view `{one_line(view)}` "
        f"if `{one_line(base)}` is a Ref (for a tuple of Refs, `{one_line(written)}` is right)"
    )


#: A semaphore kind (`SemaphoreType`'s member) in words.
KIND_WORDS = {"REGULAR": "regular", "DMA": "DMA", "BARRIER": "barrier"}


def wrong_kind(
    written: str, kind: str, line: int | str, allocation: str, operation: str, needed: frozenset[str]
) -> str:
    """SEM006's words: what the argument is, where it is allocated, what the operation takes."""
    wanted = " or ".join(KIND_WORDS[k] for k in ("REGULAR", "DMA", "BARRIER") if k in needed)
    jax = "Must signal/wait semaphores of the following types"
    if needed == {"DMA"}:
        jax = "dma_wait requires a DMA semaphore"
    where = f"allocated at {at(line)}: `{one_line(allocation)}`"
    return (
        f"`{one_line(written)}` is a {KIND_WORDS[kind]} semaphore ({where}), "
        f"but `{operation}` needs a {wanted} semaphore (JAX: {jax})"
    )


def at(line: int | str) -> str:
    """Where an allocation is written: a line of this file, or another module's `file:line`."""
    return f"line {line}" if isinstance(line, int) else line


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def nothing_fixed(found: int, unsafe: int, unsafe_option: str) -> str:
    """Why a tool that fixes (the libcst codemod) changed nothing, in the words of the CLI's
    summary (`2 problems found; 1 fixable with ...`): each count says what it is, so "nothing
    to fix" is never said of a file with problems in it. `unsafe`: those a fix exists for,
    held back as unsafe; `unsafe_option` the option that would apply them."""
    if not found:
        return "no problems found"
    parts = [f"{plural(found, 'problem')} found"]
    if unsafe:
        parts.append(f"{unsafe} fixable with `{unsafe_option}`")
    if found > unsafe:
        parts.append(
            "none can be fixed automatically" if not unsafe else f"{found - unsafe} cannot be fixed automatically"
        )
    return "; ".join(parts)


def held_as_value(read: str) -> str:
    """Why a value viewed through the local holding it (`row = sems[0]`, then `row.at[1]`) is
    reported, not fixed: the local may be read as a value elsewhere too."""
    return f"`{read}` is held in a local, which other code may read as a value"
