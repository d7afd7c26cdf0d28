"""A real S3 server for the Spark tests: S3Proxy on loopback.

S3Proxy (``org.gaul:s3proxy`` from Maven Central) serves the S3 REST API
(buckets, objects, paged ``ListObjectsV2``, S3's error codes such as
``NoSuchBucket``) over a jclouds blob store; here the in-memory
``transient`` store, so nothing is written to disk. It runs as one plain JVM
(heap capped) on a free port of 127.0.0.1 with authorization on
(``aws-v2-or-v4``): every request is signed with an identity's secret, and a
wrong secret is refused (403 ``SignatureDoesNotMatch``).

S3Proxy has no bucket or prefix policies; what it can deny is a whole
bucket. Each :class:`Identity` is one of its ``--properties`` files: an
identity, its secret, its own in-memory store and the buckets it owns
(``s3proxy.bucket-locator.N``). A bucket owned by one identity is refused to
every other (403); a bucket no identity owns is looked for in the store of
the identity that asks. Objects are put with HTTP PUTs the test signs itself
(AWS signature version 2: the test's own upload, not the code under test).
Its jars are resolved once by Maven into
``${METASHELL_S3PROXY_CACHE:-~/.cache/metashell/s3proxy}/VERSION/server/``
(:mod:`.maven`). docs/architecture.md says why S3Proxy and not SeaweedFS.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import shutil
import socket
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.utils import formatdate
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


@dataclass(frozen=True)
class Identity:
    """An S3 user of the server: access key, secret, and the buckets it alone
    may address (globs, as S3Proxy's bucket locators take them)."""

    access_key: str
    secret: str
    buckets: "tuple[str, ...]" = ()

    def properties(self, endpoint: str) -> str:
        """Its S3Proxy properties file (the server's settings are the same in each)."""
        locators = "".join(f"s3proxy.bucket-locator.{i}={b}\n"
                           for i, b in enumerate(self.buckets, 1))
        return (f"s3proxy.endpoint={endpoint}\ns3proxy.authorization=aws-v2-or-v4\n"
                f"s3proxy.identity={self.access_key}\ns3proxy.credential={self.secret}\n"
                f"jclouds.provider=transient\n{locators}")

    def authorization(self, method: str, content_type: str, date: str, path: str) -> str:
        """The ``Authorization`` header of a request signed with AWS's version 2."""
        signed = f"{method}\n\n{content_type}\n{date}\n{path}".encode()
        digest = hmac.new(self.secret.encode(), signed, hashlib.sha1).digest()
        return f"AWS {self.access_key}:{base64.b64encode(digest).decode()}"


#: the identity the tests' s3a settings use (:func:`.s3a.settings`)
USER = Identity("metashell", "metashell-secret")


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
    """A running S3Proxy; ``endpoint`` is its URL. ``identities``: its users,
    the first of which signs the requests that name none."""

    def __init__(self, identities: "tuple[Identity, ...]" = (USER,)):
        self.identities = identities
        self.dir = Path(tempfile.mkdtemp(prefix="metashell-s3-"))
        self.proc = None
        self.endpoint = None
        self.started_s = None

    def start(self) -> "S3Proxy":
        classpath = os.pathsep.join(str(j) for j in jars())
        began = time.monotonic()
        self.endpoint = f"http://127.0.0.1:{free_port()}"
        properties = []
        for i, identity in enumerate(self.identities):
            conf = self.dir / f"s3proxy-{i}.conf"
            conf.write_text(identity.properties(self.endpoint))
            properties += ["--properties", str(conf)]
        (self.dir / "logback.xml").write_text(LOGGING)
        cmd = [processes.java(), "-Xmx256m",
               f"-Dlogback.configurationFile={self.dir / 'logback.xml'}",
               "-cp", classpath, MAIN, *properties]
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

    def request(self, method: str, path: str, data: bytes = b"",
                identity: "Identity | None" = None) -> bytes:
        """``method path`` signed by ``identity`` (the first one's if none); a
        query in ``path`` must name no sub-resource (it is not signed)."""
        signer = identity or self.identities[0]
        content_type, date = "application/octet-stream", formatdate(usegmt=True)
        resource = path.split("?", 1)[0]
        headers = {"Content-Type": content_type, "Date": date,
                   "Authorization": signer.authorization(method, content_type, date, resource)}
        req = urllib.request.Request(self.endpoint + path, data=data if method == "PUT" else None,
                                     method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()

    def make_bucket(self, bucket: str, identity: "Identity | None" = None) -> None:
        self.request("PUT", f"/{bucket}", identity=identity)

    def upload(self, local: "Path | str", bucket: str, prefix: str,
               identity: "Identity | None" = None) -> None:
        """Every file below ``local`` as ``s3://bucket/prefix/<relative path>``."""
        local = Path(local)
        files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
        for f in files:
            rel = f.name if f == local else f.relative_to(local).as_posix()
            self.request("PUT", f"/{bucket}/{prefix}/{rel}", f.read_bytes(), identity)

    def stop(self) -> None:
        if self.proc is not None:
            processes.stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)
