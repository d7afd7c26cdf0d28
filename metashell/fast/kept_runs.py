"""Runs of a snapshot's records that listing topics does not need, found
without reading them.

A snapshot holds, after its topics, the cluster's configs (a cluster's topics
mostly carry a few overrides: ``retention.ms``, ``cleanup.policy``, ...), client
quotas, ACLs (an ACL or two per topic and principal is common), SCRAM users and
delegation tokens, each section's records one after another (``MetadataImage.write``).
Nothing that lists topics or partitions needs them, and read and applied one
by one they cost about 4 us each, twice a bare record walk: ``ls /topics`` on
a snapshot with three config overrides per topic took 0.51x the walk instead
of 0.19x, one with two ACLs per topic 0.50x. So the deferring reader finds how
many records of one such kind (:data:`KEPT`) follow one another (one short
Python step per record: its length, and the bytes saying what it is) and
hands the engine one entry for them, ``(first ref, apiKey, count)``; the
engine keeps them until that part of the image is first looked at
(``Image.configs``, ``acls``, ...), then reads and applies them in order
(``RecordStore.run_refs`` gives their refs; ConfigRecords straight from their
bytes, :func:`config_fields`).

A record of such a run, as Kafka writes it (kraft-format.md sections 3, 5)::

    length               zigzag varint, one or two bytes
    attributes           1 byte (any)
    timestampDelta       0
    offsetDelta          zigzag varint, one to three bytes
    key length           -1 (null)
    value length         zigzag varint, one or two bytes
    value                frame version 1, the apiKey, the version, the fields
    headers count        0

Anything else ends the run; the record is then read the usual way.
"""

from __future__ import annotations

from ..kraft.catalog import METADATA
from . import Decided

# The records kept unread, the versions of each kept: ConfigRecord (read from its bytes
# by config_fields and config_values), DelegationTokenRecord, UserScramCredentialRecord,
# ClientQuotaRecord, AccessControlEntryRecord (read from its bytes by acls_decode). The
# reader checks the version of a run's first record, once per run; kept_run does not read
# the others' bodies, and what later reads them checks each one's version there:
# config_fields, config_values and acls_decode take v0 only (anything else they leave to
# the store's decoder, which reads any version as the general path does).
VERSIONS = {
    "ConfigRecord": Decided(reads=range(0, 1)),
    "DelegationTokenRecord": Decided(reads=range(0, 1)),
    "UserScramCredentialRecord": Decided(reads=range(0, 1)),
    "ClientQuotaRecord": Decided(reads=range(0, 1)),
    "AccessControlEntryRecord": Decided(reads=range(0, 1)),
}
# apiKey -> the newest version kept
KEPT = {api: VERSIONS[spec.name].last for api, spec in METADATA.items() if spec.name in VERSIONS}


def kept_run(buf, pos: int, end: int, limit: int, api: int) -> tuple[int, int]:
    """``(n, where they end)`` for the ``n`` (at most ``limit``) records
    from ``buf[pos:]`` (a batch's records end at ``end``) that are records
    of apiKey ``api`` framed as above. Their versions are not read here
    (see :data:`VERSIONS`): this step is all a kept record costs."""
    n = 0
    # `while True`, not `while n < limit`: CPython 3.11 specializes the code of a
    # function called a few times only if its loops jump back unconditionally
    while True:
        if n >= limit:
            break
        b = buf[pos]
        if b < 0x80:
            p = pos + 1
        else:
            c = buf[pos + 1]
            if c >= 0x80:
                break
            b = (b & 0x7F) | (c << 7)
            p = pos + 2
        rend = p + (b >> 1)
        if b & 1 or buf[p + 1] or rend > end:   # a negative length, a timestamp delta
            break
        # past the offset delta, the null key and the value length: frame 1, the apiKey
        if buf[p + 2] < 0x80:
            q = p + 3
        elif buf[p + 3] < 0x80:
            q = p + 4
        elif buf[p + 4] < 0x80:
            q = p + 5
        else:
            break
        if buf[q] != 1:
            break
        if buf[q + 1] < 0x80:
            q += 2
        elif buf[q + 2] < 0x80:
            q += 3
        else:
            break
        if buf[q] != 1 or buf[q + 1] != api or buf[rend - 1]:
            break
        n += 1
        pos = rend
    return n, pos


def record_starts(buf, pos: int, n: int) -> list[int]:
    """Where each of ``n`` records from ``buf[pos:]`` starts (their lengths
    read as :func:`kept_run` read them)."""
    return [start for start, _, _, _ in _framed(buf, pos, n)]


