"""The planted mistakes: each mutant differs from the correct kernel at one site.

- `.at[i]` -> `[i]` (the last view of a chain, or every view of it);
- a Ref -> `r[...]` / `r[()]` (a read where the Ref was meant; at a helper's argument, a value
  given to a helper);
- a dropped index: the last index of the last subscript left out, written as the view
  (`sems.at[i]`, drop-index) or as the read a user writes for it (`sems[i]`, drop-index-read);
- `sems[i].at[j]`: a chain of views with its first one read (read-then-view);
- the wrong semaphore kind in the allocation (REGULAR <-> DMA, a barrier made REGULAR).

JAX decides which mutants are mistakes at all: judge.py keeps only those it rejects or that
compute a wrong result.
"""

from __future__ import annotations

import random

Mutants = list[tuple[str, str]]  # (mutation, the site's new text)


def render(base: str, subs: list[list[str]], layout: str = "plain", forms: list[str] | None = None) -> str:
    """`base.at[i, j].at[k]`; `forms` gives each subscript as ".at" or "" (a read); layouts put a
    comment or a line break inside the brackets of the last subscript."""
    forms = forms or [".at"] * len(subs)
    text = base
    for n, (sub, form) in enumerate(zip(subs, forms)):
        inner = ", ".join(sub)
        last = n == len(subs) - 1
        if last and layout == "comment":
            inner = f"\n        {inner}  # the semaphore\n    "
        if last and layout == "break" and form:
            text = f"(\n        {text}\n        {form}[{inner}]\n    )"
            continue
        text += f"{form}[{inner}]"
    return text


def sem_mutants(
    base: str, subs: list[list[str]], rng: random.Random, *, at: bool = True, layout: str = "plain"
) -> Mutants:
    """Mistakes at a semaphore expression `base.at[...]...` (with `at=False`, `base[i]` is an
    element of a tuple or list of Refs: only a read can be planted)."""
    read = rng.choice(["[...]", "[()]"])
    if not at:
        return [("read", f"{base}[{subs[0][0]}]{read}")]
    found: Mutants = [("read", render(base, subs, layout) + read)]
    if not subs:
        return found
    n = len(subs)
    found.append(("at->index", render(base, subs, layout, [".at"] * (n - 1) + [""])))
    if n > 1:
        found.append(("at->index", render(base, subs, layout, [""] * n)))
    if n > 1:  # `sems[i].at[j]`: the first view read, the rest taken of the value (jnp's `.at`)
        found.append(("read-then-view", render(base, subs, layout, [""] + [".at"] * (n - 1))))
    elif len(subs[0]) > 1 and layout == "plain":  # `sems.at[i, j]` written `sems[i].at[j]`
        found.append(("read-then-view", render(base, [subs[0][:1], subs[0][1:]], layout, ["", ".at"])))
    last = subs[-1]
    if len(last) > 1:
        dropped = [*subs[:-1], last[:-1]]
        found.append(("drop-index", render(base, dropped, layout)))
        found.append(("drop-index-read", render(base, dropped, layout, [".at"] * (n - 1) + [""])))
    else:
        found.append(("drop-index", render(base, subs[:-1], "plain")))
    return found


def buffer_mutants(ref: str, rows: str, rng: random.Random) -> Mutants:
    """Mistakes at a DMA buffer `ref.at[rows]`: the slice read, or the view read whole."""
    return [("at->index", f"{ref}[{rows}]"), ("read", f"{ref}.at[{rows}]" + rng.choice(["[...]", "[()]"]))]


def kind_mutants(kind: str) -> Mutants:
    """The allocation spelling another kind."""
    other = {"REGULAR": "DMA", "DMA": "REGULAR", "BARRIER": "REGULAR"}[kind]
    return [("wrong-kind", f"pltpu.SemaphoreType.{other}")]
