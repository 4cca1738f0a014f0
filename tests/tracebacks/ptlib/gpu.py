"""Mosaic GPU kernels with Ref mistakes; run under pytest by ptlib/check_kernels.py."""
from jax.experimental.pallas import mosaic_gpu as plgpu


def stage_kernel(x_gmem, o_gmem, buf, bars):
    plgpu.copy_gmem_to_smem(x_gmem, buf, bars[0])
    plgpu.barrier_wait(bars.at[0])
    plgpu.copy_smem_to_gmem(buf, o_gmem)


def flush_kernel(x_gmem, o_gmem, buf, bars):
    plgpu.copy_gmem_to_smem(x_gmem, buf, bars.at[0])
    plgpu.barrier_wait(bars.at[0])
    plgpu.copy_smem_to_gmem(buf[...], o_gmem)


def relay_kernel(x_gmem, o_gmem, buf, bars):
    plgpu.copy_gmem_to_smem(x_gmem[...], buf, bars[0])
    plgpu.barrier_wait(bars.at[0])
    plgpu.copy_smem_to_gmem(buf, o_gmem)