def _framed(buf, pos: int, n: int):
    """Per record of the ``n`` from ``buf[pos:]``: ``(where it starts, its
    offset delta, where its value's fields start (after the frame header),
    where it ends)``, the fields' start None where its framing is not as
    above (a timestamp delta)."""
    for _ in range(n):
        start = pos
        b = buf[pos]
        if b < 0x80:
            p = pos + 1
        else:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            p = pos + 2
        pos = p + (b >> 1)                       # the next record
        u = buf[p + 2]                           # after attributes and timestamp delta: offset delta
        if u < 0x80:
            q = p + 3
        elif buf[p + 3] < 0x80:
            u = (u & 0x7F) | (buf[p + 3] << 7)
            q = p + 4
        else:
            u = (u & 0x7F) | ((buf[p + 3] & 0x7F) << 7) | (buf[p + 4] << 14)
            q = p + 5
        if buf[p + 1]:
            yield start, 0, None, pos
            continue
        q += 5 if buf[q + 1] < 0x80 else 6       # null key, value length, frame version, apiKey, version
        yield start, (u >> 1) ^ -(u & 1), q, pos


def config_fields(buf, pos: int, n: int) -> list:
    """Per record of the run of ``n`` ConfigRecords from ``buf[pos:]``: ``(where it
    starts, offset delta, resourceType, resourceName, name, value)`` read
    straight from its bytes (ConfigRecord v0: an int8 and three compact
    strings, the last nullable, then no tagged fields), or its start alone
    where it is laid out otherwise (a timestamp delta, a string of 127
    bytes or more, tagged fields: the store's decoder reads it)."""
    out = []
    append = out.append
    for start, od, q, end in _framed(buf, pos, n):
        try:
            a = buf[q + 1]                       # resourceName's length + 1
            b = q + 1 + a                        # name's length + 1 at b
            c = b + buf[b]                       # value's length + 1 (0: null) at c
            v = buf[c]
            tags = c + (v or 1)                  # no tagged fields, then no headers
            if (buf[q - 1] or buf[q] >= 0x80 or not 0 < a < 0x80 or not 0 < buf[b] < 0x80
                    or v >= 0x80 or tags != end - 2 or buf[tags] or buf[tags + 1]):
                append((start,))
                continue
            append((start, od, buf[q], str(buf[q + 2:b], "utf-8"),
                    str(buf[b + 1:c], "utf-8"), str(buf[c + 1:tags], "utf-8") if v else None))
        except (IndexError, TypeError, UnicodeDecodeError):   # past the buffer, not UTF-8, a timestamp
            append((start,))                                  # delta: as the decoder says
    return out


def acls_decode(buf, pos: int, n: int) -> bool:
    """Whether each of the run of ``n`` AccessControlEntryRecords from
    ``buf[pos:]`` is v0 laid out as Kafka writes it (id, resourceType,
    resourceName, patternType, principal, host, operation, permissionType;
    strings under 127 bytes, UTF-8; no tagged fields), so that it decodes;
    False where that is not known (the decoder then says): 1 us per record
    instead of 4 for decoding it."""
    try:
        for _, _, q, end in _framed(buf, pos, n):
            if buf[q - 1]:
                return False
            q += 17                              # id, resourceType
            for skip in (1, 0, 2):               # resourceName, patternType; principal; host, the two int8s
                a = buf[q]
                if not 0 < a < 0x80:
                    return False
                str(buf[q + 1:q + a], "utf-8")
                q += a + skip
            if q != end - 2 or buf[q] or buf[q + 1]:
                return False
    except (IndexError, TypeError, UnicodeDecodeError):
        return False
    return True


def config_values(buf, pos: int, n: int, name: bytes) -> "dict | None":
    """``{(resourceType, resourceName): value}`` of the run of ``n``
    ConfigRecords from ``buf[pos:]`` that set config ``name`` (the last
    one's, None where it removes it), if every record of the run is laid
    out as :func:`config_fields` reads one (so that it decodes); else None.
    For ``summary``, which needs every topic's ``min.insync.replicas`` but
    no config applied: under 1 us per record instead of 2 (each config name
    checked to be UTF-8 once)."""
    out = {}
    names = set()   # config names seen to be UTF-8
    try:
        for _, _, q, end in _framed(buf, pos, n):
            a = buf[q + 1]
            b = q + 1 + a
            c = b + buf[b]
            v = buf[c]
            tags = c + (v or 1)
            if (buf[q - 1] or buf[q] >= 0x80 or not 0 < a < 0x80 or not 0 < buf[b] < 0x80
                    or v >= 0x80 or tags != end - 2 or buf[tags] or buf[tags + 1]):
                return None
            resource = str(buf[q + 2:b], "utf-8")
            key = buf[b + 1:c]
            value = str(buf[c + 1:tags], "utf-8") if v else None
            if key == name:
                out[buf[q], resource] = value
            elif key not in names:
                str(key, "utf-8")
                names.add(key)
    except (IndexError, TypeError, UnicodeDecodeError):
        return None
    return out
