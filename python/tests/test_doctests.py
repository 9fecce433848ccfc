"""The docstrings' examples that run anywhere (the others are marked +SKIP: they need a GPU or torch)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["truewatt", "truewatt._lib", "truewatt.monitor", "truewatt.measure",
                                  "truewatt.runfile", "truewatt.torch"])
def test_docstring_examples(name, monkeypatch):
    monkeypatch.delenv("TW_NVML_LIBRARY", raising=False)
    module = importlib.import_module(name)  # the module (truewatt.measure is also the function's name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
