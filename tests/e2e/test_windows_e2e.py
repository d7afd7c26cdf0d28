"""End to end: ``log`` and ``diff`` windows that miss the example
cluster's data, through the real ``bin/kafka-metadata-shell``: the exit
status and the one line on stderr a script sees."""

from __future__ import annotations

import os
import subprocess

from tests.support.paths import EXAMPLE, REPO

BIN = REPO / "bin" / "kafka-metadata-shell"


def shell(*args, strict=False):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([str(BIN), "-s", str(EXAMPLE), *(["--strict"] if strict else []),
                           *map(str, args)], env=env, capture_output=True, text=True, timeout=120)


def test_log_past_the_end_warns_and_strict_fails():
    p = shell("log", "--from-offset", 99999)
    assert (p.returncode, p.stdout) == (0, "")
    assert "--from-offset 99999 is past the end of the data: the last record is offset 522" in p.stderr
    assert shell("log", "--from-offset", 99999, strict=True).returncode == 1
    assert shell("log", "--from-offset", 522, strict=True).returncode == 0


def test_log_impossible_range_and_diff_past_the_end_exit_2():
    p = shell("log", "--from-offset", 520, "--to-offset", 510)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "log: --from-offset 520 is after --to-offset 510: no record is in that range\n"
    p = shell("diff", "--from-offset", 9999)
    assert (p.returncode, p.stdout) == (2, "")
    assert "there is no image at that point to compare with" in p.stderr
