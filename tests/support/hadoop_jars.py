"""Hadoop's jars for the Spark tests' storage, resolved with Maven.

The HDFS tests run a real NameNode and DataNodes (``MiniDFSCluster`` from
``hadoop-client-minicluster``) and Spark reads S3 through ``hadoop-aws`` and
the AWS SDK bundle it declares. Both are taken at the Hadoop version PySpark
ships (its ``jars/hadoop-client-api-VERSION.jar``), so the client Spark uses
and the servers speak the same release. Jars are copied by
``mvn dependency:copy-dependencies`` from a generated pom into a cache outside
the repository, ``${METASHELL_HADOOP_CACHE:-~/.cache/metashell/hadoop}/VERSION/<kind>/``
(``tests/support/maven.py``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.maven import resolved_jars

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
    return resolved_jars(cache_root(), version, kind, artifacts, MAVEN_TIMEOUT_S)
