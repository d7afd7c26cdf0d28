"""The fast path against the general path on one input: the comparison any
test can run on any source (``assert_fast_path_agrees``).

The same source is opened twice, as the shell opens it: once as usual, once
with ``METASHELL_FAST_PATH=0`` (every shortcut off: nothing deferred, every
record a ``Record`` read by its schema; set while the session is used too,
since ``diff`` loads again). Both must print the same, byte for byte, for:

* ``tree`` of every top-level directory but ``/local`` (which names how the
  files were read), as JSON;
* ``summary``, as JSON;
* ``changes`` of every topic, partition and broker, as JSON;
* ``diff --from-offset`` at the middle of what was loaded, and ``--stat``;
* ``log --snapshots``, as JSON (its plain batches are read by
  ``loader.log_walk.quick_records``, the others by the reader);
* the problems reported, after all of the above.

A test gives it a path (a file or a log dir) and open options
(``until_offset`` ...); see ``tests/unit/test_fast_path_off.py`` for the corpus
inputs and the bench's shapes.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from metashell.session.files import open_session
from tests.support.commands import run_command

LEFT_OUT = ("local",)


@contextmanager
def fast_path(on: bool):
    """``METASHELL_FAST_PATH`` set for the block (1 or 0), as before after it."""
    before = os.environ.get("METASHELL_FAST_PATH")
    os.environ["METASHELL_FAST_PATH"] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["METASHELL_FAST_PATH"]
        else:
            os.environ["METASHELL_FAST_PATH"] = before


#: compared in text output too: every partition's text, made a topic at once
#: (read from the run's bytes on the fast path), natively and as Kafka's shell prints it
TEXT_COMMANDS = (["cat", "/topics/*/*/data"], ["tree", "/topics"], ["tree", "/image/topics"])


def command_lines(session) -> list[list[str]]:
    """The commands compared on ``session``'s source."""
    tops = [name for name in session.root.children() if name not in LEFT_OUT]
    words = [["tree", f"/{name}"] for name in tops]
    words.append(["summary"])
    for pattern in ("/topics/*", "/topics/*/*", "/brokers/*"):
        words.append(["changes", pattern])
    middle = max(session.image.last_offset, 0) // 2
    words.append(["diff", "--from-offset", str(middle)])
    words.append(["diff", "--stat", "--from-offset", str(middle)])
    words.append(["log", "--snapshots"])   # log's plain batches are read apart from the reader
    return words


def outputs(path, *, fast: bool, **open_kw) -> dict:
    """What every compared command prints on ``path``, by command line, and
    the problems the session reported, with the fast path on or off."""
    with fast_path(fast):
        session = open_session(path, **open_kw)
        got = {" ".join(w): run_command(session, *w, output="json") for w in command_lines(session)}
        got.update({"text " + " ".join(w): run_command(session, *w) for w in TEXT_COMMANDS})
        got["problems"] = [str(p) for p in session.new_problems(0)]
        got["warnings"] = list(getattr(session, "warnings", ()))
        session.close()
    return got


def assert_fast_path_agrees(path, **open_kw) -> dict:
    """Every compared output of ``path`` equal with the fast path on and off;
    returns the fast path's."""
    fast, general = outputs(path, fast=True, **open_kw), outputs(path, fast=False, **open_kw)
    assert fast.keys() == general.keys()
    for key in fast:
        assert fast[key] == general[key], f"{path}: {key}: the fast path differs from the general path"
    return fast
