"""What ``/local`` says about the running metashell, as Kafka's shell says it
about itself (``/local/version``, ``/local/commitId``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from . import __version__

UNKNOWN = "unknown"   # what Kafka prints when its build carries no commit id


def local_entries() -> dict:
    """``version`` and ``commitId`` (looked up when read: it asks git)."""
    return {"version": __version__, "commitId": commit_id}


def commit_id() -> str:
    """The git commit of the source metashell runs from, 16 hex digits like
    Kafka's, or ``unknown`` (an installed copy, no git)."""
    source = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(["git", "-C", str(source), "rev-parse", "--short=16", "HEAD"],
                              capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    text = done.stdout.strip()
    return text if done.returncode == 0 and text else UNKNOWN
