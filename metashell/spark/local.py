"""Starting Spark for metashell's own programs (the fleet report, tests, the
benchmark), with its noise kept off the terminal.

The JVM prints its start-up chatter (module warnings, log4j defaults,
hostname notices) and later progress bars straight to the process's
stderr. It is launched with stderr pointed at a log file instead, so the
terminal shows only what metashell prints; the log stays available for
when something goes wrong. With a local master the Python workers run
this same interpreter with this same metashell (on a real cluster,
``spark-submit`` says how the package reaches the executors: README).
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

QUIET_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}


def start_spark(master: str | None, *, app_name: str = "metashell", conf: dict | None = None,
                log_path: str | None = None):
    """A SparkSession on ``master`` (None: ``spark-submit``'s, else ``local[*]``);
    JVM output goes to ``log_path`` (a new temporary file if None), whose
    name is in ``spark.metashell.log``."""
    from pyspark.sql import SparkSession

    if master is None or master.startswith("local"):
        _use_this_python()
    if log_path is None:
        log_path = new_log()
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in {**QUIET_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.metashell.log", log_path)
    with _stderr_to(log_path):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def new_log() -> str:
    """A new temporary file for Spark's own output."""
    fd, path = tempfile.mkstemp(prefix="metashell-spark-", suffix=".log")
    os.close(fd)
    return path


def _use_this_python() -> None:
    """Local workers: this interpreter (unless PYSPARK_PYTHON says otherwise),
    and this metashell on their path. Workers start as ``python -m``, which
    would put the current directory first on their path: run from inside
    another metashell checkout, they would import that one (PYTHONSAFEPATH,
    Python >= 3.11, leaves it out)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYTHONSAFEPATH", "1")
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    if root not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, path) if p)


@contextmanager
def _stderr_to(log_path: str):
    """Point file descriptor 2 at ``log_path`` while the JVM is launched (it
    keeps the descriptor it inherits); Python's stderr is restored after."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(log_path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
