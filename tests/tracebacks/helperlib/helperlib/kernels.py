"""Kernels that route their DMAs through a local helper, as ragged and paged attention kernels do."""
from jax.experimental.pallas import tpu as pltpu


def _async_copy(src, dst, sem, wait):
    copy = pltpu.make_async_copy(src, dst, sem)
    copy.start()
    if wait:
        copy.wait()


def direct_kernel(src, dst, sems):
    _async_copy(src, dst, sems[1], True)


def carried_kernel(src, dst, sems):
    sem = sems[1]
    _async_copy(src, dst, sem, True)
