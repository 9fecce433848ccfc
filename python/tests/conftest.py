"""Fixtures of the Python package's tests: the installed package against the
fake libnvidia-ml (tests/fakes/fake_nvml.c) and the simulator.

Environment (scripts/run-pytest sets it): TW_FAKE_NVML_PATH, the fake's path
(build-test/fake-nvml/libnvidia-ml.so.1); TRUEWATT_CLI, the truewatt
executable of the same build (for `truewatt run`). A test that needs one of
them fails without it: a missing dependency is not a pass.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

import truewatt

REPO = Path(__file__).resolve().parents[2]

Kernel = Tuple[str, float, float, float]  # name, start_s, duration_s, power_w


def _required_path(var: str) -> Path:
    p = os.environ.get(var)
    if not p or not Path(p).exists():
        pytest.fail(f"${var} must name a built file (scripts/run-pytest sets it); it is {p!r}")
    return Path(p)


@pytest.fixture(autouse=True)
def _no_library_override(monkeypatch: pytest.MonkeyPatch) -> None:
    # the tests are of the installed package and its own libtruewatt.so
    monkeypatch.delenv("TRUEWATT_LIBRARY", raising=False)


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., float]:
    """fake_gpu(kernels, at_s=2.0, devices=1): the fake libnvidia-ml as NVML,
    playing `kernels` (the simulator's H100, exact true power) on a timeline
    whose origin is at_s seconds ago; returns that origin (CLOCK_MONOTONIC, s).
    Open the Monitor after this call: the fake reads its settings at nvmlInit."""

    fake = _required_path("TW_FAKE_NVML_PATH")

    def setup(kernels: List[Kernel], at_s: float = 2.0, devices: int = 1) -> float:
        csv = tmp_path / "scenario.csv"
        csv.write_text("name,start_s,duration_s,power_w\n" + "".join(f"{n},{s},{d},{p}\n" for n, s, d, p in kernels))
        t0_ns = time.monotonic_ns() - int(at_s * 1e9)
        monkeypatch.setenv("TW_NVML_LIBRARY", str(fake))
        monkeypatch.setenv("TW_FAKE_NVML_SCENARIO", str(csv))
        monkeypatch.setenv("TW_FAKE_NVML_T0_MONO_NS", str(t0_ns))
        monkeypatch.setenv("TW_FAKE_NVML_DEVICES", str(devices))
        return t0_ns / 1e9

    return setup


@pytest.fixture
def monitor_factory() -> Iterator[Callable[..., truewatt.Monitor]]:
    """Opens Monitors and closes them (and the default one) after the test."""
    opened: List[truewatt.Monitor] = []

    def open_monitor(**kw: object) -> truewatt.Monitor:
        m = truewatt.Monitor(**kw)  # type: ignore[arg-type]
        opened.append(m)
        return m

    yield open_monitor
    for m in opened:
        m.close()
    import truewatt.monitor as tm  # the default monitor, when a test made one

    if tm._default is not None:
        tm._default.close()
        tm._default = None
