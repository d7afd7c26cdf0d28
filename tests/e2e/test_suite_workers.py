"""The suite's own workers: a group of tests (tests/conftest.py) runs in one
pytest-xdist worker. When grouping silently fails (pytest 9.2's node ids, see
pyproject.toml), every worker starts every release's Kafka cluster and the
suite takes twice as long, with nothing failing; this test fails instead."""

from __future__ import annotations

import os
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


def test_a_real_kafka_modules_tests_of_one_release_run_one_after_another():
    """Its module-scoped cluster is then set up once (tests/realkafka/release_order.py)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-o", "addopts=",
                           "-q", "-n", "0", "-p", "no:cacheprovider",
                           "tests/realkafka/test_live_quorum.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "METASHELL_KAFKA_VERSIONS": "3.3.2,3.4.1,3.5.2"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    releases = re.findall(r"^tests/realkafka/test_live_quorum\.py::\w+\[(\d+\.\d+\.\d+)",
                          done.stdout, re.M)
    runs = [r for i, r in enumerate(releases) if i == 0 or releases[i - 1] != r]
    assert runs == ["3.3.2", "3.4.1", "3.5.2"], releases
