"""The flake8 plugin reports the same findings as ``pt2lint check``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("flake8")

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()
            if x.sum() > 0:
                print("positive")
            x.add_(1)
            return x * n
    """
)


def _run(*args, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_flake8_select_ptc_matches_check(tmp_path):
    (tmp_path / "net.py").write_text(MODEL)
    (tmp_path / "clean.py").write_text("def f(x):\n    return x + 1\n")
    flake8 = _run("-m", "flake8", "-j", "1", "--select", "PTC", "net.py", "clean.py", cwd=tmp_path)
    check = _run("-m", "pt2lint", "check", "--no-cache", "-q", "net.py", "clean.py", cwd=tmp_path)
    assert flake8.returncode == 1 and check.returncode == 1, flake8.stderr
    ours = [line.split(" [")[0] for line in check.stdout.splitlines()]  # flake8 has no fix tag
    assert flake8.stdout.splitlines() == ours
    assert any(": PTC101 " in line for line in ours)


def test_flake8_honours_the_project_config_and_its_own_filters(tmp_path):
    (tmp_path / "net.py").write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text('[tool.pt2lint]\nignore = ["PTC104"]\n')
    out = _run("-m", "flake8", "-j", "1", "--select", "PTC", "--extend-ignore", "PTC401", "net.py", cwd=tmp_path).stdout
    codes = {line.split()[1] for line in out.splitlines()}
    assert "PTC101" in codes and "PTC104" not in codes and "PTC401" not in codes
    assert _run("-m", "flake8", "-j", "1", "--select", "E9", "net.py", cwd=tmp_path).stdout == ""
