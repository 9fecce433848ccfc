"""Energy windows inside a program: :class:`Monitor`, :class:`Measurement`.

A Monitor is a libtruewatt session: it opens the GPUs and samples them on a
background thread of the C library from the moment it is created. A window
is a region of that session: it begins and ends by name, windows nest, and
any thread may open one.

>>> import truewatt
>>> with truewatt.Monitor() as mon:             # doctest: +SKIP
...     mon.begin_window("step")
...     train_step()
...     m = mon.end_window("step")
...     print(f"{m.time_s:.3f} s, {m.total_energy_j:.1f} J")
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from . import _lib
from ._lib import EINVAL, Error, check, encode, lib, text

__all__ = ["Device", "Kernel", "Measurement", "Monitor", "PerGpu", "Window", "default_monitor", "window"]

F = TypeVar("F", bound=Callable[..., Any])
PathLike = Union[str, "os.PathLike[str]"]


class PerGpu(Dict[str, Any]):
    """A value per GPU: a dict keyed by the GPU's UUID that also takes the GPU's
    position in the monitor (0, 1, ...) as a key.

    >>> v = PerGpu({"GPU-a": 1.5, "GPU-b": 2.0})
    >>> v["GPU-b"], v[0], sum(v.values())
    (2.0, 1.5, 3.5)
    """

    def __getitem__(self, key: Union[str, int]) -> Any:  # type: ignore[override]
        if isinstance(key, int) and not isinstance(key, bool):
            try:
                key = list(self.keys())[key]
            except IndexError:
                raise KeyError(key) from None
        return super().__getitem__(str(key))


@dataclass(frozen=True)
class Device:
    """A GPU the monitor samples (from ``tw_session_device``)."""

    index: int
    uuid: str
    name: str
    driver: str
    arch: int
    power_limit_w: float


@dataclass(frozen=True)
class Kernel:
    """One kernel name inside a window on one GPU (a Monitor with ``trace_kernels``):
    its launches' part inside the window and the energy they drew above the
    GPU's baseline (``status``: ``ok``; ``below_resolution``, where
    ``energy_j + 2 energy_sd_j`` bounds it; ``at_power_bound``, where the fit
    held its power at the bound on each name's power and ``energy_j`` is the
    most the model can give it (its true energy likely more); ``grouped``
    (``group`` names the names the readings cannot tell apart; their energy is
    in :attr:`Measurement.kernels_j`) or ``unobserved``, where ``energy_j`` is NaN)."""

    name: str
    gpu: str
    launches: int
    time_s: float
    energy_j: float
    energy_sd_j: float
    status: str
    group: Optional[str] = None  # grouped: the group's label (its energy is in kernels_j)


_FIELDS = ("energy_j", "energy_sd_j", "baseline_j", "above_baseline_j", "kernels_j", "kernels_model_j")
# guards a Measurement's move from its C region to Python values (rare, short: one lock for all
# Measurements keeps end_window cheap)
_resolve_lock = threading.Lock()


class Measurement:
    """The result of one window, per GPU (keyed by UUID, or by position: ``m.energy_j[0]``).

    ``energy_j`` is the energy by the best reading's model, ``energy_sd_j`` its
    standard uncertainty, ``baseline_j`` the part the GPU would have used idle
    over the window and ``above_baseline_j`` the rest (what the code added);
    ``reading`` names the sensor reading the energy came from; ``start_s``
    and ``end_s`` are the window's edges on the monitor's timeline (seconds
    since it opened).

    ``name``, ``time_s``, ``start_s`` and ``end_s`` are known when the window
    ends; the energies need the sensor's readings past its end (a GPU reports
    late: up to ~1 s), so ``end_window`` does not wait for them: the first
    access to an energy does (at most the monitor's ``wait_timeout_s``, then
    :class:`Error`), or :meth:`wait`. A training loop that keeps its
    Measurements and reads them later is never held up.

    >>> m = Measurement("step", 0.5, energy_j={"GPU-a": 150.0}, energy_sd_j={"GPU-a": 1.0},
    ...                 baseline_j={"GPU-a": 60.0}, above_baseline_j={"GPU-a": 90.0})
    >>> m.total_energy_j, round(m.power_w["GPU-a"], 1), m.energy_j[0]
    (150.0, 300.0, 150.0)
    """

    __slots__ = ("name", "_region", "_timeout_s", "_values", "_edges", "__weakref__")

    def __init__(
        self,
        name: str,
        time_s: float,
        start_s: float = float("nan"),
        end_s: float = float("nan"),
        reading: Optional[Dict[str, str]] = None,
        _region: Optional[ctypes.c_void_p] = None,
        _timeout_s: float = 30.0,
        **per_gpu: Dict[str, float],
    ) -> None:
        self.name = name
        self._region = _region
        self._timeout_s = _timeout_s
        self._values: Optional[Dict[str, Any]] = None
        self._edges: Optional[Tuple[float, float, float]] = None
        if _region is None:
            self._edges = (time_s, start_s, end_s)
            self._values = {k: PerGpu(per_gpu.get(k, {})) for k in _FIELDS}
            self._values["reading"] = PerGpu(reading or {})
            self._values["kernels"] = []

    @classmethod
    def _of_region(cls, name: str, region: ctypes.c_void_p, timeout_s: float) -> "Measurement":
        """A Measurement that owns an ended region: everything is read from it at first use, so
        that end_window costs one C call and this object."""
        return cls(name, 0.0, _region=region, _timeout_s=timeout_s)

    def _edges_get(self) -> Tuple[float, float, float]:
        with _resolve_lock:
            if self._edges is None:
                r = self._region
                self._edges = (lib.tw_region_time_s(r), lib.tw_region_start_s(r), lib.tw_region_end_s(r))
            return self._edges

    @property
    def time_s(self) -> float:
        """The window's length (s)."""
        return self._edges_get()[0]

    @property
    def start_s(self) -> float:
        """The window's begin on the monitor's timeline (s since it opened)."""
        return self._edges_get()[1]

    @property
    def end_s(self) -> float:
        """The window's end on the monitor's timeline."""
        return self._edges_get()[2]

    def wait(self, timeout_s: Optional[float] = None) -> "Measurement":
        """Waits until the energies are known (``timeout_s``: default the
        monitor's ``wait_timeout_s``; :class:`Error` when it passes)."""
        self._get(timeout_s)
        return self

    def _get(self, timeout_s: Optional[float] = None) -> Dict[str, Any]:
        if self._values is not None:
            return self._values
        self._edges_get()
        region = self._region
        if region is not None:  # the wait outside the lock: other threads' Measurements go on
            wait = self._timeout_s if timeout_s is None else timeout_s
            check(lib.tw_region_wait(region, ctypes.c_double(wait)), "tw_region_wait")
        with _resolve_lock:
            if self._values is None:
                assert self._region is not None  # values or a region, always one of them
                self._values = _region_values(self._region)
                lib.tw_region_free(self._region)
                self._region = None
            return self._values

    @property
    def energy_j(self) -> PerGpu:
        return self._get()["energy_j"]

    @property
    def energy_sd_j(self) -> PerGpu:
        return self._get()["energy_sd_j"]

    @property
    def baseline_j(self) -> PerGpu:
        return self._get()["baseline_j"]

    @property
    def above_baseline_j(self) -> PerGpu:
        return self._get()["above_baseline_j"]

    @property
    def reading(self) -> PerGpu:
        return self._get()["reading"]

    @property
    def kernels(self) -> List[Kernel]:
        """The kernel names inside the window, each GPU's largest energy first
        (a Monitor with ``trace_kernels``; else empty)."""
        return self._get()["kernels"]

    @property
    def kernels_j(self) -> PerGpu:
        """Per GPU, the sum of its kernel names' energies (NaN without ``trace_kernels``)."""
        return self._get()["kernels_j"]

    @property
    def kernels_model_j(self) -> PerGpu:
        """Per GPU, :attr:`kernels_j` plus the estimator's baseline over the window: it
        agrees with :attr:`energy_j` within their uncertainty (NaN without ``trace_kernels``)."""
        return self._get()["kernels_model_j"]

    @property
    def total_energy_j(self) -> float:
        """The energy summed over the GPUs."""
        return float(sum(self.energy_j.values()))

    @property
    def total_energy_sd_j(self) -> float:
        """The uncertainty of :attr:`total_energy_j` (GPUs' errors independent)."""
        return float(sum(v * v for v in self.energy_sd_j.values()) ** 0.5)

    @property
    def power_w(self) -> PerGpu:
        """Mean power per GPU over the window."""
        return PerGpu({k: (e / self.time_s if self.time_s > 0 else float("nan")) for k, e in self.energy_j.items()})

    def __del__(self) -> None:
        region = getattr(self, "_region", None)
        if region:
            try:
                lib.tw_region_free(region)
            except Exception:
                pass

    def __repr__(self) -> str:
        if self._values is None:
            return f"<Measurement {self.name!r} {self.time_s:.6f} s, energies pending>"
        e = ", ".join(f"{k}: {v:.6g} J" for k, v in self._values["energy_j"].items())
        return f"<Measurement {self.name!r} {self.time_s:.6f} s, {e}>"


