from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_hbm, send_sems, recv_sems):
    copy = pltpu.make_async_remote_copy(
        x_hbm, o_hbm, send_sems[0], recv_sems[0], device_id=(1,)
    )
    copy.start()
    if o_hbm is not None:
        pl.semaphore_wait(recv_sems.at[1], 1)
    copy.wait()


def flag_kernel(flags, other):
    pl.semaphore_wait(other[0], 1)
    pl.semaphore_signal(flags[1], 1)
    pl.semaphore_wait(flags[1], 1)
