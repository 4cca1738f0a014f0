"""Kernels of a serving package kept, as tpu-inference keeps its own, under `layers/jax/`: each
fails as issue 31 found explain misreading a log. Their pallas_calls are in run.py, but for
`helper_wait_kernel`'s, whose allocation this file must show (`run_helper_wait`)."""
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def signal_kernel(x_ref, o_ref, flags):
    pl.semaphore_signal(flags[0], 1)
    pl.semaphore_wait(flags.at[0], 1)
    o_ref[...] = x_ref[...]


def reraise_kernel(x_ref, o_ref, sems):  # run.py raises its error again, as a serving stack's wrapper
    copy = pltpu.make_async_copy(x_ref, o_ref, sems[1])
    copy.start()
    copy.wait()


def rows_kernel(x_ref, o_ref, flags):  # flags: REGULAR((2, 2)), so flags[stage] is a row
    stage = pl.program_id(0)
    pl.semaphore_signal(flags[stage], 1)
    pl.semaphore_wait(flags.at[stage, 0], 1)
    o_ref[...] = x_ref[...]


def captured_kernel(x_ref, o_ref, sems):  # sems: a tuple of two DMA semaphores
    doubled = x_ref[...] * 2

    @pl.when(pl.program_id(0) == 0)
    def _():
        copy = pltpu.make_async_copy(doubled, o_ref, sems[0])
        copy.start()
        copy.wait()


def _copy(src, dst, sem):
    return pltpu.make_async_copy(src, dst, sem)


def helper_wait_kernel(x_ref, o_ref, flags):
    copy = _copy(x_ref, o_ref, flags.at[0])
    copy.start()
    copy.wait()


def run_helper_wait(x, interpret=False):
    return pl.pallas_call(
        helper_wait_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
        interpret=interpret,
    )(x)


def _drain(done):  # a read no run has reached yet: `semfix check` finds it
    pl.semaphore_wait(done[...], 1)
