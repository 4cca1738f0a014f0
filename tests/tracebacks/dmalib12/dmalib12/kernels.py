"""Kernels whose DMAs JAX 0.12 rejects with its split texts; the pallas_calls live in run.py."""
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def list_kernel(src, dst, sem_list):
    copy = pltpu.make_async_copy(src[...], dst, sem_list[0])
    copy.start()
    copy.wait()


def array_kernel(src, dst, sems):
    copy = pltpu.make_async_copy(src.at[0:4], dst.at[0:4], sems[1])
    copy.start()
    copy.wait()


def read_sem_kernel(src, dst, sems):
    copy = pltpu.make_async_copy(src, dst, sems.at[0], src_sem=sems[1])
    copy.start()
    copy.wait()


def wait_read_kernel(src, dst, sems):
    pltpu.make_async_copy(src, dst, sems.at[0], src_sem=sems.at[1]).start()
    pltpu.make_async_copy(src, dst, sems.at[0], src_sem=sems[1]).wait()


def remote_kernel(src, dst, send_sems, recv_sems):
    copy = pltpu.make_async_remote_copy(src, dst, send_sems.at[0], recv_sems[0], device_id=0)
    copy.start()
    copy.wait()


def both_read_kernel(src, dst, sem):
    pltpu.async_copy(src[...], dst, sem[...]).wait()
    pl.semaphore_read(sem)
