"""Runs the kernels as a project's own tests would (the Mosaic GPU ones need absl-py). The stored logs: `pytest --tb=short` and `--tb=long` on this file, pytest_color.log: `--tb=short --color=yes -k "ping or drain"`, and gpu_copy.log: `python -c "from ptlib import check_kernels as c; c.test_gpu(NAME)"`."""
import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from ptlib import kernels

X = jnp.ones((8, 128), jnp.float32)


def run_tpu(kernel, scratch, memory_space=None):
    spec = {} if memory_space is None else {"in_specs": [pl.BlockSpec(memory_space=memory_space)], "out_specs": pl.BlockSpec(memory_space=memory_space)}
    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype), scratch_shapes=scratch, interpret=True, **spec)
    return call(X)


def test_ping():
    assert run_tpu(kernels.ping_kernel, [pltpu.SemaphoreType.REGULAR((2,))])[0, 0] == 2.0


def test_drain():
    assert run_tpu(kernels.drain_kernel, [pltpu.SemaphoreType.DMA((2,))], pl.ANY)[0, 0] == 1.0


@pytest.mark.parametrize("name", ["stage_kernel", "flush_kernel", "relay_kernel"])
def test_gpu(name):
    from jax.experimental.pallas import mosaic_gpu as plgpu
    from ptlib import gpu

    gmem = pl.BlockSpec(memory_space=plgpu.GMEM)
    call = pl.pallas_call(getattr(gpu, name), out_shape=jax.ShapeDtypeStruct(X.shape, X.dtype), in_specs=[gmem], out_specs=gmem,
                          scratch_shapes=[plgpu.SMEM(X.shape, X.dtype), plgpu.Barrier(num_arrivals=1, num_barriers=2)],
                          compiler_params=plgpu.CompilerParams())
    jax.eval_shape(call, X)
