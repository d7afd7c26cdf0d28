"""A real HDFS for the Spark tests: a NameNode and two DataNodes on loopback.

``MiniDFSCluster`` of ``hadoop-client-minicluster`` (at PySpark's Hadoop
version, :mod:`.hadoop_jars`) run by Hadoop's own
``org.apache.hadoop.test.MiniDFSClusterManager`` as one plain JVM (heap
capped), its storage in a temporary folder, permissions on; the NameNode's
port is read from the details file the manager writes once it serves.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import processes
from .hadoop_jars import minicluster_jars

MAIN = "org.apache.hadoop.test.MiniDFSClusterManager"
START_TIMEOUT_S = 300


class MiniHdfs:
    """A running MiniDFSCluster; ``uri`` is ``hdfs://127.0.0.1:PORT``."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="metashell-hdfs-"))
        self.proc = None
        self.uri = None
        self.started_s = None

    def start(self) -> "MiniHdfs":
        began = time.monotonic()
        classpath = os.pathsep.join(str(j) for j in minicluster_jars())
        details = self.dir / "details.json"
        cmd = [processes.java(), "-Xmx512m", "-cp", classpath, MAIN,
               "-datanodes", "2", "-format", "-writeDetails", str(details),
               "-D", f"hdfs.minidfs.basedir={self.dir / 'data'}",
               "-D", "dfs.permissions.enabled=true",
               "-D", "dfs.namenode.rpc-bind-host=127.0.0.1"]
        env = {**os.environ, "HADOOP_USER_NAME": "hdfs"}   # the superuser; tests read as others
        self.proc = processes.start(cmd, self.dir, "hdfs.log", env=env)
        port = processes.wait_for(lambda: _port(details), "HDFS (MiniDFSCluster)", self.proc,
                                  self.dir / "hdfs.log", START_TIMEOUT_S)
        self.uri = f"hdfs://127.0.0.1:{port}"
        self.started_s = time.monotonic() - began
        return self

    def stop(self) -> None:
        if self.proc is not None:
            processes.stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


def _port(details: Path) -> "int | None":
    try:
        return int(json.loads(details.read_text())["namenode_port"])
    except (OSError, ValueError, KeyError):
        return None


def filesystem(spark, uri: str, user: str):
    """Hadoop's ``FileSystem`` of ``uri`` acting as ``user`` (simple authentication)."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI(uri), conf, user)


def upload(spark, local: Path, uri: str, user: str = "hdfs") -> None:
    """Copy the folder or file ``local`` to ``uri`` as ``user`` (the superuser)."""
    jvm = spark.sparkContext._jvm
    fs = filesystem(spark, uri, user)
    try:
        fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(str(local)),
                             jvm.org.apache.hadoop.fs.Path(uri))
    finally:
        fs.close()
