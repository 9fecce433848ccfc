"""``truewatt.measure``: the energy of one call of short code.

The C library runs the callable back to back, phase-shifted against the
sensor's updates (the method of ``truewatt measure-kernel``), until the
energy per call is known to the requested precision or the time budget is
spent. The Python callable reaches C through a ctypes callback.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import _lib
from ._lib import check, lib
from .monitor import Monitor, default_monitor

__all__ = ["MeasureResult", "measure"]


@dataclass(frozen=True)
class MeasureResult:
    """Per call of the measured code: ``time_s``, ``energy_j`` (with its
    uncertainty ``energy_sd_j``), the power it adds above the GPU's baseline,
    and how many calls the measurement took."""

    time_s: float
    energy_j: float
    energy_sd_j: float
    power_above_baseline_w: float
    calls: int

    @property
    def relative_sd(self) -> float:
        """``energy_sd_j / energy_j``: the precision reached."""
        return self.energy_sd_j / self.energy_j if self.energy_j else float("inf")


def measure(
    fn: Callable[..., Any],
    *args: Any,
    precision: float = 0.02,
    budget_s: Optional[float] = None,
    device: int = 0,
    block_s: Optional[float] = None,
    monitor: Optional[Monitor] = None,
    **kwargs: Any,
) -> MeasureResult:
    """Measures ``fn(*args, **kwargs)`` on the monitor's GPU number ``device``
    until the energy per call is known to ``precision`` (relative standard
    uncertainty) or ``budget_s`` seconds are spent (None: the library's
    default, 30 s). ``block_s`` is the length of each block of back-to-back
    calls (None: the library's default, 1 s).

    ``fn`` should wait for its GPU work to finish (e.g. end with
    ``torch.cuda.synchronize()``), so that each call's energy is its own. An
    exception in ``fn`` (Ctrl-C's KeyboardInterrupt included) is raised here;
    the library cannot be stopped from inside ``fn``, so after the first
    exception the remaining calls of the current round return at once and
    ``measure`` raises when the library returns (a round is ~11 s).

    >>> import torch, truewatt                                    # doctest: +SKIP
    >>> a = torch.randn(4096, 4096, device="cuda")                # doctest: +SKIP
    >>> def mm():                                                 # doctest: +SKIP
    ...     a @ a
    ...     torch.cuda.synchronize()
    >>> r = truewatt.measure(mm, precision=0.01)                  # doctest: +SKIP
    >>> print(f"{r.energy_j * 1e3:.2f} mJ per call, {r.time_s * 1e6:.0f} us")  # doctest: +SKIP
    """
    mon = monitor or default_monitor()
    failure: list = []
    cancel = ctypes.c_int(0)

    def call(_arg: Optional[int]) -> None:
        # an exception cannot cross the C frames: keep it, cancel the
        # measurement (the library stops before its next call), raise it once
        # tw_measure returns
        if failure:
            return
        try:
            fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - re-raised below, KeyboardInterrupt included
            failure.append(e)
            cancel.value = 1

    cb = _lib.MEASURE_FN(call)  # kept alive by this frame until tw_measure returns
    opts = _lib.MeasureOptions()
    lib.tw_measure_options_init(ctypes.byref(opts))
    opts.size = ctypes.sizeof(opts)
    opts.precision = precision
    if budget_s is not None:
        opts.budget_s = budget_s
    if block_s is not None:
        opts.block_s = block_s
    opts.device = device
    opts.cancel = ctypes.pointer(cancel)
    res = _lib.MeasureResult()
    res.size = ctypes.sizeof(res)
    status = lib.tw_measure(mon._handle(), cb, None, ctypes.byref(opts), ctypes.byref(res))
    if failure:
        raise failure[0]
    check(status, "tw_measure")
    return MeasureResult(res.time_s, res.energy_j, res.energy_sd_j, res.power_above_baseline_w, int(res.calls))
