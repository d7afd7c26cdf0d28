"""Hadoop's jars for the Spark tests' storage, resolved with Maven.

The HDFS tests run a real NameNode and DataNodes (``MiniDFSCluster`` from
``hadoop-client-minicluster``) and Spark reads S3 through ``hadoop-aws`` and
the AWS SDK bundle it declares. Both are taken at the Hadoop version PySpark
ships (its ``jars/hadoop-client-api-VERSION.jar``), so the client Spark uses
and the servers speak the same release. Jars are copied by
``mvn dependency:copy-dependencies`` from a generated pom into a cache outside
the repository, ``${METASHELL_HADOOP_CACHE:-~/.cache/metashell/hadoop}/VERSION/<kind>/``;
resolution holds a file lock and builds in a temporary directory renamed into
place when whole, so several test processes can ask at once.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

MAVEN_TIMEOUT_S = 1800


def require_java_and_maven() -> None:
    """Skip when Java or Maven is missing; under ``CI`` fail instead."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if not missing:
        return
    import pytest

    reason = f"no {' or '.join(missing)} on PATH; the HDFS and S3 tests need them"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the store tests, but {reason}")
    pytest.skip(reason)


def hadoop_version() -> str:
    """The Hadoop release of PySpark's own client jars."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("hadoop-client-api-*.jar"):
        return jar.stem[len("hadoop-client-api-"):]
    raise RuntimeError(f"no hadoop-client-api jar in {jars}")


def cache_root() -> Path:
    configured = os.environ.get("METASHELL_HADOOP_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "metashell" / "hadoop"


def minicluster_jars() -> list[Path]:
    """``MiniDFSCluster`` and what it needs at run time (shaded Hadoop client jars)."""
    version = hadoop_version()
    return _jars(version, "minicluster",
                 [("org.apache.hadoop", "hadoop-client-minicluster", version),
                  ("org.apache.hadoop", "hadoop-client-runtime", version),
                  ("org.apache.hadoop", "hadoop-client-api", version)])


def s3a_jars() -> list[Path]:
    """``hadoop-aws`` and what it declares for run time (the AWS SDK bundle,
    the analytics accelerator, wildfly-openssl); Hadoop itself is a provided
    dependency there, so PySpark's own ``hadoop-client-*`` jars are the one Hadoop."""
    version = hadoop_version()
    return _jars(version, "s3a", [("org.apache.hadoop", "hadoop-aws", version)])


def _jars(version: str, kind: str, artifacts) -> list[Path]:
    folder = _resolved_dir(version, kind, artifacts)
    return sorted(p for p in folder.iterdir() if p.suffix == ".jar")


def _resolved_dir(version: str, kind: str, artifacts) -> Path:
    final = cache_root() / version / kind
    if (final / ".complete").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f".{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / ".complete").exists():
            _resolve_into(final, artifacts)
    return final


def _resolve_into(final: Path, artifacts) -> None:
    work = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}-"))
    try:
        (work / "pom.xml").write_text(_pom(artifacts))
        jars = work / "jars"
        _run_maven(work, jars)
        (jars / ".complete").write_text("")
        if final.exists():
            shutil.rmtree(final)
        os.rename(jars, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_maven(work: Path, out: Path) -> None:
    repo = cache_root() / "m2"
    cmd = ["mvn", "-q", "-B", "-f", str(work / "pom.xml"),
           f"-Dmaven.repo.local={repo}",
           "dependency:copy-dependencies", "-DincludeScope=runtime",
           f"-DoutputDirectory={out}"]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                          timeout=MAVEN_TIMEOUT_S)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise RuntimeError(f"maven could not resolve {work / 'pom.xml'}:\n{tail}")


def _pom(artifacts) -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>" for g, a, v in artifacts)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>metashell.tests</groupId>
  <artifactId>hadoop-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
