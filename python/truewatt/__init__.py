"""truewatt: the energy of your code on the GPU, measured inside the program.

A thin Python layer over libtruewatt's C API (include/truewatt.h): a
:class:`Monitor` samples the GPUs' power sensors on a background thread and
corrects each reading by its sensor's model; windows (begin/end, a context
manager, a decorator) give the energy of a block of code per GPU, with its
uncertainty and the split into baseline and above-baseline energy;
:func:`measure` measures short code by repetition; :func:`read_run` reads a
``truewatt run`` file into pandas; :mod:`truewatt.torch` marks PyTorch
training steps, forward and backward passes.

>>> import truewatt
>>> mon = truewatt.Monitor()                                  # doctest: +SKIP
>>> with mon.window("step") as w:                             # doctest: +SKIP
...     train_step()
>>> m = w.measurement                                         # doctest: +SKIP
>>> print(f"{m.time_s:.3f} s {m.energy_j[0]:.1f} J +- {m.energy_sd_j[0]:.1f}")  # doctest: +SKIP
"""

from __future__ import annotations

from ._lib import Error, lib, text
from .measure import MeasureResult, measure
from .monitor import Device, Kernel, Measurement, Monitor, PerGpu, Window, default_monitor, window
from .runfile import Run, read_run

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("truewatt")
except PackageNotFoundError:  # a source tree on sys.path, not installed
    __version__ = "0+unknown"

__all__ = [
    "Device",
    "Kernel",
    "Error",
    "Measurement",
    "MeasureResult",
    "Monitor",
    "PerGpu",
    "Run",
    "Window",
    "default_monitor",
    "library_version",
    "measure",
    "read_run",
    "window",
]


def library_version() -> str:
    """The version of the loaded libtruewatt (``tw_version``)."""
    return text(lib.tw_version())
