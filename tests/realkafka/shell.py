"""metashell run in-process on real Kafka's files, as the tests use it."""

from __future__ import annotations

import json

from tests.support.spark import shell   # the same in-process run the Spark tests compare with


def shell_json(path, *words, allow_notes: bool = False, **kwargs):
    """The JSON answer of a command that must succeed with nothing on stderr
    (with ``allow_notes``, but the notes of what ``--until-offset`` left out)."""
    status, out, err = shell(path, *words, **kwargs)
    assert status == 0, f"{path}: {err}"
    if allow_notes:
        err = "".join(line for line in err.splitlines(True) if "--until-offset" not in line)
    assert err == "", f"{path}: warnings on stderr: {err}"
    return json.loads(out)


def shell_text(path, *words, until_offset=None) -> str:
    """The text answer of ``kafka-metadata-shell -s PATH [--until-offset N]
    WORDS...`` (in-process), which must succeed; notes of what
    ``--until-offset`` left out are allowed on stderr, nothing else."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from metashell.cli import main

    args = ["-s", str(path)] + (["--until-offset", str(until_offset)] if until_offset is not None else [])
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(args + list(words), standalone_mode=False)
    assert status == 0, f"{path} {' '.join(words)}: {err.getvalue()}"
    other = [line for line in err.getvalue().splitlines() if "--until-offset" not in line]
    assert not other, f"{path} {' '.join(words)}: {other}"
    return out.getvalue()


def shell_lines(path, *words, **kwargs) -> "list[str]":
    """The lines of a JSON-lines answer (``log -o json``) that must succeed
    with nothing on stderr."""
    status, out, err = shell(path, *words, **kwargs)
    assert (status, err) == (0, ""), f"{path}: exit {status}: {err}"
    return out.splitlines()