def _region_values(region: ctypes.c_void_p) -> Dict[str, Any]:
    """A complete tw_region's results per device."""
    values: Dict[str, Any] = {k: PerGpu() for k in _FIELDS}
    values["reading"] = PerGpu()
    uuids: List[str] = []
    for d in range(lib.tw_region_device_count(region)):
        rd = _lib.RegionDevice()
        rd.size = ctypes.sizeof(rd)
        check(lib.tw_region_device_get(region, d, ctypes.byref(rd)), "tw_region_device_get")
        uuid = text(rd.uuid) or str(d)
        for k in _FIELDS:
            values[k][uuid] = float(getattr(rd, k))
        values["reading"][uuid] = text(rd.reading)
        uuids.append(uuid)
    kernels: List[Kernel] = []
    for i in range(lib.tw_region_kernel_count(region)):
        rk = _lib.RegionKernel()
        rk.size = ctypes.sizeof(rk)
        check(lib.tw_region_kernel_get(region, i, ctypes.byref(rk)), "tw_region_kernel_get")
        gpu = uuids[rk.device] if rk.device < len(uuids) else str(rk.device)
        kernels.append(
            Kernel(text(rk.name), gpu, int(rk.launches), rk.time_s, rk.energy_j, rk.energy_sd_j, text(rk.status),
                   text(rk.group) if rk.group else None)
        )
    values["kernels"] = kernels
    return values


