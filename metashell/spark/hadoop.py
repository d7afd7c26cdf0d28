"""Listing a store through the driver's Hadoop client (``hdfs://``, ``s3a://``, ...).

A fleet under a URI is listed once, on the driver, by Hadoop's own
``FileSystem`` of the user's Spark (``FileSystem.listFiles(path, true)``: one
recursive listing, which on S3 is a flat ``LIST`` of the prefix and on HDFS
an iteration over the NameNode's directory listing), with the session's
Hadoop configuration: credentials, endpoints and path-style access are
whatever ``spark.hadoop.*`` says. Unlike Spark's file sources, Hadoop's
listing keeps folders whose names start with ``_`` or ``.``, so
``__cluster_metadata-0/`` is found. Nothing is opened, created or written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_GLOB = re.compile(r"[*?\[{]")


@dataclass(frozen=True)
class StoreFile:
    """A file of the store: its full URI (as Hadoop writes it) and size."""

    uri: str
    size: int


def is_uri(path: str) -> bool:
    """A store URI (``scheme://...``), other than ``file://``, which is a local path."""
    return bool(_SCHEME.match(path)) and not path.startswith("file://")


def has_glob(path: str) -> bool:
    return bool(_GLOB.search(path))


def local_path(path: str) -> str:
    """``file:///x`` as ``/x``; any other path unchanged."""
    if path.startswith("file://"):
        rest = path[len("file://"):]
        return rest if rest.startswith("/") else "/" + rest.split("/", 1)[-1]
    return path


def list_files(spark, uri: str) -> "list[tuple[str, list[StoreFile]]]":
    """``(root, files below it)`` for each match of ``uri`` (a glob is expanded
    by Hadoop's ``globStatus``), roots as Hadoop qualifies them.
    Raises :class:`InputError` naming ``uri`` and the store's reason."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(conf)
        if has_glob(uri):
            statuses = fs.globStatus(path) or []
        else:
            statuses = [fs.getFileStatus(path)]
        return [(str(s.getPath().toString()), _below(fs, s)) for s in statuses]
    except Exception as e:   # py4j carries the Java exception
        raise InputError(uri, _reason(e)) from None


def _below(fs, status) -> "list[StoreFile]":
    if not status.isDirectory():
        return [StoreFile(str(status.getPath().toString()), int(status.getLen()))]
    found = fs.listFiles(status.getPath(), True)
    out = []
    while found.hasNext():
        f = found.next()
        out.append(StoreFile(str(f.getPath().toString()), int(f.getLen())))
    return out


_JAVA_EXCEPTION = re.compile(r"(?:[a-z0-9_]+\.)+([A-Za-z0-9_$]+(?:Exception|Error)): ?(.*)")
#: the AWS SDK's part of an s3a message: "<operation> on <uri>: ...S3Exception: <text>
#: (Service: S3, Status Code: <n>, Request ID: ...):<S3 error code, or null for a HEAD>"
_S3_ERROR = re.compile(r"(?P<operation>\w+) on \S+: \S*Exception: (?P<text>.*?) "
                       r"\(Service: S3, Status Code: (?P<status>\d+)[^)]*\):?(?P<code>\w*)")


def _reason(e: Exception) -> str:
    """The Java exception's class and message, on one line (no Java trace)."""
    java = getattr(e, "java_exception", None)
    text = str(java.toString()) if java is not None else str(e)
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    m = _JAVA_EXCEPTION.search(first)
    if m is None:
        return first
    kind, message = m.group(1), m.group(2).strip()
    if kind == "FileNotFoundException":
        return "no such file or directory" + (f" ({message})" if message and "not exist" not in
                                              message and "No such" not in message else "")
    if kind == "AccessDeniedException":
        return _access_denied(message)
    return f"{message} ({kind})" if message else kind


def _access_denied(message: str) -> str:
    """A store's refusal (s3a's 401 or 403) in an operator's words. The
    message s3a gives repeats the URI and the SDK's request details; a
    ``HEAD`` (s3a's first look at a path) has no body, so S3's own error code
    (``AccessDenied``, ``SignatureDoesNotMatch``, ...) is often absent."""
    m = _S3_ERROR.search(message)
    if m is None:
        return f"access denied ({message})" if message else "access denied"
    code = m["code"] if m["code"] not in ("", "null") else m["text"]
    return (f"access denied: S3 answered {m['status']} {code} to {m['operation']}: the "
            f"credentials are wrong or not allowed to read it")
