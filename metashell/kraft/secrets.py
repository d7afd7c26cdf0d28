"""What of a metadata record is secret, and what is shown in its place.

A record's secrets are a SCRAM credential's salt and keys (its bytes) and
the value of a config whose name Kafka treats as sensitive
(:func:`.enums.is_sensitive_config`). Each view hides them unless asked
(``--show-secrets``): the tree and ``/image`` node by node, ``describe``
its one line, and the records ``log`` and Spark's ``records`` table print
through :func:`redacted`.
"""

from __future__ import annotations

from . import enums

REDACTED = "[redacted]"

_SCRAM_API = 11    # UserScramCredentialRecord: salts and keys
_CONFIG_API = 4    # ConfigRecord: a sensitive config's value


def redacted(api_key: "int | None", data: dict) -> dict:
    """``data`` of the metadata record of apiKey ``api_key`` with its
    secrets replaced by :data:`REDACTED`."""
    if api_key == _SCRAM_API:
        return _hide_bytes(data)
    if (api_key == _CONFIG_API and data.get("value") is not None
            and enums.is_sensitive_config(data.get("name", ""))):
        return {**data, "value": REDACTED}
    return data


def _hide_bytes(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return REDACTED
    if isinstance(value, dict):
        return {k: _hide_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide_bytes(v) for v in value]
    return value
