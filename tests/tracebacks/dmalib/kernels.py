"""Kernels whose DMA and semaphore calls JAX rejects; the pallas_calls live in run.py."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def list_kernel(src, dst, sem_list):
    copy = pltpu.make_async_copy(src[...], dst, sem_list[0])
    copy.start()
    copy.wait()


def both_read_kernel(src, dst, sem):
    pltpu.async_copy(src[...], dst, sem[...]).wait()


def array_kernel(src, dst, sems):
    copy = pltpu.make_async_copy(src.at[0:4], dst.at[0:4], sems[1])
    copy.start()
    copy.wait()


def remote_kernel(src, dst, send_sems, recv_sems):
    copy = pltpu.make_async_remote_copy(
        src, dst, send_sems[0], recv_sems.at[0], device_id=0,
        device_id_type=pltpu.DeviceIdType.LOGICAL,
    )
    copy.start()
    copy.wait()


def signal_kernel(src, dst, flags):
    pl.semaphore_signal(flags[0], 1)
    pl.semaphore_wait(flags[0], 1)
    dst[...] = src[...]


def wait_kernel(src, dst, sems):
    pltpu.make_async_copy(src, dst, sems.at[0]).start()
    pltpu.make_async_copy(src, dst, sems[0]).wait()


def carried_kernel(src, dst, flags):
    flag = flags.at[1][...]
    pl.semaphore_signal(flag, 1)
    pl.semaphore_wait(flag, 1)
    dst[...] = src[...]


def carried_dma_kernel(src, dst, sems):
    sem = sems.at[0][...]
    copy = pltpu.make_async_copy(src, dst, sem)
    copy.start()
    copy.wait()


def commented_kernel(src, dst, flags):
    flag = flags.at[0][...]  # this core's flag
    pl.semaphore_signal(flag, 1)
    pl.semaphore_wait(flag, 1)
    dst[...] = src[...]
