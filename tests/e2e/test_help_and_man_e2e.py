"""End to end: ``--help`` names every command of the registry, and ``man``
goes through the pager ($PAGER) on a terminal only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pexpect

from metashell.commands import COMMANDS

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "kafka-metadata-shell"
EXAMPLE = REPO / "examples" / "cluster"
PAGER = "sed 's/^/PAGED /'"


def test_help_lists_every_command():
    p = subprocess.run([str(BIN), "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    [line] = [line for line in p.stdout.splitlines() if line.strip().startswith("Commands:")]
    assert line.split()[1:] == list(COMMANDS)
    assert {"brokers", "log", "partitions"} <= set(COMMANDS)


def test_man_uses_the_pager_on_a_terminal_only():
    env = dict(os.environ, PAGER=PAGER, NO_COLOR="1", TERM="xterm")
    child = pexpect.spawn(str(BIN), ["-s", str(EXAMPLE), "man", "ls"], env=env,
                          encoding="utf-8", timeout=60)
    child.expect(pexpect.EOF)
    assert "PAGED ls: List metadata nodes." in child.before
    p = subprocess.run([str(BIN), "-s", str(EXAMPLE), "man", "ls"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("ls: List metadata nodes.")
    assert "PAGED" not in p.stdout
