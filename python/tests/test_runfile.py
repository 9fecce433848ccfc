"""truewatt.read_run on a run file that `truewatt run` recorded against the
fake libnvidia-ml, with tests/e2e/run_fake_app.py as the program: the frames
hold the stand-in's kernels and NVTX range (its own table of times) and the
energy counter over the scripted kernels' power."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

import truewatt
from conftest import REPO, _required_path

APP = REPO / "tests" / "e2e" / "run_fake_app.py"


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    cli = _required_path("TRUEWATT_CLI")
    fake = _required_path("TW_FAKE_NVML_PATH")
    d = tmp_path_factory.mktemp("run")
    # the power: 400 W from 0.5 s to 3 s (the stand-in's events say gemm and relu: the timeline and the
    # power are separate inputs, and the counter's test wants a long constant stretch)
    (d / "scenario.csv").write_text("name,start_s,duration_s,power_w\nload,0.5,2.5,400\n")
    (d / "profiles").mkdir()
    env = dict(
        os.environ,
        TW_NVML_LIBRARY=str(fake),
        TW_FAKE_NVML_SCENARIO=str(d / "scenario.csv"),
        TW_RUN_EXPORT_T0_TO_FAKE="1",
        TW_INJECT_LIBRARY=str(d / "none.so"),  # the stand-in writes the timeline
        TW_PROFILE_DIR=str(d / "profiles"),
    )
    out = d / "r.sqlite"
    p = subprocess.run(
        [str(cli), "run", "-o", str(out), "--", sys.executable, str(APP), "kernels"],
        env=env, cwd=d, capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return out


def test_read_run_frames(run_file):
    import pandas as pd  # required: scripts/run-pytest installs it

    run = truewatt.read_run(run_file)
    assert str(run.meta["schema_version"]) == "2" and run.meta["backend"] == "nvml"
    assert isinstance(run.activities, pd.DataFrame)
    k = run.activities[run.activities.kind == "kernel"].set_index("name")
    # run_fake_app.py's EVENTS: gemm 1.0-1.6 s, relu 2.0-2.3 s
    assert sorted(k.index) == ["gemm", "relu"]
    assert abs(k.loc["gemm", "duration_s"] - 0.6) < 1e-6 and abs(k.loc["relu", "duration_s"] - 0.3) < 1e-6
    assert abs(k.loc["gemm", "start_s"] - 1.0) < 1e-6
    nv = run.nvtx.set_index("name")
    assert abs(nv.loc["forward", "start_s"] - 0.9) < 1e-6 and abs(nv.loc["forward", "duration_s"] - 1.5) < 1e-6
    assert len(run.devices) == 1 and run.devices.uuid[0].startswith("GPU-")
    assert len(run.reports) == 1


def test_read_run_energy_counter(run_file):
    run = truewatt.read_run(run_file)
    e = run.reading("energy_j")
    assert list(e.columns) == ["t_s", "value", "value_t_s"] and e.t_s.is_monotonic_increasing
    # at 400 W (0.5 s to 3 s) the fake's counter steps every 0.1 s by 400 W x 0.1 s: between polls
    # in [0.5 s, 3 s) it rises by positive multiples of 40 J
    inside = e[(e.t_s >= 0.5) & (e.t_s < 3.0)].value.to_numpy()
    assert len(inside) >= 2, e
    steps = list(inside[1:] - inside[:-1])
    assert all(abs(s / 40.0 - round(s / 40.0)) < 1e-3 and s > 0 for s in steps), steps


def test_read_run_bad_files(tmp_path):
    bad = tmp_path / "not-a-run.sqlite"
    bad.write_text("hello")
    with pytest.raises(truewatt.Error) as e:
        truewatt.read_run(bad)
    assert "not-a-run.sqlite" in str(e.value)
    other = tmp_path / "v9.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value)")
    db.execute("INSERT INTO meta VALUES ('schema_version', 9)")
    db.commit()
    db.close()
    with pytest.raises(truewatt.Error, match="schema_version 9"):
        truewatt.read_run(other)
    with pytest.raises(truewatt.Error, match="no such file"):
        truewatt.read_run(tmp_path / "missing.sqlite")


def test_read_run_without_pandas(run_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match="needs pandas"):
        truewatt.read_run(run_file)
