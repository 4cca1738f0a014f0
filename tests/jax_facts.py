"""Reads, from the JAX it runs with, the facts semfix's catalog and error table must hold.

Run by tests/test_newest_jax.py with the Python of a JAX release's environment (tests/jax_env.py);
it prints one JSON object and imports neither semfix nor pytest. The facts:
- `deprecations`: each Pallas module's `_deprecations` table (name -> removed, i.e. no object);
- `signatures`: every public callable of the Pallas modules, as (name, kind) per parameter;
- `errors`: what JAX raises when a tiny kernel gives a value (a read of the Ref) to one
  parameter of a TPU operation, in interpret mode on the CPU. Mosaic GPU kernels cannot
  trace on a CPU, so their errors are not read here.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import warnings

MODULES = (
    "jax.experimental.pallas",
    "jax.experimental.pallas.tpu",
    "jax.experimental.pallas.mosaic_gpu",
    "jax.experimental.pallas.triton",
    "jax.experimental.pallas.tpu_sc",
    "jax.experimental.pallas.fuser",
    "jax.pallas",
    "jax.pallas.tpu",
    "jax.pallas.mosaic_gpu",
    "jax.pallas.tpu_sc",
    "jax.pallas.fuser",
    # the private paths the catalog lists
    "jax._src.pallas.primitives",
    "jax._src.pallas.mosaic.primitives",
    "jax._src.pallas.mosaic.helpers",
    "jax._src.pallas.mosaic_gpu.primitives",
)

# (operation, parameter, what the kernel does): the statements of a kernel whose parameters are
# `x` and `o` (HBM buffers), `sems` (DMA semaphores, shape (2,)) and `flags` (REGULAR, (2,)).
# A parameter the release's signature lacks is skipped. "kind" and "shape" give a Ref of the
# wrong kind or shape instead of a value.
_COPY = "pltpu.{op}({src}, {dst}, {sem}{extra})"
_START = "c = " + _COPY + "\n    c.start()\n    c.wait()"
_CALL = "c = " + _COPY + "\n    c.wait()"
_REMOTE = ", device_id=0"
_BUFFERS = {"src_ref": ("x[...]", "o", "sems.at[0]", ""), "dst_ref": ("x", "o[...]", "sems.at[0]", "")}


def _copies(op: str, form: str, remote: bool) -> dict[tuple[str, str, str], str]:
    cases = {}
    args = dict(_BUFFERS)
    if remote:
        args["send_sem"] = ("x", "o", "sems.at[0][...], sems.at[1]", _REMOTE)
        args["recv_sem"] = ("x", "o", "sems.at[0], sems.at[1][...]", _REMOTE)
        args = {
            k: (s, d, m if k.endswith("_sem") else m + ", sems.at[1]", e or _REMOTE) for k, (s, d, m, e) in args.items()
        }
    else:
        args["sem"] = ("x", "o", "sems.at[0][...]", "")
        args["src_sem"] = ("x", "o", "sems.at[0]", ", src_sem=sems.at[1][...]")
    for param, (src, dst, sem, extra) in args.items():
        cases[(op, param, "value")] = form.format(op=op, src=src, dst=dst, sem=sem, extra=extra)
    if not remote:  # a descriptor rebuilt only to wait on, its semaphores given as values
        fine = _COPY.format(op=op, src="x", dst="o", sem="sems.at[0]", extra=", src_sem=sems.at[1]")
        for param, (sem, extra) in {
            "sem": ("sems.at[0][...]", ""),
            "src_sem": ("sems.at[0]", ", src_sem=sems.at[1][...]"),
        }.items():
            waited = _COPY.format(op=op, src="x", dst="o", sem=sem, extra=extra)
            cases[(op, param, "wait")] = f"{fine}.start()\n    {waited}.wait()"
        cases[(op, "sem", "kind")] = form.format(op=op, src="x", dst="o", sem="flags.at[0]", extra="")
        cases[(op, "sem", "shape")] = form.format(op=op, src="x", dst="o", sem="sems", extra="")
    return cases


CASES: dict[tuple[str, str, str], str] = {
    ("semaphore_signal", "sem_or_view", "value"): "pl.semaphore_signal(flags.at[0][...], 1)",
    (
        "semaphore_wait",
        "sem_or_view",
        "value",
    ): "pl.semaphore_signal(flags.at[0], 1)\n    pl.semaphore_wait(flags.at[0][...], 1)",
    ("semaphore_read", "sem_or_view", "value"): "o[0, 0] = pl.semaphore_read(flags.at[0][...]).astype(o.dtype)",
    ("semaphore_signal", "sem_or_view", "kind"): "pl.semaphore_signal(sems.at[0], 1)",
    ("semaphore_signal", "sem_or_view", "shape"): "pl.semaphore_signal(flags, 1)",
    ("sync_copy", "src_ref", "value"): "pltpu.sync_copy(x[...], o)",
    ("sync_copy", "dst_ref", "value"): "pltpu.sync_copy(x, o[...])",
    **_copies("make_async_copy", _START, remote=False),
    **_copies("async_copy", _CALL, remote=False),
    **_copies("make_async_remote_copy", _START, remote=True),
    **_copies("async_remote_copy", _CALL, remote=True),
}


def _signature(function: object) -> list[tuple[str, str]] | None:
    try:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind.name) for p in parameters]


def _public(module: object) -> dict[str, list[tuple[str, str]]]:
    found = {}
    for name in sorted(n for n in dir(module) if not n.startswith("_")):
        value = getattr(module, name)
        if callable(value) and (signature := _signature(value)) is not None:
            found[name] = signature
    return found


def _run(body: str) -> str:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    source = f"def kernel(x, o, sems, flags):\n    {body}\n"
    namespace = {"pl": pl, "pltpu": pltpu}
    exec(compile(source, "<kernel>", "exec"), namespace)  # noqa: S102 - the kernel of a case above
    x = jnp.ones((8, 128), jnp.float32)
    spec = pl.BlockSpec(memory_space=pl.ANY)
    call = pl.pallas_call(
        namespace["kernel"],
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[spec],
        out_specs=spec,
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.REGULAR((2,))],
        interpret=True,
    )
    try:
        jax.block_until_ready(call(x))
    except Exception as error:  # noqa: BLE001 - what JAX raises is the fact
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return "ok"


def main() -> None:
    warnings.simplefilter("ignore")
    import jax

    modules = {}
    for path in MODULES:
        try:
            modules[path] = importlib.import_module(path)
        except ImportError:
            continue
    signatures = {path: _public(module) for path, module in modules.items()}
    deprecations = {
        path: {name: entry[1] is None for name, entry in getattr(module, "_deprecations", {}).items()}
        for path, module in modules.items()
    }
    tpu = signatures["jax.experimental.pallas.tpu"] | signatures["jax.experimental.pallas"]
    errors = [
        [op, param, stage, _run(body)]
        for (op, param, stage), body in CASES.items()
        if op in tpu and param in {name for name, _ in tpu[op]}
    ]
    facts = {"jax": jax.__version__, "deprecations": deprecations, "signatures": signatures, "errors": errors}
    json.dump(facts, sys.stdout)


if __name__ == "__main__":
    main()
