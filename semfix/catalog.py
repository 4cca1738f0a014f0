"""The JAX Pallas functions that take semaphores or DMA buffers, and where JAX exports them.

Read from JAX's own releases, 0.4.35 to 0.12.1 (each release's wheel: its public modules'
imports and its `jax._src.pallas` signatures). A call is in scope only when its qualified name
resolves, through the file's imports, to one of these entries. A name added after
`jax_versions.OLDEST` records the release that added it (`since`), so that what semfix writes
can be held to a project's JAX floor; tests/test_newest_jax.py holds the catalog to the newest
JAX's own signatures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from semfix.jax_versions import Version


class SemParam(NamedTuple):
    """A parameter that must receive a Ref: a semaphore (or barrier), or a DMA buffer."""

    name: str
    position: int | None  # None: keyword-only
    since: Version | None = None  # the JAX release that added it (None: every supported release)
    # a local helper's parameter: the JAX function and its parameter it is passed to, unchanged
    via: tuple[str, str] | None = None


class Operation(NamedTuple):
    """One JAX function and the parameters through which it receives semaphores, and DMA buffers."""

    name: str
    sem_params: tuple[SemParam, ...]
    buffer_params: tuple[SemParam, ...] = ()
    partial: bool = False  # given to functools.partial: its arguments are read when the partial is made
    since: Version | None = None  # the JAX release that added it (None: every supported release)
    # a local helper (a def of the file): the catalog calls in it its parameters are passed to
    inner: tuple[object, ...] = ()

    def through_partial(self) -> Operation:
        """The operation as `functools.partial(function, ...)` takes its arguments: after the function."""

        def shifted(params: tuple[SemParam, ...]) -> tuple[SemParam, ...]:
            return tuple(p._replace(position=None if p.position is None else p.position + 1) for p in params)

        return self._replace(
            sem_params=shifted(self.sem_params), buffer_params=shifted(self.buffer_params), partial=True
        )


_Param = tuple[str, int | None] | tuple[str, int | None, Version]


def _op(name: str, *params: _Param, buffers: tuple[_Param, ...] = (), since: Version | None = None) -> Operation:
    return Operation(name, tuple(SemParam(*p) for p in params), tuple(SemParam(*p) for p in buffers), since=since)


_COPY = (("src_ref", 0), ("dst_ref", 1))  # TPU DMAs
_GPU_COPY = (("src", 0), ("dst", 1))  # Mosaic GPU copies


_GENERIC: tuple[Operation, ...] = (
    _op("semaphore_signal", ("sem_or_view", 0)),
    _op("semaphore_wait", ("sem_or_view", 0)),
    _op("semaphore_read", ("sem_or_view", 0)),
)

# `src_sem` (0.12.0): a local copy's semaphore for the end of its read from `src_ref`
_SRC_SEM = ("src_sem", None, (0, 12, 0))
_TPU: tuple[Operation, ...] = _GENERIC + (
    _op("make_async_copy", ("sem", 2), _SRC_SEM, buffers=_COPY),  # `sem` optional from 0.12.0
    _op("async_copy", ("sem", 2), _SRC_SEM, buffers=_COPY),
    _op("sync_copy", buffers=_COPY, since=(0, 5, 0)),  # src_ref and dst_ref may also be pytrees of Refs
    _op("make_async_remote_copy", ("send_sem", 2), ("recv_sem", 3), buffers=_COPY),
    _op("async_remote_copy", ("send_sem", 2), ("recv_sem", 3), buffers=_COPY),
    _op("core_barrier", ("sem", 0), since=(0, 5, 1)),
)

_GPU: tuple[Operation, ...] = (
    _op("semaphore_signal", ("semaphore", 0), since=(0, 10, 1)),
    _op("semaphore_wait", ("semaphore", 0), since=(0, 10, 1)),
    _op("semaphore_signal_multicast", ("semaphore", 0), since=(0, 8, 0)),
    _op("SemaphoreSignal", ("ref", 0), since=(0, 7, 1)),
    _op("barrier_arrive", ("barrier", 0)),
    _op("barrier_wait", ("barrier", 0)),
    _op("barrier_test", ("barrier", 0), since=(0, 10, 1)),
    _op("barrier_arrive_and_wait", ("barrier", 0), since=(0, 12, 0)),
    _op("copy_gmem_to_smem", ("barrier", 2), buffers=_GPU_COPY),
    _op("copy_smem_to_gmem", buffers=_GPU_COPY),
    # tcgen05 copies into tensor memory, awaited through `tcgen05_commit_arrive`'s barrier
    *(
        _op(name, buffers=(("smem_ref", 0), ("tmem_ref", 1)), since=since)
        for name, since in (
            ("async_copy_scales_to_tmem", (0, 7, 0)),
            ("async_copy_sparse_metadata_to_tmem", (0, 7, 1)),
            ("async_copy_smem_to_tmem", (0, 9, 1)),
        )
    ),
    # a store of a value (`src`) into shared memory (`ref`), its end signalled on `barrier`
    _op("async_store_smem", ("barrier", 2), buffers=(("ref", 1),), since=(0, 10, 1)),
    _op("tcgen05_mma", ("barrier", 3), since=(0, 6, 1)),
    _op("tcgen05_commit_arrive", ("barrier", 0), since=(0, 7, 0)),
    _op("try_cluster_cancel", ("barrier", 1), since=(0, 8, 0)),
)

#: Module path -> the semaphore- and buffer-taking functions it exports (public and private paths).
MODULES: Mapping[str, Mapping[str, Operation]] = {
    module: {op.name: op for op in ops}
    for module, ops in {
        "jax.experimental.pallas": tuple(op._replace(since=(0, 6, 0)) for op in _GENERIC),  # on pltpu before
        "jax.experimental.pallas.tpu": _TPU,
        "jax.experimental.pallas.mosaic_gpu": _GPU,
        "jax.pallas": _GENERIC,  # the preferred paths from 0.12.1 (`MODULES_SINCE`)
        "jax.pallas.tpu": _TPU,
        "jax.pallas.mosaic_gpu": _GPU,
        "jax._src.pallas.primitives": _GENERIC,
        "jax._src.pallas.mosaic.primitives": _TPU,
        "jax._src.pallas.mosaic.helpers": _TPU,
        "jax._src.pallas.mosaic_gpu.primitives": _GPU,
    }.items()
}

#: Public Pallas callables whose parameters are named like a semaphore, a barrier or a copy's
#: buffer but take no Ref a kernel reads (tests/test_newest_jax.py asks every other such
#: callable of the newest JAX to be in `MODULES`).
NOT_REF_PARAMETERS: Mapping[str, str] = {
    "tpu.CompilerParams": "compiler flags (`skip_device_barrier`, ...)",
    "mosaic_gpu.CompilerParams": "compiler flags (`unsafe_no_auto_barriers`, ...)",
    "mosaic_gpu.Barrier": "an allocation: `num_barriers` is a count",
    "mosaic_gpu.ClusterBarrier": "an allocation: `num_barriers` is a count",
    "mosaic_gpu.emit_pipeline_warp_specialized": "flags (`manual_produced_barriers`, ...)",
    "tpu.BufferedRef": "the pipeline's own state, which `emit_pipeline` makes, not a kernel",
}
#: Each name in the newest JAX's Pallas `_deprecations` tables (module path after `jax.`), and
#: whether it is of this family, which the migration rules move or report (`MOVED_TO_PALLAS`,
#: `DeviceIdType`); tests/test_newest_jax.py fails on a name missing here, so a new deprecation
#: is seen the day JAX ships it.
DEPRECATED_AT_NEWEST: Mapping[str, bool] = {
    "experimental.pallas.DeviceIdType": True,
    "experimental.pallas.GridSpec": False,
    "experimental.pallas.pallas_call_p": False,
    "experimental.pallas.reciprocal": False,
    "experimental.pallas.core_map": False,
    "experimental.pallas.dot": False,
    "experimental.pallas.debug_checks_enabled": False,
    "experimental.pallas.tpu.BufferedRefBase": False,
    "experimental.pallas.tpu.create_tensorcore_mesh": False,
    "experimental.pallas.tpu.HOST": True,
    "experimental.pallas.mosaic_gpu.transpose_ref": False,
    "pallas.GridSpec": False,
    "pallas.pallas_call_p": False,
}

#: The modules above that a release added after `jax_versions.OLDEST`: JAX 0.12.1 made
#: `jax.pallas` the preferred path, which `jax.experimental.pallas` re-exports.
MODULES_SINCE: Mapping[str, Version] = {path: (0, 12, 1) for path in MODULES if path.startswith("jax.pallas")}
#: The pallas module that a public TPU or GPU path is a submodule of, under either spelling.
_PALLAS_PATHS = ("jax.experimental.pallas", "jax.pallas")

#: Other JAX names the rules need to recognise: kernels, scoped allocations, semaphore types.
PALLAS_CALL = frozenset({*(f"{p}.pallas_call" for p in _PALLAS_PATHS), "jax._src.pallas.pallas_call.pallas_call"})
RUN_SCOPED = frozenset({*(f"{p}.run_scoped" for p in _PALLAS_PATHS), "jax._src.pallas.primitives.run_scoped"})
#: `pl.kernel(body, out_type, mesh=..., scratch_types=[...])` (0.8.1; `out_shape=` and
#: `scratch_shapes=` before 0.10): the body gets its inputs, outputs, then scratch Refs, as a
#: `pallas_call` kernel does. Without a body it returns a decorator.
#: Mosaic GPU's `plgpu.kernel(body, out_type, scratch_types=...)` passes its body the same.
KERNEL = frozenset(
    {
        *(f"{p}{gpu}.kernel" for p in _PALLAS_PATHS for gpu in ("", ".mosaic_gpu")),
        "jax._src.pallas.helpers.kernel",
        "jax._src.pallas.mosaic_gpu.core.kernel",
    }
)
#: `pl.kernel`'s parameters under the names `pallas_call` gives them.
KERNEL_AS_PALLAS_CALL: Mapping[str, str] = {"out_type": "out_shape", "scratch_types": "scratch_shapes"}
#: Pallas's meshes: an allocation `@` one (`pltpu.SemaphoreType.DMA((2,)) @ mesh`) keeps its shape and kind.
MESHES = frozenset(
    {
        *(f"{p}.tpu.{n}" for p in _PALLAS_PATHS for n in ("create_tensorcore_mesh", "TensorCoreMesh")),
        *(f"{p}.tpu_sc.{n}" for p in _PALLAS_PATHS for n in ("ScalarSubcoreMesh", "VectorSubcoreMesh")),
        "jax._src.pallas.mosaic.core.create_tensorcore_mesh",
        "jax._src.pallas.mosaic.core.TensorCoreMesh",
        "jax._src.pallas.mosaic.sc_core.ScalarSubcoreMesh",
        "jax._src.pallas.mosaic.sc_core.VectorSubcoreMesh",
    }
)
#: `pl.core_map(mesh, scratch_shapes=...)` decorates a body that receives the scratch shapes.
CORE_MAP = frozenset({"jax.experimental.pallas.core_map", "jax._src.pallas.core.core_map"})
PARTIAL = frozenset({"functools.partial"})
#: `jax.tree.map(f, tree)`: a container of `tree`'s structure, where `tree` is one.
TREE_MAP = frozenset({"jax.tree.map", "jax.tree_util.tree_map", "jax.tree_map"})
#: Decorators that keep what a def returns (a kernel factory's cache).
CACHES = frozenset({"functools.cache", "functools.lru_cache"})
#: Pallas's slices (`pl.ds(start, size)`): an index of one picks several elements, as `a:b` does.
SLICES = frozenset(f"{m}.{n}" for m in (*_PALLAS_PATHS, "jax._src.state.indexing") for n in ("ds", "dslice", "Slice"))
#: JAX's grid specs, each with its parameters in order: only in these does semfix read a
#: `grid_spec=`'s scratch shapes and output specs (a helper's call may add entries of its own).
_GRID_SPEC = ("grid", "in_specs", "out_specs", "scratch_shapes")
_PREFETCH_GRID_SPEC = ("num_scalar_prefetch", *_GRID_SPEC)
GRID_SPECS: Mapping[str, tuple[str, ...]] = {
    **{f"{p}.GridSpec": _GRID_SPEC for p in _PALLAS_PATHS},
    "jax._src.pallas.core.GridSpec": _GRID_SPEC,
    **{f"{p}.tpu.PrefetchScalarGridSpec": _PREFETCH_GRID_SPEC for p in _PALLAS_PATHS},
    "jax._src.pallas.mosaic.core.PrefetchScalarGridSpec": _PREFETCH_GRID_SPEC,
}
#: `pallas_call`'s parameters that may be given by position after the kernel.
PALLAS_CALL_POSITIONAL = ("out_shape",)
SEMAPHORE_TYPE_OWNERS = (
    *(f"{p}.{backend}.SemaphoreType." for p in _PALLAS_PATHS for backend in ("tpu", "mosaic_gpu")),
    "jax._src.pallas.mosaic.core.SemaphoreType.",
    "jax._src.pallas.mosaic_gpu.core.SemaphoreType.",
    "jax._src.pallas.core.SemaphoreType.",
)


#: The semaphore kinds (the `SemaphoreType` member a semaphore is allocated as) each
#: operation's semaphore parameter accepts, as JAX checks them when tracing (0.10.2). Signal
#: and wait (`check_sem_avals`) take a regular or barrier semaphore, so does `core_barrier`,
#: which signals and waits on its own; a DMA waits (`dma_wait`, at `.wait()`) on a DMA
#: semaphore, and a remote copy's `.wait()` on both. `semaphore_read`, the Mosaic GPU barrier
#: operations and the DMA's start check no kind: they are not listed. A copy's `src_sem` (0.12)
#: is waited on as a DMA semaphore too (`.wait()` waits on it first, when given).
SEMAPHORE_KINDS = ("REGULAR", "DMA", "BARRIER")
_SIGNALLED = frozenset({"REGULAR", "BARRIER"})
_DMA = frozenset({"DMA"})
KINDS_NEEDED: Mapping[tuple[str, str], frozenset[str]] = {
    ("semaphore_signal", "sem_or_view"): _SIGNALLED,
    ("semaphore_wait", "sem_or_view"): _SIGNALLED,
    ("core_barrier", "sem"): _SIGNALLED,
    ("semaphore_signal", "semaphore"): _SIGNALLED,
    ("semaphore_wait", "semaphore"): _SIGNALLED,
    ("semaphore_signal_multicast", "semaphore"): _SIGNALLED,
    ("SemaphoreSignal", "ref"): _SIGNALLED,
    ("make_async_copy", "sem"): _DMA,
    ("async_copy", "sem"): _DMA,
    ("make_async_copy", "src_sem"): _DMA,
    ("async_copy", "src_sem"): _DMA,
    ("make_async_remote_copy", "send_sem"): _DMA,
    ("make_async_remote_copy", "recv_sem"): _DMA,
    ("async_remote_copy", "send_sem"): _DMA,
    ("async_remote_copy", "recv_sem"): _DMA,
}

#: The descriptor methods at which JAX checks a DMA's semaphore kind (`dma_wait`): `.wait()`
#: waits on every semaphore; `.wait_recv()` (`.wait_write()`, 0.12) on the one the write into
#: `dst_ref` signals, `.wait_send()` (`.wait_read()`, 0.12) on the one the read signals. Its
#: `.start()` checks no kind: a DMA that nothing waits on this way may signal a regular semaphore.
_WRITE_WAITS = frozenset({"wait", "wait_recv", "wait_write"})
_READ_WAITS = frozenset({"wait", "wait_send", "wait_read"})
KIND_CHECKED_AT: Mapping[str, frozenset[str]] = {
    "sem": _WRITE_WAITS,
    "recv_sem": _WRITE_WAITS,
    "send_sem": _READ_WAITS,
    "src_sem": _READ_WAITS,
}

#: Every function name in the catalog, for the byte prefilter.
FUNCTION_NAMES: frozenset[str] = frozenset(n for ops in MODULES.values() for n in ops)


def alternation(names: Iterable[str]) -> bytes:
    """A pattern for any of `names`, the longest tried first."""
    return b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))


# A file can hold a finding only if it names a catalog function and spells "pallas" (every
# module path above contains it, and qualified names come from what the source spells).
# Looked for one by one: `bytes.find` is faster than a regular expression of them all. A name
# holding another (`make_async_copy` holds `sync_copy`) is spelled only where that one is, so
# only the names holding no other are looked for: 16 of 24.
_SPELLED_NAMES = tuple(
    name.encode() for name in sorted(FUNCTION_NAMES) if not any(n != name and n in name for n in FUNCTION_NAMES)
)
#: Parts of those names: a file that spells none (most files of a run) is passed over in 6
#: searches; one that spells a part is searched for that part's names alone, from the part's
#: first spelling on (a name holding it at offset k starts there, less k, or later).
NAME_PARTS = (b"sync_", b"emaphore", b"barrier", b"mem_to_", b"tcgen05", b"try_cluster")


def _part_of(name: bytes) -> bytes:
    return next((part for part in NAME_PARTS if part in name), name)  # a name no part holds is its own


_NAMES_OF = tuple(
    (part, tuple((name, name.index(part)) for name in _SPELLED_NAMES if _part_of(name) == part))
    for part in dict.fromkeys(map(_part_of, _SPELLED_NAMES))
)
#: id(data) -> (data, whether it spells "pallas", whether it spells a catalog name; None: not
#: yet asked): every asker of a run's byte scan (the scan, the run's questions of its modules)
#: shares one search per file. Keyed by the bytes object, kept beside its answer so that its id
#: names no other: hashing the bytes would cost as much as a search. The oldest are dropped
#: beyond `_SCANNED_MOST`, so that a long-lived process (the language server) keeps no more.
_SCANNED: dict[int, tuple[bytes, bool, bool | None]] = {}
_SCANNED_MOST = 2048


def lookup(qualified_name: str) -> Operation | None:
    """The catalog entry a fully qualified name refers to, if any."""
    module, _, name = qualified_name.rpartition(".")
    return MODULES.get(module, {}).get(name)


def may_contain_calls(data: bytes | str, *, through_run: bool = False) -> bool:
    """Cheap test on raw source: False only when no call can resolve to the catalog.
    `through_run`: the file reads JAX names through another module of the run (`pl`, `pltpu`
    from a compat module), so it need not spell "pallas" itself."""
    if isinstance(data, str):  # a new object each time: nothing to share
        raw = data.encode("utf-8", "surrogatepass")
        return (through_run or b"pallas" in raw) and _spells_a_name(raw)
    scanned = _SCANNED.get(id(data))
    if scanned is None or scanned[0] is not data:
        if len(_SCANNED) >= _SCANNED_MOST:
            del _SCANNED[next(iter(_SCANNED))]
        scanned = _SCANNED[id(data)] = data, b"pallas" in data, None
    _, pallas, spelled = scanned
    if not through_run and not pallas:
        return False
    if spelled is None:
        spelled = _spells_a_name(data)
        _SCANNED[id(data)] = data, pallas, spelled
    return spelled


def _spells_a_name(raw: bytes) -> bool:
    for part, names in _NAMES_OF:
        first = raw.find(part)
        if first >= 0 and any(raw.find(name, max(0, first - offset)) >= 0 for name, offset in names):
            return True
    return False


# -- The JAX releases each migration needs (read from the wheels of 0.4.35 to 0.12.1) -----------
# A rename is made only when the project's JAX floor (`Settings.target_jax`) is at least the
# release where the new spelling gives the very object the old one gave: below it, the new
# spelling is missing or means something else, and the finding names the release it needs.


#: `semaphore_wait`'s amount: `dec=` up to 0.7.1, `value=` from 0.7.2; by position on every JAX.
WAIT_VALUE_KEYWORD_FROM: tuple[int, ...] = (0, 7, 2)


class Moved(NamedTuple):
    """A `pltpu` name with a new spelling: when JAX deprecated and removed `pltpu`'s, and the
    first release whose new spelling is the very object `pltpu`'s gives (the rename keeps
    meaning; None: no release, so it is reported, never renamed). The new spelling is `pl`'s
    name of the same spelling, or, with `to`, `to` on the module `pltpu`'s name is read from."""

    deprecated: tuple[int, ...] | None  # None: removed without a deprecation
    removed: tuple[int, ...] | None
    same_from: tuple[int, ...] | None
    to: str = ""
    use: str = ""  # what to use instead, for one never renamed


