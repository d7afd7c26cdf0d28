"""A record's fields as Kafka's own JSON converter writes them.

``kafka-dump-log --cluster-metadata-decoder`` (and every Kafka tool that
prints a record as JSON) writes, for the record's version, each field that
version has; a tagged field only where it differs from its default (a
PartitionChangeRecord leaves out what it does not change); bytes in
base64. The decoder fills every field of the schema (a missing tagged
field as its default, a field of a later version as its default too), so
``log -o json`` goes through here to print what Kafka prints.
"""

from __future__ import annotations

import base64

from .fields import Field
from .schema import Message

_BYTES = (bytes, bytearray, memoryview)


def kafka_json(spec: Message, version: int, data: dict) -> dict:
    """``data`` (decoded with ``spec`` at ``version``) as Kafka writes it."""
    return _struct(spec.fields, version, data)


def _struct(fields, version: int, data: dict) -> dict:
    out = {}
    for f in fields:
        if version not in f.versions_range:
            continue
        value = data.get(f.json)
        if version in f.tagged_range and value == f.default_value():
            continue
        out[f.json] = _value(f, version, value)
    return out


def _value(f: Field, version: int, value):
    if value is None:
        return None
    if f.is_struct:
        if f.is_array:
            return [_struct(f.fields, version, item) for item in value]
        return _struct(f.fields, version, value)
    if isinstance(value, _BYTES):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value
