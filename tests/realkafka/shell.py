"""metashell run in-process on real Kafka's files, as the tests use it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout


def shell(path, *words, until_offset=None, show_secrets=False):
    """``kafka-metadata-shell -s PATH -o json WORDS...``: (status, stdout, stderr)."""
    from metashell.cli import main

    args = ["-s", str(path), "-o", "json"]
    if until_offset is not None:
        args += ["--until-offset", str(until_offset)]
    if show_secrets:
        args.append("--show-secrets")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(args + list(words), standalone_mode=False)
    return status, out.getvalue(), err.getvalue()


def shell_json(path, *words, **kwargs):
    """The JSON answer of a command that must succeed with nothing on stderr."""
    status, out, err = shell(path, *words, **kwargs)
    assert status == 0, f"{path}: {err}"
    assert err == "", f"{path}: warnings on stderr: {err}"
    return json.loads(out)
