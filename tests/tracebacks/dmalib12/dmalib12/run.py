"""Runs one kernel of dmalib12.kernels in interpret mode: `python -m dmalib12.run list_kernel`."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from dmalib12 import kernels

DMA = pltpu.SemaphoreType.DMA
SCRATCH = {
    "list_kernel": [[DMA, DMA]],
    "array_kernel": [DMA((2,))],
    "read_sem_kernel": [DMA((2,))],
    "wait_read_kernel": [DMA((2,))],
    "remote_kernel": [DMA((1,)), DMA((1,))],
    "both_read_kernel": [DMA],
}
name = sys.argv[1]
x = jnp.ones((8, 128), jnp.float32)
spec = pl.BlockSpec(memory_space=pl.ANY)
print(pl.pallas_call(
    getattr(kernels, name),
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    in_specs=[spec],
    out_specs=spec,
    scratch_shapes=SCRATCH[name],
    interpret=True,
)(x)[0, 0])
