"""Runs one kernel of helperlib.kernels in interpret mode: `python -m helperlib.run direct_kernel`."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from helperlib import kernels

x = jnp.ones((8, 128), jnp.float32)
spec = pl.BlockSpec(memory_space=pl.ANY)
print(pl.pallas_call(getattr(kernels, sys.argv[1]), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    in_specs=[spec], out_specs=spec, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))], interpret=True)(x)[0, 0])
