"""truewatt.measure through tw_measure and a ctypes callback, against the fake
libnvidia-ml at a scripted constant power: each call's energy is that power
times its time; the calls and their time are counted here, independently."""

from __future__ import annotations

import time

import pytest

import truewatt

P_W = 300.0


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_measure_short_code(fake_gpu, monitor_factory):
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    calls = []
    spent = [0.0]

    def fn(seconds: float) -> None:
        t = time.perf_counter()
        busy(seconds)
        spent[0] += time.perf_counter() - t
        calls.append(1)

    # blocks of 0.2 s (the default 1 s would spend ~8 s): one round of 8, past the budget
    r = truewatt.measure(fn, 0.002, precision=0.02, budget_s=1.5, block_s=0.2, monitor=mon)
    assert r.calls == len(calls) > 0
    assert 8 * 0.2 * 0.9 <= spent[0] < 8 * 1.0 * 0.9, spent[0]  # block_s reached the library
    per_call = spent[0] / len(calls)
    assert abs(r.time_s - per_call) <= 0.1 * per_call, (r.time_s, per_call)
    assert abs(r.energy_j - P_W * r.time_s) <= 0.05 * P_W * r.time_s, (r.energy_j, P_W * r.time_s)
    assert r.energy_sd_j >= 0


def test_measure_raises_the_callables_exception(fake_gpu, monitor_factory):
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    calls = []

    def bad() -> None:
        calls.append(1)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        truewatt.measure(bad, budget_s=0.5, monitor=mon)
    assert len(calls) == 1  # the calls after the first failure do not reach Python's fn


def test_measure_ctrl_c_stops_at_once(fake_gpu, monitor_factory):
    """A KeyboardInterrupt in the callable (Ctrl-C) cancels tw_measure: it returns before its next call,
    long before the end of a round (~11 s) or the budget."""
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    calls = []

    def fn() -> None:
        calls.append(1)
        busy(0.001)
        if len(calls) == 100:  # inside the first block: after the calibration and the lead
            raise KeyboardInterrupt

    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        truewatt.measure(fn, budget_s=30.0, monitor=mon)
    took = time.monotonic() - t
    assert len(calls) == 100
    assert took < 2.0, took  # calibration 0.02 s, lead 0.5 s, 80 calls of 1 ms; a round would be ~11 s


def test_measure_bad_device(fake_gpu, monitor_factory):
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    with pytest.raises(truewatt.Error) as e:
        truewatt.measure(lambda: None, device=5, budget_s=1.0, monitor=mon)
    assert e.value.status == truewatt._lib.EINVAL