class Window(contextlib.ContextDecorator):
    """A named window of a :class:`Monitor`, as a context manager or a decorator.

    After the ``with`` block (or each call of the decorated function),
    :attr:`measurement` holds the result, and so does ``monitor.last[name]``;
    ``on_result`` (when given) is called with it.
    """

    def __init__(self, monitor: "Monitor", name: str, on_result: Optional[Callable[[Measurement], Any]] = None):
        self.monitor = monitor
        self.name = name
        self.on_result = on_result
        self.measurement: Optional[Measurement] = None

    def __enter__(self) -> "Window":
        self.monitor.begin_window(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.measurement = self.monitor.end_window(self.name)
        if self.on_result is not None:
            self.on_result(self.measurement)


class Monitor:
    """Measures the energy of windows of this program on the GPUs.

    ``gpus``: which GPUs, each an NVML index (``0``), a CUDA index
    (``"cuda:0"``) or a UUID (``"GPU-..."``); ``None`` = all. ``backend``: the
    sensor backend (``None``: the library's default, ``nvml`` on a GPU host);
    ``run_path``: also record the session (readings, traced kernels, and the
    windows as NVTX ranges) into this run file, which ``truewatt report`` and
    :func:`truewatt.read_run` read (docs/runfile.md); ``profile_path``: a sensor profile
    (``truewatt sensor identify``) instead of the one found for the GPU;
    ``trace_kernels``: trace this process's kernels in-process (CUPTI's
    activity API, as ``truewatt run``'s injection library): each
    :class:`Measurement` then has :attr:`Measurement.kernels`, the energy of
    each kernel name inside the window (:class:`Error` where CUPTI cannot be
    loaded: set ``TW_CUPTI_LIBRARY``); ``counter_period_s``: how often the GPU's
    energy counter, which gives a window's total, is read (``None``: every
    0.4875 s on an H100, ~1 % of a core; windows of a few hundred ms then agree
    with the counter to ~0.5 %; ``0.0975`` makes that ~0.1 % for 4-12 % of a
    core; avoid whole multiples of 0.1 s: docs/python.md). ``devices`` lists
    the GPUs, ``backend`` names the backend in use (``nvml``, ``sim``).

    The total comes from the counter once the monitor has read it for a few
    seconds (it learns when the counter updates); a window that ends before
    then waits up to ~3 s for that, or gets the sample buffer's energy scaled
    by its gain so far (``reading`` says which).

    The monitor samples from its creation until :meth:`close` (or the end of
    its ``with`` block). ``wait_timeout_s`` bounds the wait of a
    :class:`Measurement` for the readings past its window's end.

    >>> import truewatt
    >>> mon = truewatt.Monitor(gpus=[0])                 # doctest: +SKIP
    >>> with mon.window("forward") as w:                 # doctest: +SKIP
    ...     y = model(x)
    >>> w.measurement.energy_j[0]                        # doctest: +SKIP
    41.7
    >>> @mon.window("eval")                              # doctest: +SKIP
    ... def evaluate(): ...
    """

    def __init__(
        self,
        gpus: Optional[Sequence[Union[int, str]]] = None,
        backend: Optional[str] = None,
        run_path: Optional[PathLike] = None,
        profile_path: Optional[PathLike] = None,
        trace_kernels: bool = False,
        wait_timeout_s: float = 30.0,
        counter_period_s: Optional[float] = None,
    ) -> None:
        self.wait_timeout_s = wait_timeout_s
        self.last: Dict[str, Measurement] = {}
        self._names: Dict[str, bytes] = {}  # encoded once per name
        self._session = ctypes.c_void_p()
        cfg = _lib.SessionConfig()
        lib.tw_session_config_init(ctypes.byref(cfg))
        cfg.size = ctypes.sizeof(cfg)
        cfg.backend = encode(backend)
        gpu_arr = None
        if gpus is not None:
            if isinstance(gpus, (str, int)):
                gpus = [gpus]
            gpu_arr = (ctypes.c_char_p * len(gpus))(*[encode(str(g)) for g in gpus])
            cfg.gpus = ctypes.cast(gpu_arr, ctypes.POINTER(ctypes.c_char_p))
            cfg.ngpus = len(gpus)
        cfg.run_path = encode(os.fspath(run_path)) if run_path is not None else None
        cfg.profile_path = encode(os.fspath(profile_path)) if profile_path is not None else None
        cfg.trace_kernels = bool(trace_kernels)
        cfg.counter_period_s = 0.0 if counter_period_s is None else float(counter_period_s)
        check(lib.tw_session_open(ctypes.byref(cfg), ctypes.byref(self._session)), "tw_session_open")
        self._lock = threading.Lock()
        self.devices: List[Device] = [self._device(d) for d in range(lib.tw_session_device_count(self._session))]
        self.backend: str = text(lib.tw_session_backend(self._session))
        self.notes: str = text(lib.tw_session_notes(self._session))  # e.g. a MIG instance sampled through its GPU

    def _device(self, d: int) -> Device:
        info = _lib.DeviceInfo()
        check(lib.tw_session_device(self._handle(), d, ctypes.byref(info)), "tw_session_device")
        return Device(info.index, text(info.uuid), text(info.name), text(info.driver), info.arch, info.power_limit_w)

    def _handle(self) -> ctypes.c_void_p:
        if not self._session:
            raise Error(EINVAL, "invalid argument", "the monitor is closed", "Monitor")
        return self._session

    # -- windows

    def _name(self, name: str) -> bytes:
        b = self._names.get(name)
        if b is None:
            b = self._names[name] = encode(name)  # type: ignore[assignment]
        return b  # type: ignore[return-value]

    def begin_window(self, name: str) -> None:
        """Begins the window ``name`` (windows nest; a name is open once at a time)."""
        st = lib.tw_region_begin(self._session or self._handle(), self._name(name))
        if st:
            check(st, "tw_region_begin")

    def end_window(self, name: str) -> Measurement:
        """Ends the window ``name`` and returns its :class:`Measurement`.

        Does not wait for the sensor: the energies are read when first used
        (see :class:`Measurement`), so the cost here is the C library's end
        of a region plus a Python object (a few us a begin + end pair).
        """
        region = ctypes.c_void_p()
        st = lib.tw_region_end(self._session or self._handle(), self._name(name), ctypes.byref(region))
        if st:
            check(st, "tw_region_end")
        m = Measurement._of_region(name, region, self.wait_timeout_s)
        self.last[name] = m
        return m

    def window(self, name: str, on_result: Optional[Callable[[Measurement], Any]] = None) -> Window:
        """A window as a context manager or a decorator (see :class:`Window`)."""
        return Window(self, name, on_result)

    def measured(self, name: Optional[str] = None) -> Callable[[F], F]:
        """Decorator: every call of the function is a window named ``name``
        (default: the function's qualified name); the result is in ``monitor.last``."""

        def wrap(fn: F) -> F:
            win_name = str(name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn"))

            @functools.wraps(fn)
            def inner(*args: Any, **kwargs: Any) -> Any:
                with self.window(win_name):
                    return fn(*args, **kwargs)

            return inner  # type: ignore[return-value]

        return wrap

    # -- lifetime

    def close(self) -> None:
        """Stops sampling and releases the GPUs (idempotent)."""
        if self._session:
            lib.tw_session_close(self._session)
            self._session = ctypes.c_void_p()

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        gpus = ", ".join(d.uuid for d in self.devices)
        return f"<truewatt.Monitor [{gpus}]{'' if self._session else ' closed'}>"


_default: Optional[Monitor] = None
_default_lock = threading.Lock()


def default_monitor() -> Monitor:
    """The process-wide monitor of :func:`window` and :func:`truewatt.measure`
    (all GPUs, default backend), created at first use."""
    global _default
    with _default_lock:
        if _default is None or not _default._session:
            _default = Monitor()
        return _default


def window(name: str, monitor: Optional[Monitor] = None) -> Window:
    """A window on ``monitor`` (default: :func:`default_monitor`), as a context
    manager or a decorator.

    >>> import truewatt
    >>> with truewatt.window("step") as w:        # doctest: +SKIP
    ...     train_step()
    >>> print(w.measurement.total_energy_j)      # doctest: +SKIP
    """
    return (monitor or default_monitor()).window(name)
