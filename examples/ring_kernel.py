"""A small Pallas TPU kernel with the mistakes semfix fixes (run `semfix fix --diff examples/`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def shift_kernel(x_hbm, out_hbm, staging, copy_sem, ready_sems):
    # Bug: `copy_sem[...]` reads the semaphore's count; the DMA needs the Ref itself.
    load = pltpu.make_async_copy(x_hbm, staging, copy_sem[...])
    load.start()
    load.wait()
    staging[...] = staging[...] * 2.0
    # Bug: `ready_sems.at[0][...]` reads the view; pass the view `ready_sems.at[0]`.
    pl.semaphore_signal(ready_sems.at[0][...], 1)
    pl.semaphore_wait(ready_sems.at[0], 1)  # already right: left alone
    store = pltpu.make_async_copy(staging, out_hbm, copy_sem)
    store.start()
    store.wait()


def shift(x: jax.Array) -> jax.Array:
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(
        shift_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[anywhere],
        out_specs=anywhere,
        scratch_shapes=[
            pltpu.VMEM(x.shape, x.dtype),
            pltpu.SemaphoreType.DMA,
            pltpu.SemaphoreType.REGULAR((2,)),
        ],
        interpret=True,
    )(x)


if __name__ == "__main__":
    print(shift(jnp.ones((8, 128), jnp.float32))[0, :4])
