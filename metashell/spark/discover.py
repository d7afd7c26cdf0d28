"""Which clusters a fleet path names.

Spark does not expand globs for Python data sources, so the source does it
here. A path is one cluster when the shell's ``-s`` would load it as one (a
metadata file, a metadata log dir, its ``__cluster_metadata-0/``, or a
directory of segments and snapshots); any other directory is searched, and
every such directory found below it is one cluster (its own subdirectories
are not searched again). Only directory listings are read: nothing is
opened for writing, locked or created.

A store URI (``hdfs://``, ``s3a://``, ...) is listed once by the driver's
Hadoop client (:mod:`.hadoop`) and its clusters are found by the same rules
applied to the names of that listing (:func:`store_clusters`): no
per-directory round trip and no file read on the driver.
"""

from __future__ import annotations

import glob
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, MetashellError
from ..loader import inputs
from ..loader.inputs import BOOTSTRAP_NAME, PARTITION_DIR
from .hadoop import StoreFile

CLUSTER_KINDS = ("logdir", "partition-dir")


def clusters(path: str) -> list[str]:
    """The cluster paths below ``path`` (a file, a folder or a glob), sorted.
    Raises :class:`InputError` when there is no metadata at all."""
    pattern = glob.has_magic(path)
    matches = sorted(glob.glob(path, recursive=True)) if pattern else [path]
    if not matches:
        raise InputError(path, "no file or directory matches this pattern")
    found: list[str] = []
    for match in matches:
        if pattern and not os.path.isdir(match) and not _is_metadata_file(match):
            continue   # a glob also matches meta.properties, indexes ...: not clusters
        found.extend(_below(match))
    if not found:
        if not pattern:
            inputs.classify(Path(path))   # says what the folder is instead, if it can
        raise InputError(path, "no KRaft metadata (no metadata log dir, segment or snapshot) found")
    return sorted(dict.fromkeys(found))


def size(cluster: str) -> int:
    """Bytes of a cluster's files (0 if it cannot be listed): how long its task runs."""
    try:
        if not os.path.isdir(cluster):
            return os.path.getsize(cluster)
        return sum(os.path.getsize(os.path.join(top, f))
                   for top, _, files in os.walk(cluster) for f in files)
    except OSError:
        return 0


def _below(path: str) -> list[str]:
    if not os.path.isdir(path):
        inputs.classify(Path(path))   # a missing or non-metadata file: its one-line error
        return [path]   # a file is read as the shell reads it, whatever its name
    out: list[str] = []
    seen: set[str] = set()
    for top, dirs, _files in os.walk(path, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:   # a symbolic link loop
            dirs[:] = []
            continue
        seen.add(real)
        if _is_cluster_dir(top):
            out.append(top)
            dirs[:] = []
        else:
            dirs.sort()
    return out


def _is_cluster_dir(path: str) -> bool:
    try:
        return inputs.classify(Path(path)) in CLUSTER_KINDS
    except MetashellError:
        return False


def _is_metadata_file(path: str) -> bool:
    try:
        inputs.classify(Path(path))
    except MetashellError:
        return False
    return True


# -- clusters in a store's listing ------------------------------------------------------------

@dataclass(frozen=True)
class StoreCluster:
    """A cluster found in a store: ``uri`` (its folder or file) and the files a
    task needs to load it, each with its path relative to ``uri``'s parent
    (so that the task lays them out as the shell expects them)."""

    uri: str
    files: "tuple[tuple[StoreFile, str], ...]"

    @property
    def size(self) -> int:
        return sum(f.size for f, _ in self.files)

    @property
    def entry(self) -> str:
        """The cluster's own name, relative to its parent."""
        return posixpath.basename(self.uri.rstrip("/"))


def store_clusters(root: str, files: "list[StoreFile]") -> "list[StoreCluster]":
    """The clusters below ``root`` (a folder or file URI) given every file below
    it, by the rules of :func:`clusters` applied to names."""
    root = root.rstrip("/")
    if len(files) == 1 and files[0].uri.rstrip("/") == root:   # a file: read whatever its name
        return [StoreCluster(root, ((files[0], posixpath.basename(root)),))]
    tree = _Folder.of(root, files)
    return sorted(_store_clusters(tree, root), key=lambda c: c.uri)


@dataclass
class _Folder:
    """A folder of a listing: its files by name and its subfolders."""

    files: "dict[str, StoreFile]"
    folders: "dict[str, _Folder]"

    @classmethod
    def of(cls, root: str, files: "list[StoreFile]") -> "_Folder":
        top = cls({}, {})
        for f in files:
            if not f.uri.startswith(root + "/"):
                continue
            *dirs, name = f.uri[len(root) + 1:].split("/")
            here = top
            for d in dirs:
                here = here.folders.setdefault(d, cls({}, {}))
            here.files[name] = f
        return top


def _store_clusters(folder: _Folder, uri: str):
    kind = _folder_kind(folder, posixpath.basename(uri))
    if kind is None:
        for name in sorted(folder.folders):
            yield from _store_clusters(folder.folders[name], f"{uri}/{name}")
        return
    name = posixpath.basename(uri)
    files = [(f, f"{name}/{n}") for n, f in folder.files.items()]
    part = folder.folders.get(PARTITION_DIR) if kind == "logdir" else None
    if part is not None:
        files += [(f, f"{name}/{PARTITION_DIR}/{n}") for n, f in part.files.items()]
    yield StoreCluster(uri, tuple(sorted(files, key=lambda fr: fr[1])))


def _folder_kind(folder: _Folder, name: str) -> "str | None":
    """``logdir``, ``partition-dir`` or None, as :func:`inputs.classify` says
    from a folder's names."""
    if folder.folders.get(PARTITION_DIR) is not None:
        return "logdir"
    if name == PARTITION_DIR or any(_kafka_name(n) for n in folder.files):
        return "partition-dir"
    if BOOTSTRAP_NAME in folder.files:
        return "logdir"
    return None


def _kafka_name(name: str) -> bool:
    """A segment's or snapshot's name as Kafka writes it."""
    return inputs.parse_segment_name(name) is not None or inputs.parse_snapshot_name(name) is not None


def metadata_file_name(name: str) -> bool:
    """A name a glob's match must have to be read as a metadata file."""
    return name.endswith((".log", ".checkpoint")) or _kafka_name(name)
