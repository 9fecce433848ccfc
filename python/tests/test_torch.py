"""truewatt.torch: a clear error without PyTorch; with PyTorch (where
installed, e.g. the GPU hosts), the hooks mark forward and backward passes."""

from __future__ import annotations

import importlib.util
import sys
import time

import pytest


def test_without_torch_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    import truewatt.torch as twt

    with pytest.raises(ImportError, match="needs PyTorch"):
        twt.step()
    with pytest.raises(ImportError, match="needs PyTorch"):
        twt.instrument(object())


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed (optional)")
def test_forward_and_backward_windows(fake_gpu, monitor_factory):
    import torch

    import truewatt.torch as twt

    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    mon = monitor_factory(backend="nvml")
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    marks = twt.instrument(model, mon)
    x = torch.randn(32, 64, requires_grad=True)
    with twt.step(mon) as s:
        loss = model(x).sum()
        loss.backward()
        time.sleep(0.05)
    marks.remove()
    f, b, st = mon.last["forward"], mon.last["backward"], s.measurement
    assert st.start_s <= f.start_s <= f.end_s <= b.start_s <= b.end_s <= st.end_s
    assert set(mon.last) == {"forward", "backward", "train_step"}
