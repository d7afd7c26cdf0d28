"""The suite's own workers: a group of tests (tests/conftest.py) runs in one
pytest-xdist worker. When grouping silently fails (pytest 9.2's node ids, see
pyproject.toml), every worker starts every release's Kafka cluster and the
suite takes twice as long, with nothing failing; this test fails instead."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

from tests.support.paths import REPO

FILES = ["tests/unit/test_glob.py", "tests/unit/test_fs_paths.py", "tests/unit/test_diff.py"]


def test_each_test_file_runs_in_one_worker():
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-vv", "-p", "no:cacheprovider",
                           *FILES],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = defaultdict(set)
    for worker, path in re.findall(r"^\[(gw\d+)\] .*?PASSED (tests/[^:]+)::", done.stdout, re.M):
        workers[path].add(worker)
    assert set(workers) == set(FILES), done.stdout[-2000:]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
