"""Running the command line from a test: the real launcher as a process
(``BIN`` with ``env``), or ``metashell.cli.main`` in-process (``run_cli``)."""

from __future__ import annotations

import contextlib
import io
import os

from metashell import cli
from tests.support.paths import REPO

BIN = REPO / "bin" / "kafka-metadata-shell"


def env(tmp_path, **extra) -> dict:
    """The launcher's environment: history in ``tmp_path``, no colour, a
    plain terminal; ``extra`` on top."""
    e = dict(os.environ)
    e.update({"METASHELL_HISTORY_FILE": str(tmp_path / "history"), "NO_COLOR": "1",
              "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"})
    e.update(extra)
    return e


def run_cli(args) -> tuple[int, str, str]:
    """``metashell.cli.main(args)`` in-process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args, standalone_mode=False)
    return status, out.getvalue(), err.getvalue()
