"""Runs kernels of dmalib12.kernels one after another, as a benchmark sweep does, and raises
every failure at the end in one ExceptionGroup: `python -m dmalib12.sweep array_kernel remote_kernel`."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from dmalib12 import kernels

DMA = pltpu.SemaphoreType.DMA
SCRATCH = {"array_kernel": [DMA((2,))], "remote_kernel": [DMA((1,)), DMA((1,))]}


def run(name):
    x = jnp.ones((8, 128), jnp.float32)
    spec = pl.BlockSpec(memory_space=pl.ANY)
    call = pl.pallas_call(
        getattr(kernels, name),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[spec],
        out_specs=spec,
        scratch_shapes=SCRATCH[name],
        interpret=True,
    )
    return call(x)


failures = []
for name in sys.argv[1:]:
    try:
        run(name)
    except ValueError as error:
        failures.append(error)
if failures:
    raise ExceptionGroup(f"{len(failures)} of {len(sys.argv) - 1} kernels failed", failures)
