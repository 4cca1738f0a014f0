"""Runs one kernel of dmalib.kernels in interpret mode: `python -m dmalib.run list_kernel`; makes the stored logs."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from dmalib import kernels

DMA = pltpu.SemaphoreType.DMA
SCRATCH = {
    "list_kernel": [[DMA, DMA]],
    "both_read_kernel": [DMA],
    "array_kernel": [DMA((2,))],
    "remote_kernel": [DMA((1,)), DMA((1,))],
    "signal_kernel": [pltpu.SemaphoreType.REGULAR((2,))],
    "wait_kernel": [DMA((2,))],
    "carried_kernel": [pltpu.SemaphoreType.REGULAR((2,))],
    "carried_dma_kernel": [DMA((2,))],
    "commented_kernel": [pltpu.SemaphoreType.REGULAR((2,))],
}
COPIES_IN_KERNEL = {"signal_kernel", "carried_kernel", "commented_kernel"}
name = sys.argv[1]
x = jnp.ones((8, 128), jnp.float32)
spec = pl.BlockSpec(memory_space=pl.ANY)
print(pl.pallas_call(
    getattr(kernels, name),
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    **({} if name in COPIES_IN_KERNEL else {"in_specs": [spec], "out_specs": spec}),
    scratch_shapes=SCRATCH[name],
    interpret=True,
)(x)[0, 0])
