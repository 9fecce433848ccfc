"""PyTorch helper: training steps, forward and backward passes as windows and NVTX ranges.

Imports torch only when used; without torch, every function raises an
ImportError that says so.

>>> import torch, truewatt, truewatt.torch as twt                  # doctest: +SKIP
>>> mon = truewatt.Monitor()                                       # doctest: +SKIP
>>> marks = twt.instrument(model, mon)       # forward/backward of model  # doctest: +SKIP
>>> for x, y in data:                                              # doctest: +SKIP
...     with twt.step(mon) as s:             # the whole training step
...         loss = loss_fn(model(x), y)
...         loss.backward()
...         opt.step(); opt.zero_grad()
...     print(s.measurement.total_energy_j, mon.last["forward"].total_energy_j)
>>> marks.remove()                                                 # doctest: +SKIP

Each window is also an NVTX range of the same name (when CUDA is there), so
the same step under ``truewatt run`` reports it as a range. A window ends
after ``torch.cuda.synchronize()``, so the GPU work it launched is inside it.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List, Optional

from .monitor import Measurement, Monitor, Window, default_monitor

__all__ = ["step", "instrument", "Instrumented", "nvtx_range"]


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise ImportError("truewatt.torch needs PyTorch, which is not installed (pip install torch)") from e
    return torch


def _cuda(torch: Any) -> bool:
    return bool(torch.cuda.is_available())


def _sync(torch: Any) -> None:
    if _cuda(torch):
        torch.cuda.synchronize()


@contextlib.contextmanager
def nvtx_range(name: str) -> Iterator[None]:
    """An NVTX range ``name`` around the block (nothing without CUDA)."""
    torch = _torch()
    on = _cuda(torch)
    if on:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if on:
            torch.cuda.nvtx.range_pop()


class _SyncedWindow(Window):
    """A window that synchronizes CUDA at both edges and is an NVTX range too."""

    def __init__(self, monitor: Monitor, name: str, nvtx: bool, on_result: Optional[Callable[[Measurement], Any]]):
        super().__init__(monitor, name, on_result)
        self._torch = _torch()
        self._nvtx = nvtx and _cuda(self._torch)

    def __enter__(self) -> "_SyncedWindow":
        _sync(self._torch)
        super().__enter__()
        if self._nvtx:
            self._torch.cuda.nvtx.range_push(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        _sync(self._torch)
        if self._nvtx:
            self._torch.cuda.nvtx.range_pop()
        super().__exit__(*exc)


def step(
    monitor: Optional[Monitor] = None,
    name: str = "train_step",
    nvtx: bool = True,
    on_result: Optional[Callable[[Measurement], Any]] = None,
) -> Window:
    """A training step as a window (context manager or decorator) and an NVTX range."""
    _torch()  # the clear error first, before a monitor is opened
    return _SyncedWindow(monitor or default_monitor(), name, nvtx, on_result)


class Instrumented:
    """The hooks :func:`instrument` put on a module; :meth:`remove` takes them off."""

    def __init__(self, handles: List[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


def instrument(
    module: Any,
    monitor: Optional[Monitor] = None,
    forward: str = "forward",
    backward: Optional[str] = "backward",
    nvtx: bool = True,
    sync: bool = True,
) -> Instrumented:
    """Marks each forward pass of ``module`` as the window ``forward`` and each
    backward pass through it as the window ``backward``, by module hooks;
    results are in ``monitor.last[name]``. Each is also an NVTX range, and
    with ``sync`` each edge waits for the GPU (``torch.cuda.synchronize()``),
    so a window holds the work it launched. ``backward=None``: forward only.

    The backward window begins when the gradient of the module's output
    arrives and ends when the gradients of its inputs are computed: give the
    model's input ``requires_grad`` or accept that PyTorch calls the end hook
    once the module's own parameters' gradients are done.
    """
    torch = _torch()
    mon = monitor or default_monitor()
    use_nvtx = nvtx and _cuda(torch)

    def begin(name: str) -> None:
        if sync:
            _sync(torch)
        mon.begin_window(name)
        if use_nvtx:
            torch.cuda.nvtx.range_push(name)

    def end(name: str) -> None:
        if sync:
            _sync(torch)
        if use_nvtx:
            torch.cuda.nvtx.range_pop()
        mon.end_window(name)

    handles = [
        module.register_forward_pre_hook(lambda m, inp: begin(forward)),
        module.register_forward_hook(lambda m, inp, out: end(forward)),
    ]
    if backward is not None:
        handles.append(module.register_full_backward_pre_hook(lambda m, grad_out: begin(backward)))
        handles.append(module.register_full_backward_hook(lambda m, grad_in, grad_out: end(backward)))
    return Instrumented(handles)
