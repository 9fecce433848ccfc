"""A Monitor that records into a run file (run_path) and one that traces kernels
in-process (trace_kernels) against the fake libnvidia-ml and, for the kernels,
the fake libcupti (tests/inject/fake_cupti.c, built where CUDA's headers are;
scripts/run-pytest then sets TW_FAKE_CUPTI_PATH). The per-kernel energies
themselves are checked in C (tests/inject/test_session_kernels.c), where the
test can hand the fake CUPTI its kernel records."""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from pathlib import Path

import pytest

import truewatt
from conftest import REPO, _required_path

PROFILE = REPO / "tests" / "data" / "profile_fake_h100.json"


def test_run_path_is_a_run_file_truewatt_report_reads(fake_gpu, monitor_factory, tmp_path: Path):
    cli = _required_path("TRUEWATT_CLI")
    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    path = tmp_path / "session.sqlite"
    mon = monitor_factory(backend="nvml", run_path=path, profile_path=PROFILE)
    with mon.window("step"):
        time.sleep(0.3)
    with mon.window("step"):
        time.sleep(0.2)
    mon.close()
    out = subprocess.run([str(cli), "report", str(path), "--json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    ranges = report["devices"][0]["nvtx_ranges"]
    assert [r["name"] for r in ranges] == ["step", "step"]
    # the windows' lengths, as the report has them, against the Measurements'
    first = mon.last["step"]
    assert abs((ranges[1]["end_s"] - ranges[1]["start_s"]) - first.time_s) < 1e-6
    run = truewatt.read_run(path)
    assert list(run.nvtx["name"]) == ["step", "step"]
    assert len(run.samples) > 0


def test_trace_kernels_gives_kernel_names(fake_gpu, monitor_factory, monkeypatch: pytest.MonkeyPatch):
    fake = os.environ.get("TW_FAKE_CUPTI_PATH")
    if not fake:
        # the library was built without cupti.h: trace_kernels says so
        fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
        with pytest.raises(truewatt.Error, match="cupti"):
            monitor_factory(backend="nvml", trace_kernels=True)
        return
    monkeypatch.setenv("TW_CUPTI_LIBRARY", _required_path("TW_FAKE_CUPTI_PATH").as_posix())
    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    mon = monitor_factory(backend="nvml", trace_kernels=True, profile_path=PROFILE)
    with mon.window("idle") as w:
        time.sleep(0.1)
    m = w.measurement
    assert m.kernels == []  # the fake ran none of this process's kernels
    assert m.kernels_j[0] == 0.0
    assert not math.isnan(m.energy_j[0])


def test_no_trace_kernels_no_kernels(fake_gpu, monitor_factory):
    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    with mon.window("w") as w:
        time.sleep(0.05)
    assert w.measurement.kernels == [] and math.isnan(w.measurement.kernels_j[0])
