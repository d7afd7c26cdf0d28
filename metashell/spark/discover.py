"""Which clusters a fleet path names.

Spark does not expand globs for Python data sources, so the source does it
here. A path is one cluster when the shell's ``-s`` would load it as one (a
metadata file, a metadata log dir, its ``__cluster_metadata-0/``, or a
directory of segments and snapshots); any other directory is searched, and
every such directory found below it is one cluster (its own subdirectories
are not searched again). Only directory listings are read: nothing is
opened for writing, locked or created.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from ..errors import InputError, MetashellError
from ..loader import inputs

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
