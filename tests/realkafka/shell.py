"""metashell run in-process on real Kafka's files, as the tests use it."""

from __future__ import annotations

import json

from tests.support.spark import shell   # the same in-process run the Spark tests compare with


def shell_json(path, *words, **kwargs):
    """The JSON answer of a command that must succeed with nothing on stderr."""
    status, out, err = shell(path, *words, **kwargs)
    assert status == 0, f"{path}: {err}"
    assert err == "", f"{path}: warnings on stderr: {err}"
    return json.loads(out)
