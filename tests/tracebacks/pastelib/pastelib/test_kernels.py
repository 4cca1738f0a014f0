"""The kernels as a project's tests run them (`pytest --tb=long`, `--tb=line`)."""

from pastelib import kernels


def test_pick():
    assert kernels.pick_kernel(kernels.X)[0, 0] == 1.0


def test_sigwait():
    assert kernels.sigwait_kernel(kernels.X)[0, 0] == 1.0


def test_handed():
    assert kernels.handed_kernel(kernels.X)[0, 0] == 1.0


def test_copied():
    assert kernels.copied_kernel(kernels.X)[0, 0] == 1.0
