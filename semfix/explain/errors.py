"""The JAX errors `explain` reads: what each means, and which catalog parameters it is about.

The table is keyed by the error's kind; `SUSPECTS` names, for each DMA or copy error, the
catalog parameters (semfix/catalog.py) its check covers, so that blame (blame.py) looks only
at those arguments of the call at the traceback's line.
"""

from __future__ import annotations

import re

#: Each error JAX raises for these mistakes, and what it means. `copy` is JAX's generic Ref
#: check: the Mosaic GPU copies check source, destination, barrier in turn.
KNOWN = {
    "value": (r"Cannot (?P<verb>\w+) on a non-semaphore Ref: (?P<aval>.+)",
              "JAX refused to {verb}: the semaphore argument was {aval}, not the Ref."),
    "shape": (r"Cannot (?P<verb>\w+) on a non-\(\)-shaped semaphore: (?P<shape>.+)",
              "JAX needs one semaphore, but got a Ref of shape {shape}: index one with `.at[i]`."),
    "dma": (r"DMA source/destination/semaphore arguments must be Refs",
            "A DMA was given a value where it needs a Ref (source, destination or semaphore)."),
    "dma_send": (r"DMA source semaphore must be a Ref", "A remote DMA was given a value where it needs its send semaphore Ref."),
    "dma_wait": (r"Expected the destination semaphore to be a reference", "A DMA wait was given a value where it needs the semaphore Ref."),
    "copy": (r"Can only call `(?P<verb>copy_gmem_to_smem|copy_smem_to_gmem)` on a `Ref`:? ?(?P<aval>.*)",
             "A Mosaic GPU copy (`{verb}`) was given {aval} where it needs a Ref (source, destination or barrier)."),
    "barrier": (r"Can only call `(?P<verb>barrier_\w+)` on a `Ref`:? ?(?P<aval>.*)", "`{verb}` was given {aval}, not the barrier Ref."),
}
#: Which parameters each DMA error is about. `.start()` checks source, destination and the
#: semaphore the copy signals on in one test, and a remote copy's send semaphore in its own;
#: `.wait()` checks the semaphore it waits on (a remote copy waits on both, send first).
SUSPECTS = {
    "dma": frozenset({"src_ref", "dst_ref", "sem", "recv_sem"}),
    "dma_send": frozenset({"send_sem"}),
    "dma_wait": frozenset({"sem", "send_sem", "recv_sem"}),
    "copy": frozenset({"src", "dst", "barrier"}),
}
_AVALS = {
    "semaphore": "the count read out of a regular semaphore Ref",
    "dma_sem": "the count read out of a DMA semaphore Ref",
    "barrier_semaphore": "the count read out of a barrier semaphore Ref",
    "barrier": "the value read out of a Mosaic GPU barrier Ref",
}


def read_error(message: str) -> tuple[str, str] | None:
    """(the error's kind, what it means in words) for an error JAX raises for these mistakes; None otherwise."""
    for kind, (pattern, words) in KNOWN.items():
        if match := re.search(pattern, message):
            return kind, words.format(**match.groupdict() | {"aval": _describe_aval(match.groupdict().get("aval") or "")})
    return None


def _describe_aval(aval: str) -> str:
    """JAX's abstract value in words: what it was read out of, and whether it is a whole array."""
    aval = re.sub(r"^\w*Tracer\((.*)\)$", r"\1", aval.strip().rstrip("."))  # JitTracer(barrier[]): what it traces
    match = re.fullmatch(r"(?P<name>\w+)\[(?P<shape>[^\]]*)\]", aval)
    if match is None or match["name"] not in _AVALS:
        return f"the value `{aval}`" if aval else "a value"
    shape = f", of shape ({match['shape']},): a read of a whole array of them" if match["shape"] else ""
    return _AVALS[match["name"]] + shape
