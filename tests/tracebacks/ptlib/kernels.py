"""Kernels with semaphore mistakes; ptlib/check_kernels.py runs them under pytest to make the stored logs."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ping_kernel(x_ref, o_ref, flags):
    pl.semaphore_signal(flags[1], 2)
    pl.semaphore_wait(flags[1], 2)
    o_ref[...] = x_ref[...] * 2.0


def drain_kernel(x_hbm, o_hbm, sems):
    pltpu.make_async_copy(x_hbm, o_hbm, sems.at[1]).start()
    pltpu.make_async_copy(x_hbm, o_hbm, sems[1]).wait()