#: `pl.semaphore_*`, `pl.semaphore` and `pl.DeviceIdType` appeared in 0.6.0, imported by both
#: modules from `jax._src.pallas`. `pl.HOST` appeared in 0.7.0, but `pltpu.HOST` was the TPU
#: enum's member (`tpu_core.MemorySpace.HOST`) until 0.10.2 made it `pl.HOST`'s
#: (`_pl_core.MemorySpace.HOST`); 0.11.2 removed it (its message says 0.12.0, its table None).
#: `pltpu.ANY` was the TPU enum's member
#: (`TPUMemorySpace.ANY`, then `MemorySpace.ANY`) until 0.7.1 made it `pl.ANY`
#: (`ANY = GeneralMemorySpace.ANY`, `jax._src.pallas.core.MemorySpace`, in 0.7.1's tpu.py); 0.9.0
#: deprecated it ("use pl.ANY instead"), 0.10.0 removed it.
MOVED_TO_PALLAS: Mapping[str, Moved] = {
    "semaphore_signal": Moved((0, 10, 0), (0, 11, 0), (0, 6, 0)),
    "semaphore_wait": Moved((0, 10, 0), (0, 11, 0), (0, 6, 0)),
    "semaphore_read": Moved((0, 10, 0), (0, 11, 0), (0, 6, 0)),
    "semaphore": Moved((0, 10, 0), (0, 11, 0), (0, 6, 0)),
    "DeviceIdType": Moved((0, 10, 0), (0, 11, 0), (0, 6, 0)),
    "HOST": Moved((0, 10, 0), (0, 11, 2), (0, 10, 2)),
    "ANY": Moved((0, 9, 0), (0, 10, 0), (0, 7, 1)),
}

