"""Kernels whose logs people paste into `semfix explain` (issue 44).

Each `*_kernel` is a pallas_call (interpret mode) with one mistake JAX rejects. `launch`
hides the allocations from the engine, as a project's own launcher does; the kernels that
spell their pallas_call show them."""

import contextlib
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import kernelkit

DMA = pltpu.SemaphoreType.DMA
REGULAR = pltpu.SemaphoreType.REGULAR
X = jnp.ones((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def launch(*scratch, inputs=1, outputs=1, memory=ANY, out=None):
    """pallas_call of a kernel copying X, with these scratch shapes."""
    shape = jax.ShapeDtypeStruct(X.shape, X.dtype)
    out = out or memory
    return functools.partial(
        pl.pallas_call,
        out_shape=shape if outputs == 1 else (shape,) * outputs,
        in_specs=[memory] * inputs,
        out_specs=out if outputs == 1 else (out,) * outputs,
        scratch_shapes=list(scratch),
        interpret=True,
    )


# -- section 2: an installed helper, its source not on the machine -------------------------
@launch(DMA((2,)), inputs=2, outputs=2)
def kit(a_ref, b_ref, o_ref, p_ref, sems):
    srcs = kernelkit.pair(a_ref, b_ref)
    kernelkit.start_all(
        pltpu.make_async_copy(srcs[0], o_ref, sems[0]),
        pltpu.make_async_copy(srcs[1], p_ref, sems.at[1]),
    )


def kit_kernel(x):
    return kit(x, x)[1]


# -- section 1: the log proves one fix, the file then proves the next -------------------------
@launch(REGULAR((2,)), memory=pl.BlockSpec())
def sigwait_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    slot = 1
    pl.semaphore_signal(flags[slot], 1)
    pl.semaphore_wait(flags[slot], 1)


# -- section 1: which argument is the value, from pytest's locals --------------------------
@launch(pltpu.VMEM((2, 8, 128), jnp.float32), DMA, out=pl.BlockSpec())
def pick_kernel(x_ref, o_ref, bufs, sem):
    copy = pltpu.make_async_copy(x_ref, bufs[0], sem)
    copy.start()
    copy.wait()
    o_ref[...] = bufs[0]


# -- section 5: a finding silenced by the line's own comment ---------------------------------
@launch(REGULAR((2,)), memory=pl.BlockSpec())
def noqa_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(flags[0], 1)  # noqa: SEM002
    pl.semaphore_wait(flags.at[0], 1)


# -- section 4: descriptors explain must follow ----------------------------------------------
@launch(DMA((2,)))
def when_kernel(x_ref, o_ref, sems):
    copy = pltpu.make_async_copy(x_ref, o_ref, sems[1])

    @pl.when(jnp.int32(0) == 0)
    def _():
        copy.start()
        copy.wait()


@launch(DMA((2,)))
def listed_kernel(x_ref, o_ref, sems):
    copies = [pltpu.make_async_copy(x_ref, o_ref, sems[k]) for k in range(2)]
    for copy in copies:
        copy.start()
        copy.wait()


@contextlib.contextmanager
def copying(src, dst, sem):
    copy = pltpu.make_async_copy(src, dst, sem)
    copy.start()
    yield copy
    copy.wait()


@launch(DMA((2,)))
def ctx_kernel(x_ref, o_ref, sems):
    with copying(x_ref, o_ref, sems[0]):
        pass


@launch(REGULAR((2,)), memory=pl.BlockSpec())
def whole_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(flags, 1)
    pl.semaphore_wait(flags.at[0], 1)


# -- section 4: the names JAX 0.11 removed (SEM101's migration) -----------------------------
@launch(REGULAR((2,)), memory=pl.BlockSpec())
def old_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    pltpu.semaphore_signal(flags.at[0], 1)
    pltpu.semaphore_wait(flags.at[0], 1)


# -- section 4: a list of copies written out, started in one loop and waited on in another --
@launch(DMA, DMA)
def loops_kernel(x_ref, o_ref, first, second):
    copies = [pltpu.make_async_copy(x_ref, o_ref, first), pltpu.make_async_copy(x_ref, o_ref, second[()])]
    for copy in copies:
        copy.start()
    for copy in copies:
        copy.wait()


# -- section 4: the copy's arguments unpacked by a loop from a tuple written out ----------------
@launch(DMA, DMA((2,)))
def unpacked_kernel(x_ref, o_ref, sem, sems):
    for src, dst, each in ((x_ref, o_ref, sem), (x_ref, o_ref, sems.at[1][()])):
        copy = pltpu.make_async_copy(src, dst, each)
        copy.start()
        copy.wait()


# -- section 4: an installed helper's caller: which of its arguments the error is about -------
@launch(REGULAR((2,)), memory=pl.BlockSpec())
def handed_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    kernelkit.signal_wait(flags, flags[1])


@launch(REGULAR((2,)), memory=pl.BlockSpec())
def keyword_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    kernelkit.signal_wait(flags, sem=flags[1])


@launch(DMA((2,)))
def copied_kernel(x_ref, o_ref, sems):
    kernelkit.copy_one(x_ref, o_ref, sems[1])
