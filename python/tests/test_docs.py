"""docs/python.md's first example runs as written (against the fake GPU)."""

from __future__ import annotations

import re

from conftest import REPO


def test_docs_python_example(fake_gpu, capsys):
    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python example"
    exec(compile(blocks[0], "docs/python.md", "exec"), {})
    out = capsys.readouterr().out
    assert "step: " in out and "on nvml" in out and "epoch " in out and "predict: " in out, out


def test_readme_python_example(fake_gpu, capsys):
    fake_gpu([("load", 1.0, 120.0, 300.0)], at_s=2.0)
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README.md: one python example"
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert re.search(r"^\d+\.\d{3} s, \d+\.\d\d J \+- \d+\.\d\d J \(nvml\)$", capsys.readouterr().out, re.M)