#: `pltpu.TPUMemorySpace`, the TPU enum (a class up to 0.6.0), became `pltpu.MemorySpace` in
#: 0.6.2, which kept `TPUMemorySpace` as its deprecated alias ("TPUMemorySpace is deprecated,
#: use MemorySpace instead"; `pltpu.MemorySpace` is missing before 0.6.2); 0.7.2 removed it.
#: The enum's own `ANY` member (0.4.35 to 0.8.1, removed in 0.8.2 without a deprecation) is
#: never `pl.ANY` (`GeneralMemorySpace.ANY`, another enum's member), and its `HOST` (0.6.2 to
#: 0.10.1; 0.10.2's deprecation of it is an instance's `__getattr__`, so the class's raises
#: AttributeError) never `pl.HOST`: reported, not renamed.
RENAMED_ON_TPU: Mapping[str, Moved] = {
    "TPUMemorySpace": Moved((0, 6, 2), (0, 7, 2), (0, 6, 2), to="MemorySpace"),
    "TPUMemorySpace.ANY": Moved(None, (0, 7, 2), None, use="pl.ANY"),
    "MemorySpace.ANY": Moved(None, (0, 8, 2), None, use="pl.ANY"),
    "TPUMemorySpace.HOST": Moved(None, (0, 7, 2), None, use="pl.HOST"),
    "MemorySpace.HOST": Moved(None, (0, 10, 2), None, use="pl.HOST"),
}

