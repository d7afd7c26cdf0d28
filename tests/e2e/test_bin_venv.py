"""``bin/_venv.sh``: the shell installs only its own dependencies, ``bin/test``
completes the same virtualenv with the dev and spark extras (never rebuilds
it), and a stamp of before the split counts as everything installed. The
virtualenv's python is a stand-in that records how it was called (no
network, no pip)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.support.paths import REPO

VENV_SH = REPO / "bin" / "_venv.sh"


def project_sum() -> str:
    return subprocess.run(["cksum"], stdin=open(REPO / "pyproject.toml", "rb"),
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def venv(tmp_path) -> Path:
    """A virtualenv whose python only logs its arguments."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path / "calls"}"\n')
    python.chmod(0o755)
    return venv


def source(venv: Path, extras: str) -> tuple[list[str], str]:
    """Source _venv.sh with EXTRAS: the stand-in's calls and the stamp."""
    env = {**os.environ, "METASHELL_VENV": str(venv), "PYTHON": "false"}
    subprocess.run(["bash", "-c", f'EXTRAS="{extras}"; . "{VENV_SH}"'], env=env, check=True,
                   capture_output=True, text=True)
    calls = venv.parent / "calls"
    lines = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return lines, (venv / ".metashell-installed").read_text().strip()


def test_the_shell_installs_its_own_dependencies_then_the_tests_complete_them(venv):
    calls, stamp = source(venv, "")
    assert len(calls) == 1 and calls[0].endswith(f"-e {REPO}")
    assert stamp == f"{project_sum()}|"
    assert source(venv, "")[0] == []                       # installed: nothing to do
    calls, stamp = source(venv, "dev,spark")
    assert len(calls) == 1 and calls[0].endswith(f"-e {REPO}[dev,spark]")
    assert stamp == f"{project_sum()}|dev,spark"
    assert source(venv, "spark")[0] == [] and source(venv, "")[0] == []


def test_the_fleet_adds_spark_to_what_is_there(venv):
    source(venv, "dev")
    calls, stamp = source(venv, "spark")
    assert calls[0].endswith(f"-e {REPO}[dev,spark]") and stamp.endswith("|dev,spark")


def test_a_stamp_of_before_the_split_had_everything(venv):
    (venv / ".metashell-installed").write_text(project_sum() + "\n")
    assert source(venv, "dev,spark")[0] == []


def test_a_changed_project_installs_again_into_the_same_venv(venv):
    (venv / ".metashell-installed").write_text("0 0|dev,spark\n")
    calls, stamp = source(venv, "dev,spark")
    assert len(calls) == 1 and "-m venv" not in calls[0] and stamp.endswith("|dev,spark")
