"""Kafka's own metadata shell as a Java class path, resolved with Maven.

A minimal resolver for the shell alone (the real-Kafka harness resolves whole
releases with the same names and cache layout):
``${METASHELL_KAFKA_CACHE:-~/.cache/metashell/kafka}/VERSION/shell/`` holds
``org.apache.kafka:kafka-shell:VERSION``'s runtime jars and a log4j2 backend,
copied by ``mvn dependency:copy-dependencies`` from a generated pom into a
temporary directory renamed into place when whole, under a file lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

MAVEN_TIMEOUT_S = 900
LOG4J2_BACKEND = (("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3"),
                  ("org.apache.logging.log4j", "log4j-core", "2.24.3"),
                  ("org.apache.logging.log4j", "log4j-api", "2.24.3"))
LOG4J2_CONFIG = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
"""


def cache_root() -> Path:
    configured = os.environ.get("METASHELL_KAFKA_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "metashell" / "kafka"


def require_java_and_maven() -> None:
    """Skip when Java or Maven is missing; under ``CI=true`` fail instead."""
    missing = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
    if not missing:
        return
    reason = f"no {', '.join(missing)} on PATH: Kafka's shell needs a JDK 17+ and Maven 3"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run the tests against Kafka's shell, but {reason}")
    pytest.skip(reason)


def shell_classpath(version: str) -> str:
    """``org.apache.kafka.shell.MetadataShell`` of a 4.x ``version``, its
    dependencies and a logging backend, as a ``java -cp`` value."""
    final = cache_root() / version / "shell"
    if not (final / ".complete").exists():
        require_java_and_maven()
        final.parent.mkdir(parents=True, exist_ok=True)
        with open(final.parent / ".shell.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (final / ".complete").exists():
                _resolve_into(final, (("org.apache.kafka", "kafka-shell", version),)
                              + LOG4J2_BACKEND)
    return os.pathsep.join(str(p) for p in sorted(final.iterdir()) if p.suffix == ".jar")


def log_config(version: str) -> "tuple[str, Path]":
    """The JVM option naming a quiet log4j2 config (to ``kafka.logs.dir``), and its file."""
    path = cache_root() / version / "log4j2.properties"
    if not path.exists() or path.read_text() != LOG4J2_CONFIG:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(LOG4J2_CONFIG)
        os.replace(tmp, path)
    return f"-Dlog4j2.configurationFile={path}", path


def _resolve_into(final: Path, artifacts) -> None:
    work = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}-"))
    try:
        deps = "\n".join(f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
                         f"<version>{v}</version></dependency>" for g, a, v in artifacts)
        (work / "pom.xml").write_text(
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            "<groupId>metashell.tests</groupId><artifactId>kafka-shell-classpath</artifactId>"
            f"<version>0</version><packaging>pom</packaging><dependencies>{deps}"
            "</dependencies></project>\n")
        jars = work / "jars"
        done = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(work / "pom.xml"),
             f"-Dmaven.repo.local={cache_root() / 'm2'}", "dependency:copy-dependencies",
             "-DincludeScope=runtime", f"-DoutputDirectory={jars}"],
            capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(f"maven could not resolve {work / 'pom.xml'}:\n"
                               + (done.stdout + done.stderr)[-3000:])
        (jars / ".complete").write_text("")
        if final.exists():
            shutil.rmtree(final)
        os.rename(jars, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
