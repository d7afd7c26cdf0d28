"""The fleet tables on a real Spark standalone cluster (a master and two
workers, separate JVMs from PySpark's distribution, on loopback), submitted
with ``--master spark://127.0.0.1:PORT``: the rows equal the local read, also
when a worker is SIGKILLed in the middle of the job (Spark runs its tasks
again on the other worker: nothing missing, nothing twice). metashell reaches
the executors as the README's "Running on a cluster" ships it: its wheel
(``pip wheel --no-deps``) as a ``.zip`` in the Python files (``--py-files``,
``addPyFile``), which the executors import (not the checkout, which they could reach through the project's
interpreter: they report where they found metashell)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLE, REPO
from tests.support.spark import read_table, require_spark
from tests.support.standalone import Standalone

DRIVER = """
import json, os, signal, sys, threading, time
from metashell.spark import read
from metashell.spark.local import start_spark

url, fleet, kill_pid, wheel = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spark = start_spark(url, app_name="metashell-standalone-test",
                    conf={"spark.executor.memory": "512m", "spark.executor.cores": "1",
                          "spark.cores.max": "2", "spark.task.maxFailures": "4"})
spark.sparkContext.addPyFile(wheel)   # spark-submit --py-files, in a session
killed = {}

def kill_when_running():
    tracker = spark.sparkContext.statusTracker()
    while not killed:
        for stage in filter(None, map(tracker.getStageInfo, tracker.getActiveStageIds())):
            if 0 < stage.numCompletedTasks < stage.numTasks:
                os.killpg(kill_pid, signal.SIGKILL)
                killed.update(done=stage.numCompletedTasks, total=stage.numTasks)
                return
        time.sleep(0.05)

if kill_pid:
    threading.Thread(target=kill_when_running, daemon=True).start()
rows = [r.asDict(recursive=True) for r in
        read(spark, fleet, table="partitions").drop("last_change_time").collect()]
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
imported = spark.sparkContext.parallelize(range(4), 4).map(
    lambda _: __import__("metashell").__file__).distinct().collect()
print(json.dumps({"rows": rows, "killed": killed, "executors": executors,
                  "imported": imported}))
spark.stop()
"""


@pytest.fixture(scope="module")
def cluster():
    require_spark()
    server = Standalone().start()
    print(f"\nSpark standalone: master and 2 workers started in {server.started_s:.1f} s")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Enough copies of the example cluster that the job is still running when
    one worker is killed."""
    root = tmp_path_factory.mktemp("standalone-fleet")
    for i in range(24):
        shutil.copytree(EXAMPLE, root / f"c{i:02d}")
    return root


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """metashell's wheel, built from a copy of the sources (the build writes
    its own folders beside them, never into the checkout)."""
    src = tmp_path_factory.mktemp("wheel-src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "metashell", src / "metashell",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = out.glob("metashell-*.whl")
    # Spark puts .zip (.egg, .jar) files on the workers' path, and a wheel is a zip
    return built.rename(built.with_suffix(".zip"))


def _submit(cluster, fleet, wheel: Path, kill_pid: int = 0) -> dict:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")]
                                                         if p]))
    proc = subprocess.run([sys.executable, "-c", DRIVER, cluster.url, str(fleet), str(kill_pid),
                           str(wheel)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=fleet.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    # every executor's metashell is the shipped wheel's (a copy below its work folder)
    assert out["imported"] and all(
        f.endswith(f"/{wheel.name}/metashell/__init__.py") for f in out["imported"]
    ), out["imported"]
    return out


def _key(r):
    return (r["cluster"], r["topic"], r["partition"])


def test_partitions_on_standalone_equal_local_even_when_a_worker_dies(spark, cluster, fleet,
                                                                       wheel):
    want = read_table(spark, "partitions", str(fleet))
    for r in want:
        del r["last_change_time"]
    want.sort(key=_key)

    first = _submit(cluster, fleet, wheel)
    assert first["executors"] == 2
    assert sorted(first["rows"], key=_key) == want

    killed = _submit(cluster, fleet, wheel, kill_pid=cluster.workers[0].pid)
    assert killed["killed"], "the job ended before a worker could be killed"
    assert 0 < killed["killed"]["done"] < killed["killed"]["total"]
    rows = sorted(killed["rows"], key=_key)
    assert len(rows) == len(want)   # nothing twice
    assert rows == want             # nothing missing, nothing changed
