"""Jars from Maven Central for the tests' real servers (Kafka releases,
Hadoop's MiniDFSCluster and s3a), copied once into a cache outside the
repository: ``CACHE/VERSION/<kind>/`` holds an artifact list's jars and
their runtime dependencies, resolved by ``mvn dependency:copy-dependencies``
from a generated pom (local repository ``CACHE/m2``).

Several test processes may ask for the same jars at once, so resolution
holds a file lock and builds in a temporary directory renamed into place
when whole: a half-resolved directory is never used."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def resolved_jars(cache: Path, version: str, kind: str, artifacts, timeout_s: int) -> list[Path]:
    """The jars of ``artifacts`` ((groupId, artifactId, version) triples) and
    their runtime dependencies, in name order, resolving them once."""
    folder = resolved_dir(cache, version, kind, artifacts, timeout_s)
    return sorted(p for p in folder.iterdir() if p.suffix == ".jar")


def resolved_dir(cache: Path, version: str, kind: str, artifacts, timeout_s: int) -> Path:
    """The directory of ``kind``'s jars for ``version``, resolving it once."""
    final = cache / version / kind
    if (final / ".complete").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f".{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / ".complete").exists():
            _resolve_into(cache, final, artifacts, timeout_s)
    return final


def _resolve_into(cache: Path, final: Path, artifacts, timeout_s: int) -> None:
    """Copy ``artifacts`` and their runtime dependencies into ``final``, atomically."""
    work = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}-"))
    try:
        (work / "pom.xml").write_text(_pom(artifacts))
        jars = work / "jars"
        _run_maven(cache / "m2", work, jars, timeout_s)
        (jars / ".complete").write_text("")
        if final.exists():
            shutil.rmtree(final)
        os.rename(jars, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_maven(repo: Path, work: Path, out: Path, timeout_s: int) -> None:
    cmd = ["mvn", "-q", "-B", "-f", str(work / "pom.xml"),
           f"-Dmaven.repo.local={repo}",
           "dependency:copy-dependencies", "-DincludeScope=runtime",
           f"-DoutputDirectory={out}"]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout_s)
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
  <artifactId>test-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