#: Every public name (or public enum's member) a release removed from `jax.experimental.pallas`
#: or `.tpu` (module path after `jax.`), and whether it is of this family: one that is must be
#: in `TPU_MIGRATIONS`, removed in that very release. tests/test_jax_removals.py compares each
#: release's names, read from its wheel, with the previous release's: a member or an attribute
#: removed without a deprecation (`pltpu.MemorySpace.HOST`) is in no `_deprecations` table.
_REMOVED_OF_THE_FAMILY = ("TPUMemorySpace", "MemorySpace.ANY", "ANY", "MemorySpace.HOST", "DeviceIdType", "HOST")
_REMOVED_ELSEWHERE = (
    *("CostEstimate", "run_scoped", "device_id", "enable_runtime_assert", "runtime_assert_enabled"),
    *("get_memory_space", "TPUCompilerParams", "is_accelerated", "verification", "delay"),
    *("get_pipeline_schedule", "make_pipeline_allocations", "CoreMemorySpace", "KernelType", "repeat"),
    *("core", "create_tensorcore_mesh"),
)
_REMOVED_FROM_PL = (
    *("IndexingMode", "Unblocked", "unblocked", "enable_runtime_assert", "runtime_assert_enabled", "MemoryRef"),
    *(f"atomic_{op}" for op in ("add", "and", "cas", "max", "min", "or", "xchg", "xor")),
    *("load", "max_contiguous", "store", "swap", "MemorySpace.HOST", "debug_checks_enabled", "dot"),
)
REMOVED_FROM_PALLAS: Mapping[str, bool] = {
    **{f"experimental.pallas.{name}": False for name in _REMOVED_FROM_PL},
    **{f"experimental.pallas.tpu.{name}": False for name in _REMOVED_ELSEWHERE},
    **{f"experimental.pallas.tpu.{name}": True for name in _REMOVED_OF_THE_FAMILY},
    **{f"experimental.pallas.tpu.semaphore{end}": True for end in ("", "_read", "_signal", "_wait")},
}

