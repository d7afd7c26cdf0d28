"""A real Spark standalone cluster for the tests: a master and two workers,
each a separate JVM started from PySpark's own distribution
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``)
on loopback, with capped heaps (daemons 512 MiB, each worker offering 1 core
and 1 GiB to executors) and the project's interpreter as the executors'
Python. Stopped by PID; a worker can be SIGKILLed to test Spark's retries.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from . import processes

START_TIMEOUT_S = 300
_MASTER_URL = re.compile(r"Starting Spark master at (spark://[0-9.]+:[0-9]+)")
_REGISTERED = re.compile(r"Successfully registered with master")


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def daemon_env(python: str = sys.executable) -> dict:
    env = dict(os.environ)
    env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_DAEMON_MEMORY="512m", PYSPARK_PYTHON=python,
               SPARK_LOG_DIR=env.get("SPARK_LOG_DIR", tempfile.gettempdir()))
    return env


class Standalone:
    """``master`` (its ``spark://127.0.0.1:PORT`` URL) and two workers."""

    def __init__(self, python: str = sys.executable):
        self.dir = Path(tempfile.mkdtemp(prefix="metashell-standalone-"))
        self.env = daemon_env(python)
        self.env["SPARK_LOG_DIR"] = str(self.dir)
        self.master_proc = None
        self.workers: list = []
        self.url = None
        self.started_s = None

    def _class(self, main: str, *args: str, name: str):
        cmd = [str(spark_home() / "bin" / "spark-class"), main, *args]
        return processes.start(cmd, self.dir / name, "out.log", env=self.env)

    def start(self, workers: int = 2) -> "Standalone":
        began = time.monotonic()
        self.master_proc = self._class("org.apache.spark.deploy.master.Master", "--host",
                                       "127.0.0.1", "--port", "0", "--webui-port", "0",
                                       name="master")
        log = self.dir / "master" / "out.log"
        self.url = processes.wait_for(lambda: _match(log, _MASTER_URL), "Spark master",
                                      self.master_proc, log, START_TIMEOUT_S)
        for i in range(workers):
            self.start_worker(i)
        self.started_s = time.monotonic() - began
        return self

    def start_worker(self, i: int):
        name = f"worker-{i}"
        proc = self._class("org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                           "--cores", "1", "--memory", "1g", "--webui-port", "0",
                           "--work-dir", str(self.dir / name / "work"), self.url, name=name)
        log = self.dir / name / "out.log"
        processes.wait_for(lambda: _match(log, _REGISTERED), f"Spark {name}", proc, log,
                           START_TIMEOUT_S)
        self.workers.append(proc)
        return proc

    def kill_worker(self, i: int) -> None:
        """SIGKILL a worker and the executor it launched (its child JVM)."""
        proc = self.workers[i]
        os.killpg(proc.pid, signal.SIGKILL)   # the worker's own group: it and its executors
        proc.wait(30)

    def stop(self) -> None:
        for proc in self.workers + [self.master_proc]:
            if proc is not None:
                processes.stop(proc)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)   # executors the worker left
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)


def _match(log: Path, pattern: "re.Pattern"):
    try:
        m = pattern.search(log.read_text(errors="replace"))
    except OSError:
        return None
    return (m.group(1) if m.groups() else True) if m else None
