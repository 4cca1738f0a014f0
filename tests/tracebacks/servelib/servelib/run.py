"""Runs one kernel of servelib.layers.jax.kernels in interpret mode: `python -m servelib.run signal_kernel`.
`reraise_kernel`'s error is caught and raised again, as serving stacks wrap a kernel's failure."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from servelib.layers.jax import kernels

DMA, REGULAR = pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR
SCRATCH = {
    "signal_kernel": [REGULAR((2,))],
    "reraise_kernel": [DMA((2,))],
    "rows_kernel": [REGULAR((2, 2))],
    "captured_kernel": [[DMA, DMA]],
}


def run(name, x):
    if name not in SCRATCH:  # a kernel whose pallas_call is in kernels.py
        return getattr(kernels, "run_" + name.removesuffix("_kernel"))(x, interpret=True)
    return pl.pallas_call(
        getattr(kernels, name),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(1,),
        scratch_shapes=SCRATCH[name],
        interpret=True,
    )(x)


name = sys.argv[1]
x = jnp.ones((8, 128), jnp.float32)
try:
    out = run(name, x)
except ValueError as err:
    if name != "reraise_kernel":
        raise
    raise RuntimeError(f"kernel failed: {err}") from err
print(out[0, 0])