#: The functions whose `device_id_type=` JAX 0.12.0 deprecated ("device_id_type is deprecated
#: and will be removed in a future release."), with `pl.DeviceIdType`. Each defaults to
#: `DeviceIdType.MESH` in every release from 0.4.35 to 0.11 (`device_id_type: DeviceIdType =
#: DeviceIdType.MESH`), and from 0.12.0 to `None`, which the function turns into MESH without a
#: warning: dropping `device_id_type=<...>.DeviceIdType.MESH` keeps the meaning everywhere.
DEVICE_ID_TYPE_FUNCTIONS = frozenset({"semaphore_signal", "make_async_remote_copy", "async_remote_copy"})
#: Those that take it by position too: `(src_ref, dst_ref, send_sem, recv_sem, device_id,
#: device_id_type)` in every release from 0.4.35 to 0.12.1, its last positional parameter, so a
#: call that gives it by position gives it last, and dropping it moves no other argument
#: (`semaphore_signal`'s is keyword-only).
DEVICE_ID_TYPE_POSITION: Mapping[str, int] = {"make_async_remote_copy": 5, "async_remote_copy": 5}
DEVICE_ID_TYPE_DEPRECATED = (0, 12, 0)

#: What JAX deprecated on `pltpu` and later removed, in this family, that `pl` holds: its
#: deprecation tables (`_deprecations` in jax/experimental/pallas/tpu.py) say to use `pl`'s name
#: (0.9.0 for `ANY`, 0.10.0 for the others). A migration rule renames them (`MOVED_TO_PALLAS`).
TPU_MOVED_TO_PALLAS: tuple[str, ...] = tuple(MOVED_TO_PALLAS)
#: Every `pltpu` name the migration renames or reports (its path under `pltpu`), with its new spelling.
TPU_MIGRATIONS: Mapping[str, Moved] = {**MOVED_TO_PALLAS, **RENAMED_ON_TPU}
_TPU_WORDS = sorted({path.rpartition(".")[2] for path in TPU_MIGRATIONS})  # the names they end in
_BLANKS = r"(?:[\s\\]|#[^\r\n]*(?![^\r\n]))+"  # a comment runs to its line's end: no backtracking
#: What a source must spell, every pattern, to refer to one of them: the module `tpu` as a whole
#: word (in an import or an attribute chain), and a name just after a dot or a quote (an attribute,
#: a `getattr` string), or after a dot and blanks, comments or line breaks, or a from-import of the
#: module (`...tpu import`). A variable named `semaphore` alone is none of these. Each pattern
#: starts with a literal, which the regular expression engine scans for fast; a look-behind
#: first would make it try every offset.
MIGRATION_GATE = (
    r"tpu(?<!\wtpu)(?!\w)",
    "|".join(rf"{name}(?!\w)(?<=[.'\"]{name})" for name in _TPU_WORDS)
    + rf"|tpu(?<!\wtpu)[ \t\f]*(?:\\\r?\n[ \t\f]*)*import\b|\.{_BLANKS}(?:{'|'.join(_TPU_WORDS)})(?!\w)",
)
