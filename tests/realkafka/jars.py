"""Real Apache Kafka releases as Java class paths, resolved with Maven.

Each release's jars are copied by ``mvn dependency:copy-dependencies`` from a
generated pom into a cache outside the repository,
``${METASHELL_KAFKA_CACHE:-~/.cache/metashell/kafka}/VERSION/<kind>/``
(``tests/support/maven.py``: locked, whole or not at all).

Kafka 3.x logs through SLF4J 1 to log4j 1 (reload4j here), 4.x to log4j2; the
class path carries the binding and the backend, and ``log_config`` a quiet
configuration (WARN, to ``server.log`` in the directory given by the
``kafka.logs.dir`` system property).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.maven import resolved_jars

HERE = Path(__file__).resolve().parent
VERSIONS_FILE = HERE / "versions.txt"
MAVEN_TIMEOUT_S = 900

# Logging backends: (groupId, artifactId, version) added to every class path.
LOG4J1_BACKEND = (("org.slf4j", "slf4j-reload4j", "1.7.36"),
                  ("ch.qos.reload4j", "reload4j", "1.2.25"))
LOG4J2_BACKEND = (("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3"),
                  ("org.apache.logging.log4j", "log4j-core", "2.24.3"),
                  ("org.apache.logging.log4j", "log4j-api", "2.24.3"))

LOG4J1_CONFIG = """\
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=WARN
log4j.logger.org.apache.kafka=WARN
"""

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


def _read_versions() -> dict[str, str]:
    """``versions.txt``: {kafka version: kafka-shell version}, in file order."""
    pinned: dict[str, str] = {}
    for line in VERSIONS_FILE.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            pinned[words[0]] = words[1] if len(words) > 1 else words[0]
    return pinned


_PINNED = _read_versions()
VERSIONS: list[str] = list(_PINNED)


def selected_versions() -> list[str]:
    """The releases to test: ``METASHELL_KAFKA_VERSIONS`` (comma list), default all.

    A version not pinned in versions.txt is allowed (its shell is then taken to
    be the same version), so a new release can be tried before it is pinned."""
    chosen = os.environ.get("METASHELL_KAFKA_VERSIONS", "").strip()
    if not chosen:
        return list(VERSIONS)
    return [v.strip() for v in chosen.split(",") if v.strip()]


def shell_version(version: str) -> str:
    """The kafka-shell release used for ``version``'s files (see versions.txt)."""
    return _PINNED.get(version, version)


def is_kafka4(version: str) -> bool:
    return int(version.split(".")[0]) >= 4


def cache_root() -> Path:
    configured = os.environ.get("METASHELL_KAFKA_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "metashell" / "kafka"


def java_missing() -> "str | None":
    """Why real Kafka cannot run here (no Java or no Maven), or None."""
    if shutil.which("java") is None:
        return "no `java` on PATH; the real-Kafka tests need Java 17+"
    if shutil.which("mvn") is None:
        return "no `mvn` on PATH; the real-Kafka tests resolve Kafka's jars with Maven 3"
    return None


def require_java_and_maven() -> None:
    """Skip when Java or Maven is missing; under ``CI=true`` fail instead."""
    reason = java_missing()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run the real-Kafka tests, but {reason}")
    pytest.skip(reason)


def _backend(version: str):
    return LOG4J2_BACKEND if is_kafka4(version) else LOG4J1_BACKEND


def _server_artifacts(version: str):
    kafka = ("org.apache.kafka", "kafka_2.13", version)
    tools = ("org.apache.kafka", "kafka-tools", version)
    return (kafka, tools) + _backend(version)


def _shell_artifacts(version: str):
    shell = ("org.apache.kafka", "kafka-shell", shell_version(version))
    return (shell,) + _backend(version)


def kafka_classpath(version: str) -> str:
    """Broker/controller (``kafka.Kafka``), StorageTool, the admin CLI tools
    and a logging backend of ``version``, as a ``java -cp`` value."""
    return _classpath(version, "kafka", _server_artifacts(version))


def shell_classpath(version: str) -> str:
    """Kafka's own metadata shell (``org.apache.kafka.shell.MetadataShell``)
    for ``version``'s files, with its dependencies and a logging backend."""
    return _classpath(version, "shell", _shell_artifacts(version))


def log_config(version: str) -> "tuple[str, Path]":
    """The JVM option naming a quiet logging config for ``version``, and its file."""
    root = cache_root() / version
    root.mkdir(parents=True, exist_ok=True)
    if is_kafka4(version):
        path, text, prop = root / "log4j2.properties", LOG4J2_CONFIG, "log4j2.configurationFile"
        option = f"-D{prop}={path}"
    else:
        path, text, prop = root / "log4j.properties", LOG4J1_CONFIG, "log4j.configuration"
        option = f"-D{prop}=file:{path}"
    if not path.exists() or path.read_text() != text:
        _write_atomically(path, text)
    return option, path


def compiled(source: Path, where: Path, classpath: "str | None" = None) -> Path:
    """The classes of ``source``, compiled once per change of it into a folder
    under ``where`` named by its modification time. javac writes into a
    temporary folder renamed into place, so that test processes running side
    by side (pytest-xdist workers) never load a half-written class; the first
    rename wins, the others' copies are dropped."""
    out = where / f"classes-{source.stat().st_mtime_ns}"
    if out.is_dir():
        return out
    where.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=where, prefix=".javac-"))
    try:
        subprocess.run(["javac", "-d", str(work)] + (["-cp", classpath] if classpath else [])
                       + [str(source)], check=True, capture_output=True, timeout=300)
        try:
            work.rename(out)
        except OSError:
            if not out.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _classpath(version: str, kind: str, artifacts) -> str:
    return os.pathsep.join(str(p) for p in _resolved_jars(version, kind, artifacts))


def _resolved_jars(version: str, kind: str, artifacts) -> "list[Path]":
    """``kind``'s jars for ``version``, resolved once (Java and Maven needed then)."""
    if not (cache_root() / version / kind / ".complete").exists():
        require_java_and_maven()
    return resolved_jars(cache_root(), version, kind, artifacts, MAVEN_TIMEOUT_S)
