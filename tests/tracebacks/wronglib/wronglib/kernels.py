"""Kernels explain once fixed wrongly or blamed wrongly (issue 35, items 15 to 17).

Each `*_kernel` is a pallas_call (interpret mode) with one mistake JAX rejects; the others
here (`paired`) are right and must stay so after explain's fix. Where the engine must see
the allocation, the kernel spells its pallas_call; `launch` hides it from the engine."""
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from ringhelp import copy_half

DMA = pltpu.SemaphoreType.DMA
REGULAR = pltpu.SemaphoreType.REGULAR
X = jnp.ones((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)
FIRST = True


def launch(*scratch):
    """pallas_call of a kernel copying X, with these scratch shapes."""
    return functools.partial(
        pl.pallas_call,
        out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype),
        in_specs=[ANY],
        out_specs=ANY,
        scratch_shapes=list(scratch),
        interpret=True,
    )


# -- item 15: the proof by elimination ------------------------------------------------------
def _copy_slot(src, dst, sems, slot):
    copy = pltpu.make_async_copy(src, dst, sems[slot])
    copy.start()
    copy.wait()


@launch((DMA, DMA))
def scaled_kernel(x_ref, o_ref, sems):
    _copy_slot(x_ref[...] * 2.0, o_ref, sems, 1)  # the value is the mistake; sems[1] is a Ref


class Pair(NamedTuple):
    src: Any
    dst: Any


def _move(refs, sems, slot):
    copy = pltpu.make_async_copy(refs.src, refs.dst, sems[slot])
    copy.start()
    copy.wait()


@launch((DMA, DMA))
def named_kernel(x_ref, o_ref, sems):
    _move(Pair(x_ref[...] + 1.0, o_ref), sems, 0)  # the field holds a value


@launch(DMA((2,)))
def shared_kernel(x_ref, o_ref, sems):
    _copy_slot(x_ref, o_ref, sems, 1)  # sems[1] reads one semaphore: the mistake


@launch((DMA, DMA))
def paired(x_ref, o_ref, sems):
    _copy_slot(x_ref, o_ref, sems, 1)  # the same helper given a tuple: sems[1] is right here


@launch(REGULAR((2,)), (REGULAR, REGULAR))
def cond_kernel(x_ref, o_ref, flags, peer_ready):
    o_ref[...] = x_ref[...]
    lax.cond(
        x_ref[0, 0] > 0,
        lambda: pl.semaphore_signal(flags[0], 1),
        lambda: pl.semaphore_signal(peer_ready[1], 1),
    )


@launch((REGULAR((2,)), REGULAR((2,))))
def stages_kernel(x_ref, o_ref, flags):
    o_ref[...] = x_ref[...]
    stage = 0
    pl.semaphore_signal(flags[stage], 1)  # a tuple's array: a Ref of shape (2,)


# -- item 16: the wrong call blamed ---------------------------------------------------------
@launch(DMA((2,)))
def branch_kernel(x_ref, o_ref, sems):
    if FIRST:
        copy = pltpu.make_async_copy(x_ref, o_ref, sems[0])
    else:
        copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[1])
    copy.start()
    copy.wait()


@launch(DMA((2,)))
def loop_kernel(x_ref, o_ref, sems):
    copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[0])
    for _ in range(2):
        copy.start()
        copy.wait()
        copy = pltpu.make_async_copy(x_ref, o_ref, sems[1])


@functools.partial(
    pl.pallas_call,
    out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype),
    in_specs=[ANY],
    out_specs=ANY,
    scratch_shapes=[pltpu.SemaphoreType.DMA((2, 2))],
    interpret=True,
)
def rows_kernel(x_ref, o_ref, sems):
    copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[0])
    copy.start()
    copy.wait()


@functools.partial(
    pl.pallas_call,
    out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype),
    in_specs=[ANY],
    out_specs=ANY,
    scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
    interpret=True,
)
def closure_kernel(x_ref, o_ref, sems):
    def fetch(slot):
        return pltpu.make_async_copy(x_ref, o_ref, sems.at[slot])

    copy = fetch(1)
    copy.start()
    copy.wait()


# -- item 17: an installed helper ----------------------------------------------------------
@launch(DMA((2,)))
def installed_kernel(x_ref, o_ref, sems):
    half = 1
    copy_half(x_ref, o_ref, sems[half])
