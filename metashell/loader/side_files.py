"""The small files Kafka keeps beside its metadata log, read for display
and planning: ``meta.properties`` (kraft-format.md 16.7), ``quorum-state``
(16.8), ``leader-epoch-checkpoint`` (where each epoch began) and
``partition.metadata`` (whose topic a partition directory holds).

Read-only, and small: a file over ``_SMALL_FILE_LIMIT`` bytes is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from .properties import parse_properties

META_PROPERTIES = "meta.properties"
QUORUM_STATE = "quorum-state"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
#: The topic id Kafka gives ``__cluster_metadata`` (Uuid 0...01) in ``partition.metadata``.
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"

#: meta.properties and quorum-state are tiny; refuse to slurp anything big.
_SMALL_FILE_LIMIT = 1024 * 1024


def _read_small(path: Path) -> bytes:
    """The whole of a small file (at most ``_SMALL_FILE_LIMIT`` bytes)."""
    try:
        with open(path, "rb") as f:
            data = f.read(_SMALL_FILE_LIMIT + 1)
    except OSError as e:
        raise InputError.unreadable(path, e) from None
    if len(data) > _SMALL_FILE_LIMIT:
        raise InputError(path, f"too large ({_SMALL_FILE_LIMIT} bytes at most expected)")
    return data


_INT_KEYS = ("node.id", "broker.id")


def read_meta_properties(path) -> dict:
    """Read a log directory's ``meta.properties`` (kraft-format.md 16.7).

    Returns every property as a string, except ``version`` (int, 0 when absent),
    ``node.id`` and ``broker.id`` (ints). Checks what Kafka checks: version 0
    or 1; version 1 needs ``node.id`` and ``cluster.id``. Raises
    :class:`InputError` with a one-line message on malformed content.
    """
    path = Path(path)
    data = _read_small(path)
    try:
        # Properties.load(InputStream) reads ISO-8859-1; non-Latin-1 is \\u-escaped
        props: dict = parse_properties(data.decode("latin-1"))
    except ValueError as e:
        raise InputError(path, f"malformed meta.properties: {e}") from None
    raw_version = props.get("version", "0").strip()
    try:
        version = int(raw_version)
    except ValueError:
        raise InputError(path, f"malformed meta.properties: version {raw_version!r} "
                               f"is not a number") from None
    if version not in (0, 1):
        raise InputError(path, f"unsupported meta.properties version {version} "
                               f"(expected 0 or 1)")
    props["version"] = version
    for key in _INT_KEYS:
        if key in props:
            try:
                props[key] = int(props[key].strip())
            except ValueError:
                raise InputError(path, f"malformed meta.properties: {key} "
                                       f"{props[key]!r} is not a number") from None
    if version == 1:
        missing = [k for k in ("node.id", "cluster.id") if k not in props]
        if missing:
            raise InputError(path, f"malformed meta.properties: version 1 requires "
                                   f"{' and '.join(missing)}")
    return props


_QUORUM_INT_KEYS = ("leaderId", "leaderEpoch", "votedId", "appliedOffset")


def read_quorum_state(path) -> dict:
    """Read ``__cluster_metadata-0/quorum-state`` (kraft-format.md 16.8).

    One JSON object with ``data_version`` 0 or 1; returned as parsed. Raises
    :class:`InputError` with a one-line message on malformed content.
    """
    path = Path(path)
    data = _read_small(path)
    try:
        state = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        msg = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
        raise InputError(path, f"malformed quorum-state: not JSON ({msg})") from None
    if not isinstance(state, dict):
        raise InputError(path, "malformed quorum-state: expected a JSON object")
    if "data_version" not in state:
        raise InputError(path, "malformed quorum-state: no data_version")
    dv = state["data_version"]
    if isinstance(dv, bool) or not isinstance(dv, int):
        raise InputError(path, f"malformed quorum-state: data_version {dv!r} is not a number")
    if dv not in (0, 1):
        raise InputError(path, f"unsupported quorum-state data_version {dv} (expected 0 or 1)")
    for key in _QUORUM_INT_KEYS:
        v = state.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise InputError(path, f"malformed quorum-state: {key} {v!r} is not a number")
    voters = state.get("currentVoters")
    if voters is not None and not (
            isinstance(voters, list)
            and all(isinstance(v, dict) and isinstance(v.get("voterId"), int) for v in voters)):
        raise InputError(path, "malformed quorum-state: currentVoters is not a list of "
                               "{\"voterId\": n}")
    return state


def read_epoch_starts(partdir) -> "dict[int, int]":
    """``{epoch: start offset}`` from a partition dir's ``leader-epoch-checkpoint``
    (version line ``0``, a count, then ``EPOCH OFFSET`` lines), or ``{}`` when
    it is absent or not in that form: it only helps find where an epoch began."""
    path = Path(partdir) / LEADER_EPOCH_CHECKPOINT
    try:
        lines = _read_small(path).decode("ascii").split("\n")
    except (OSError, InputError, UnicodeDecodeError):
        return {}
    if len(lines) < 2 or lines[0].strip() != "0":
        return {}
    starts = {}
    for line in lines[2:]:
        words = line.split()
        if len(words) == 2 and all(w.lstrip("-").isdigit() for w in words):
            starts[int(words[0])] = int(words[1])
    return starts


def read_partition_topic_id(partdir) -> "str | None":
    """The ``topic_id`` a partition directory's ``partition.metadata`` names
    (``version: 0`` then ``topic_id: <base64 uuid>``), or None when the file is
    absent or not in that form: every partition directory of Kafka 2.8 on has
    one, so it tells a topic's log from the metadata log without reading records."""
    try:
        text = _read_small(Path(partdir) / PARTITION_METADATA).decode("ascii")
    except (OSError, InputError, UnicodeDecodeError):
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    topic_id = fields.get("topic_id", "").strip()
    return topic_id or None
