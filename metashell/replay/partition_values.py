"""What the partition model's generated code calls
(:mod:`.partition_generated`): Kafka's directory default, and the pieces of
a partition's text."""

from __future__ import annotations

import json

MIGRATING_DIR = "AAAAAAAAAAAAAAAAAAAAAA"   # Kafka's DirectoryId.MIGRATING
SHORT_ARRAY = 16   # render.SHORT_ARRAY: arrays of at most this many numbers on one line
encode_str = json.encoder.encode_basestring   # what render.value_text writes for a string


def default_to_migrating(dirs, n: int) -> list:
    """Kafka's rule: no directories, or all MIGRATING, means MIGRATING for every replica."""
    if not dirs or dirs.count(MIGRATING_DIR) == len(dirs):
        return [MIGRATING_DIR] * n
    return list(dirs)


def ints_text(v, nl: str) -> str:
    """An array of ints as value_text writes it (``nl``: a newline and the indentation)."""
    if type(v) is not list:
        raise TypeError
    if not v:
        return "[]"
    if len(v) <= SHORT_ARRAY:
        return "[" + ", ".join(map(str, v)) + "]"
    return "[" + nl + "    " + ("," + nl + "    ").join(map(str, v)) + nl + "  ]"


def uuids_text(v, nl: str) -> str:
    """An array of uuids (as text) as value_text writes it."""
    if type(v) is not list:
        raise TypeError
    if not v:
        return "[]"
    return "[" + nl + "    " + ("," + nl + "    ").join(map(encode_str, v)) + nl + "  ]"


def named_text(v, names) -> str:
    """An enum's code as text output writes it: its name, else the number."""
    if type(v) is not int:
        raise TypeError
    name = names.get(v)
    return str(v) if name is None else encode_str(name)
