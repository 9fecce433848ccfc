"""The ctypes binding of libtruewatt's public C API (include/truewatt.h).

Only this module knows the C side: the structs as ctypes mirrors (each public
struct that may grow starts with its ``size``), the argument and result types
of every function used, and the mapping of a ``tw_status`` to
:class:`truewatt.Error`. The library is ``libtruewatt.so`` installed beside
this file by ``pip install .``; ``$TRUEWATT_LIBRARY`` names another one (a
build tree's, for development).
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    byref,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_size_t,
    c_uint,
    c_void_p,
)
from typing import Any, Optional

__all__ = ["Error", "lib", "check", "text"]


# tw_status codes (include/truewatt.h; append-only, never renumbered)
EINVAL, ENOMEM, EIO, EPARSE, ENOTFOUND, EUNAVAIL, EUNSUPPORTED = 1, 2, 3, 4, 5, 6, 7


class Error(Exception):
    """A libtruewatt call failed.

    ``status`` is the C ``tw_status`` code (stable, see include/truewatt.h),
    ``reason`` its short text (``tw_strerror``) and ``detail`` the library's
    own message (``tw_last_error``: file and line for bad input).

    >>> import truewatt
    >>> try:
    ...     truewatt.Monitor(backend="no-such-backend")
    ... except truewatt.Error as e:
    ...     print(e.status != 0)
    True
    """

    def __init__(self, status: int, reason: str, detail: str, call: str = "") -> None:
        self.status = status
        self.reason = reason
        self.detail = detail
        self.call = call
        where = f"{call}: " if call and not detail.startswith(call) else ""
        super().__init__(f"{where}{detail or reason} (tw_status {status}: {reason})")


# ---------------------------------------------------------------- structs (truewatt.h)


class SessionConfig(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("backend", c_char_p),
        ("gpus", POINTER(c_char_p)),
        ("ngpus", c_size_t),
        ("run_path", c_char_p),
        ("profile_path", c_char_p),
        ("trace_kernels", c_bool),
        ("counter_period_s", c_double),
    ]


class DeviceInfo(Structure):
    _fields_ = [
        ("index", c_uint),
        ("uuid", c_char * 96),
        ("name", c_char * 96),
        ("driver", c_char * 32),
        ("arch", c_uint),
        ("power_limit_w", c_double),
    ]


class RegionDevice(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("uuid", c_char * 96),
        ("time_s", c_double),
        ("energy_j", c_double),
        ("energy_sd_j", c_double),
        ("baseline_j", c_double),
        ("above_baseline_j", c_double),
        ("reading", c_char_p),
        ("kernels_j", c_double),
        ("kernels_model_j", c_double),
    ]


class RegionKernel(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char_p),
        ("device", c_size_t),
        ("launches", ctypes.c_uint64),
        ("time_s", c_double),
        ("energy_j", c_double),
        ("energy_sd_j", c_double),
        ("status", c_char_p),
        ("group", c_char_p),
    ]


class MeasureOptions(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("precision", c_double),
        ("budget_s", c_double),
        ("device", c_size_t),
        ("cancel", POINTER(c_int)),  # tw_measure stops within a call once *cancel != 0
        ("block_s", c_double),  # a block of back-to-back calls (0: the library's default)
    ]


class MeasureResult(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("time_s", c_double),
        ("energy_j", c_double),
        ("energy_sd_j", c_double),
        ("power_above_baseline_w", c_double),
        ("calls", c_size_t),
    ]


MEASURE_FN = CFUNCTYPE(None, c_void_p)

# name: (result type, argument types); a tw_status result is c_int and checked
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "tw_version": (c_char_p, []),
    "tw_strerror": (c_char_p, [c_int]),
    "tw_last_error": (c_char_p, []),
    "tw_session_config_init": (None, [POINTER(SessionConfig)]),
    "tw_session_open": (c_int, [POINTER(SessionConfig), POINTER(c_void_p)]),
    "tw_session_close": (None, [c_void_p]),
    "tw_session_device_count": (c_size_t, [c_void_p]),
    "tw_session_device": (c_int, [c_void_p, c_size_t, POINTER(DeviceInfo)]),
    "tw_session_backend": (c_char_p, [c_void_p]),
    "tw_session_notes": (c_char_p, [c_void_p]),
    "tw_region_begin": (c_int, [c_void_p, c_char_p]),
    "tw_region_end": (c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "tw_region_wait": (c_int, [c_void_p, c_double]),
    "tw_region_free": (None, [c_void_p]),
    "tw_region_device_count": (c_size_t, [c_void_p]),
    "tw_region_device_get": (c_int, [c_void_p, c_size_t, POINTER(RegionDevice)]),
    "tw_region_name": (c_char_p, [c_void_p]),
    "tw_region_time_s": (c_double, [c_void_p]),
    "tw_region_start_s": (c_double, [c_void_p]),
    "tw_region_end_s": (c_double, [c_void_p]),
    "tw_region_kernel_count": (c_size_t, [c_void_p]),
    "tw_region_kernel_get": (c_int, [c_void_p, c_size_t, POINTER(RegionKernel)]),
    "tw_measure_options_init": (None, [POINTER(MeasureOptions)]),
    "tw_measure": (
        c_int,
        [c_void_p, MEASURE_FN, c_void_p, POINTER(MeasureOptions), POINTER(MeasureResult)],
    ),
}


def _library_path() -> str:
    env = os.environ.get("TRUEWATT_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtruewatt.so")


class _Lib:
    """libtruewatt, loaded at first use (so that ``import truewatt`` never fails)."""

    def __init__(self) -> None:
        self._cdll: Optional[ctypes.CDLL] = None
        self._lock = threading.Lock()

    def _load(self) -> ctypes.CDLL:
        with self._lock:
            if self._cdll is not None:
                return self._cdll
            path = _library_path()
            try:
                cdll = ctypes.CDLL(path)
            except OSError as e:
                raise Error(
                    -1,
                    "library not found",
                    f"cannot load libtruewatt ({e}); install the package with `pip install .` from the "
                    "truewatt repository, or set TRUEWATT_LIBRARY to a built libtruewatt.so",
                    "load",
                ) from e
            for name, (restype, argtypes) in _SIGNATURES.items():
                try:
                    fn = getattr(cdll, name)
                except AttributeError as e:
                    raise Error(-1, "symbol missing", f"{path} has no {name}: an older libtruewatt?", "load") from e
                fn.restype = restype
                fn.argtypes = argtypes
                # later lookups find the function here, not through __getattr__ (a region's
                # begin + end is a few ctypes calls: each lookup counts)
                setattr(self, name, fn)
            self._cdll = cdll
            return cdll

    def __getattr__(self, name: str) -> Any:
        # reached only before the library is loaded (or for names it does not bind)
        return getattr(self._load(), name)


lib = _Lib()


def text(b: Optional[bytes]) -> str:
    """A C string as Python text ("" for NULL)."""
    return b.decode("utf-8", "replace") if b else ""


def check(status: int, call: str) -> None:
    """Raises :class:`Error` for a non-zero tw_status, with tw_last_error's text."""
    if status != 0:
        raise Error(status, text(lib.tw_strerror(status)), text(lib.tw_last_error()), call)


def encode(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode("utf-8")


__all__ += ["SessionConfig", "DeviceInfo", "RegionDevice", "MeasureOptions", "MeasureResult", "MEASURE_FN", "byref"]
