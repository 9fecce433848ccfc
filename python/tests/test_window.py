"""Windows against the fake libnvidia-ml: the scripted true power integrated
over the window's own edges (taken here with Python's clock) is the expected
energy, an independent calculation."""

from __future__ import annotations

import threading
import time

import pytest

import truewatt
from conftest import REPO

P_W = 300.0  # the scripted constant power
REL = 0.01  # 1 %: the fake's readings are exact samples of the true power


def hold(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.005)


def assert_close(got: float, want: float, rel: float, what: str) -> None:
    assert abs(got - want) <= rel * abs(want), f"{what}: {got:.4f}, expected {want:.4f} (+- {100 * rel:g} %)"


def constant_gpu(fake_gpu) -> None:
    # one long kernel at P_W from t = 1 s; now is t = 2 s: the sensor's 1 s averages are all inside it
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0)


def test_window_constant_power_is_p_times_t(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    assert mon.backend == "nvml" and len(mon.devices) == 1
    t0 = time.monotonic()
    mon.begin_window("step")
    hold(0.3)
    m = mon.end_window("step")
    wall = time.monotonic() - t0
    assert m.name == "step"
    assert 0.3 <= m.time_s <= wall, (m.time_s, wall)
    uuid = mon.devices[0].uuid
    assert list(m.energy_j) == [uuid]
    assert_close(m.energy_j[uuid], P_W * m.time_s, REL, "energy")
    assert m.energy_j[0] == m.energy_j[uuid]
    assert_close(m.baseline_j[0] + m.above_baseline_j[0], m.energy_j[0], 1e-9, "baseline + above")
    assert m.energy_sd_j[0] >= 0 and m.reading[uuid]
    assert_close(m.power_w[0], P_W, REL, "mean power")


def test_window_across_a_power_step(fake_gpu, monitor_factory):
    # 200 W until t = 3.2 s, then 500 W: the window (from t ~ 2.9 s, the monitor takes ~0.5 s to
    # open) straddles the step. The fake's own sensor profile (its buffer has no lag, unlike an
    # H100's): the step is then exact
    t0 = fake_gpu([("low", 1.0, 2.2, 200.0), ("high", 3.2, 60.0, 500.0)], at_s=2.0)
    mon = monitor_factory(backend="nvml", profile_path=REPO / "tests" / "data" / "profile_fake_h100.json")
    hold(max(0.0, t0 + 2.9 - time.monotonic()))
    a = time.monotonic() - t0
    mon.begin_window("step")
    b0 = time.monotonic() - t0
    hold(0.6)
    a1 = time.monotonic() - t0
    m = mon.end_window("step")
    start, end = (a + b0) / 2, a1  # the window's edges on the fake's timeline, to a few us
    assert start < 3.2 < end, (start, end)
    want = 200.0 * (3.2 - start) + 500.0 * (end - 3.2)
    assert_close(m.energy_j[0], want, REL, "energy across the step")


def test_nested_windows(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    with mon.window("outer") as outer:
        hold(0.1)
        with mon.window("inner") as inner:
            hold(0.2)
        hold(0.1)
    o, i = outer.measurement, inner.measurement
    assert o is not None and i is not None
    assert o.start_s <= i.start_s and i.end_s <= o.end_s
    assert 0.2 <= i.time_s < o.time_s and o.time_s >= 0.4
    assert_close(o.energy_j[0], P_W * o.time_s, REL, "outer")
    assert_close(i.energy_j[0], P_W * i.time_s, REL, "inner")
    assert mon.last["outer"] is o and mon.last["inner"] is i


def test_windows_from_two_threads(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    got = {}

    def work(name: str, seconds: float) -> None:
        mon.begin_window(name)
        hold(seconds)
        got[name] = mon.end_window(name)

    threads = [threading.Thread(target=work, args=(f"t{k}", 0.2 + 0.1 * k)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        m = got[f"t{k}"]
        assert m.time_s >= 0.2 + 0.1 * k
        assert_close(m.energy_j[0], P_W * m.time_s, REL, f"thread {k}")


def test_decorators(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    results = []

    @mon.window("work", on_result=results.append)
    def work(seconds: float) -> str:
        hold(seconds)
        return "done"

    @mon.measured()
    def other() -> None:
        hold(0.1)

    assert work(0.1) == "done" and work(0.2) == "done"
    assert [r.name for r in results] == ["work", "work"] and results[1].time_s >= 0.2
    for r in results:
        assert_close(r.energy_j[0], P_W * r.time_s, REL, "decorated")
    other()
    m = mon.last["test_decorators.<locals>.other"]
    assert_close(m.energy_j[0], P_W * m.time_s, REL, "measured()")


def test_module_window_uses_the_default_monitor(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)  # the default backend is nvml where it is available: the fake here
    with truewatt.window("step") as w:
        hold(0.3)
    assert truewatt.default_monitor().backend == "nvml"
    assert_close(w.measurement.energy_j[0], P_W * w.measurement.time_s, REL, "truewatt.window")


def test_two_gpus_keyed_by_uuid(fake_gpu, monitor_factory):
    fake_gpu([("load", 1.0, 120.0, P_W)], at_s=2.0, devices=2)
    mon = monitor_factory(backend="nvml")
    uuids = [d.uuid for d in mon.devices]
    assert len(uuids) == 2 and len(set(uuids)) == 2
    with mon.window("both") as w:
        hold(0.3)
    assert list(w.measurement.energy_j) == uuids
    for u in uuids:  # the fake plays the same scenario on every device
        assert_close(w.measurement.energy_j[u], P_W * w.measurement.time_s, REL, u)
    assert_close(w.measurement.total_energy_j, 2 * P_W * w.measurement.time_s, REL, "total")
    one = monitor_factory(backend="nvml", gpus=[uuids[1]])
    assert [d.uuid for d in one.devices] == [uuids[1]]


def test_simulator_backend(monitor_factory, monkeypatch):
    monkeypatch.delenv("TW_NVML_LIBRARY", raising=False)
    mon = monitor_factory(backend="sim")
    assert mon.backend == "sim" and len(mon.devices) == 1
    with mon.window("w") as w:
        hold(0.2)
    m = w.measurement
    assert m.time_s >= 0.2 and m.energy_j[0] == m.energy_j[0] and m.energy_j[0] > 0  # finite, not NaN


def test_errors_carry_the_library_message(fake_gpu, monitor_factory):
    with pytest.raises(truewatt.Error) as e:
        truewatt.Monitor(backend="no-such-backend")
    assert e.value.status != 0 and e.value.detail and "no-such-backend" in str(e.value)
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    with pytest.raises(truewatt.Error) as e:
        mon.end_window("never-begun")
    assert e.value.status == truewatt._lib.EINVAL and "never-begun" in str(e.value)
    mon.close()
    with pytest.raises(truewatt.Error):
        mon.begin_window("closed")
    with pytest.raises(truewatt.Error) as e:
        truewatt.Monitor(backend="nvml", gpus=["GPU-not-there"])
    assert "GPU-not-there" in str(e.value)


def test_version_is_the_librarys():
    assert truewatt.library_version() == truewatt.__version__


def test_measurements_resolve_later_and_after_close(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    mon = monitor_factory(backend="nvml")
    steps = []
    for _ in range(3):
        mon.begin_window("step")
        hold(0.1)
        steps.append(mon.end_window("step"))  # returns at once: the energies are read at first use
    assert "pending" in repr(steps[0])
    assert steps[0].wait() is steps[0] and "pending" not in repr(steps[0])
    mon.close()  # closing completes the others with what was read
    for m in steps:
        assert_close(m.energy_j[0], P_W * m.time_s, REL, "read after close")


def test_window_total_from_the_counter(fake_gpu, monitor_factory, monkeypatch):
    """The fake's sample buffer reads 4 % high; its counter is exact (and publishes 12 ms late, which the
    fake's profile does not know): once the monitor has read the counter for a few seconds, a window's
    energy is the counter's, P x t, and its reading says so."""
    constant_gpu(fake_gpu)
    monkeypatch.setenv("TW_FAKE_NVML_BUFFER_GAIN", "1.04")
    monkeypatch.setenv("TW_FAKE_NVML_ENERGY_DELAY_MS", "12")
    mon = monitor_factory(backend="nvml", counter_period_s=0.2375,
                          profile_path=REPO / "tests" / "data" / "profile_fake_h100.json")
    hold(1.8)  # eight reads of the counter: its phase is fitted
    mon.begin_window("step")
    hold(0.3)
    m = mon.end_window("step")
    assert "energy_j (counter" in m.reading[0], m.reading[0]
    assert_close(m.energy_j[0], P_W * m.time_s, 0.002, "energy from the counter (the buffer alone: +4 %)")
    assert abs(m.energy_j[0] - P_W * m.time_s) <= 3 * m.energy_sd_j[0] + 1e-6 * P_W


def test_monitor_bad_counter_period(fake_gpu, monitor_factory):
    constant_gpu(fake_gpu)
    with pytest.raises(truewatt.Error) as e:
        monitor_factory(backend="nvml", counter_period_s=-1.0)
    assert e.value.status == truewatt._lib.EINVAL and "counter_period_s" in str(e.value)
