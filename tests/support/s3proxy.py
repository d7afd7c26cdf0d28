"""A real S3 server for the Spark tests: S3Proxy on loopback.

S3Proxy (``org.gaul:s3proxy`` from Maven Central) serves the S3 REST API
(buckets, objects, paged ``ListObjectsV2``, S3's error codes such as
``NoSuchBucket``) over a jclouds blob store; here the in-memory
``transient`` store, so nothing is written to disk. It runs as one plain JVM
(heap capped) on a free port of 127.0.0.1 without authorization, so it takes
any credentials; objects are put with plain HTTP PUTs (the test's own
upload, not the code under test). Its jars are resolved once by Maven into
``${METASHELL_S3PROXY_CACHE:-~/.cache/metashell/s3proxy}/VERSION/server/``
(:mod:`.maven`). docs/architecture.md says why S3Proxy and not SeaweedFS.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from . import processes
from .maven import resolved_jars

VERSION = "4.1.0"
MAIN = "org.gaul.s3proxy.Main"
#: S3Proxy 4 uses Jackson 3, which needs Jackson's 2.x annotations at the
#: version its BOM names (2.22); Maven's nearest-wins rule would pick the
#: older one another dependency declares, so it is named outright.
ARTIFACTS = (("org.gaul", "s3proxy", VERSION),
             ("com.fasterxml.jackson.core", "jackson-annotations", "2.22"))
MAVEN_TIMEOUT_S = 1800
START_TIMEOUT_S = 180
LOGGING = """<configuration>
  <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d %-5level %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="out"/></root>
</configuration>
"""


def cache_root() -> Path:
    configured = os.environ.get("METASHELL_S3PROXY_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "metashell" / "s3proxy"


def jars() -> list[Path]:
    """S3Proxy's class path, resolved on first use."""
    return resolved_jars(cache_root(), VERSION, "server", ARTIFACTS, MAVEN_TIMEOUT_S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3Proxy:
    """A running S3Proxy; ``endpoint`` is its URL."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="metashell-s3-"))
        self.proc = None
        self.endpoint = None
        self.started_s = None

    def start(self) -> "S3Proxy":
        classpath = os.pathsep.join(str(j) for j in jars())
        began = time.monotonic()
        self.endpoint = f"http://127.0.0.1:{free_port()}"
        (self.dir / "s3proxy.conf").write_text(
            f"s3proxy.endpoint={self.endpoint}\ns3proxy.authorization=none\n"
            "jclouds.provider=transient\n")
        (self.dir / "logback.xml").write_text(LOGGING)
        cmd = [processes.java(), "-Xmx256m",
               f"-Dlogback.configurationFile={self.dir / 'logback.xml'}",
               "-cp", classpath, MAIN, "--properties", str(self.dir / "s3proxy.conf")]
        self.proc = processes.start(cmd, self.dir, "s3proxy.log")
        processes.wait_for(self._serves, "S3Proxy", self.proc, self.dir / "s3proxy.log",
                           START_TIMEOUT_S)
        self.started_s = time.monotonic() - began
        return self

    def _serves(self) -> bool:
        try:
            self.request("GET", "/")   # ListBuckets
            return True
        except (OSError, urllib.error.URLError):
            return False

    def request(self, method: str, path: str, data: bytes = b"") -> bytes:
        req = urllib.request.Request(self.endpoint + path, data=data if method == "PUT" else None,
                                     method=method,
                                     headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()

    def make_bucket(self, bucket: str) -> None:
        self.request("PUT", f"/{bucket}")

    def upload(self, local: "Path | str", bucket: str, prefix: str) -> None:
        """Every file below ``local`` as ``s3://bucket/prefix/<relative path>``."""
        local = Path(local)
        files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
        for f in files:
            rel = f.name if f == local else f.relative_to(local).as_posix()
            self.request("PUT", f"/{bucket}/{prefix}/{rel}", f.read_bytes())

    def stop(self) -> None:
        if self.proc is not None:
            processes.stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)
