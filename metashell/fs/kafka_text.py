"""Kafka's own strings for the values the ``/image`` view shows.

Kafka's 3.5+ shell prints Java ``toString`` forms (``PartitionRegistration(…)``,
``BrokerRegistration(…)``, ``StandardAcl(…)``, ``Double.toString``, an
``ISO_ZONED_DATE_TIME``), so scripts written against it parse those; this
module writes them byte for byte from the image's values, and nothing else.
Where Kafka's text is a bug (the unbalanced delegation-token text,
``Optional[…]`` around the metadata version) the fixed form is written, as
the README's "Coming from Kafka's shell" lists.
"""

from __future__ import annotations

import base64
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from ..kraft import enums
from ..fast.door import RunTextMaker, RunTexts
from ..kraft.primitives import INT64_PAIR
from ..replay.partition_model import layout_state

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SHORT_MAX = 32767
_RECOVERY = enums.LEADER_RECOVERY_STATES


def compare_key(name: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


def java_sorted(names) -> list[str]:
    """``names`` in Java's ``String.compareTo`` order: ``"10" < "2"``, ``"Z" < "a"``
    (Python's own order where every name is ASCII: the same there)."""
    names = list(names)
    if all(map(str.isascii, names)):
        return sorted(names)
    return sorted(names, key=compare_key)


def java_bool(value) -> str:
    return "true" if value else "false"


def java_double(value: float) -> str:
    """Java's ``Double.toString``: plain decimals in [1e-3, 1e7), else
    ``d.dddE<n>``; always a digit after the point."""
    value = float(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    if 1e-3 <= abs(value) < 1e7:
        point = exponent + 1                      # digits before the point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        return f"{sign}{whole}.{digits[point:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest significant digits that read back as ``value`` (Python's
    ``repr``), and the decimal exponent of the first one."""
    _, digits, exp = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    return text, len(digits) + exp - 1


def zoned_time(ms: int) -> str:
    """``ISO_ZONED_DATE_TIME`` of epoch ms in UTC: ``2023-05-10T20:06:51.486Z[UTC]``,
    the fraction without trailing zeros (none at all on a whole second)."""
    t = _EPOCH + timedelta(milliseconds=ms)
    fraction = f"{t.microsecond // 1000:03d}".rstrip("0")
    return f"{t:%Y-%m-%dT%H:%M:%S}{'.' + fraction if fraction else ''}Z[UTC]"


def provenance(offset: int, epoch: int, time: int) -> str:
    return f"offset {offset}, epoch {epoch}, time {zoned_time(time)}"


def uuid_key(text: str) -> tuple[int, int]:
    """Kafka's ``Uuid.compareTo`` order: the two halves as signed longs."""
    raw = base64.urlsafe_b64decode(text + "==")
    return INT64_PAIR.unpack(raw)


def _str_list(values) -> str:
    return "[" + ", ".join(values) + "]"


def version_range(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if hi == _SHORT_MAX:
        return f"{lo}+"
    return f"{lo}-{hi}"


def _endpoints(listeners: list) -> str:
    """Listeners as Kafka's ``Endpoint.toString``, in name order (the tree's
    listener dicts are sorted by name already)."""
    return ", ".join(
        f"Endpoint(listenerName='{e['name']}', securityProtocol={e['securityProtocol']}, "
        f"host='{e['host']}', port={e['port']})" for e in listeners)


def _features(features: dict) -> str:
    return ", ".join(f"{name}: {version_range(r['min'], r['max'])}"
                     for name, r in sorted(features.items(), key=lambda kv: compare_key(kv[0])))


def broker(value: dict) -> str:
    """``BrokerRegistration(…)`` from the native tree's registration value."""
    rack = value["rack"]
    dirs = sorted(value["logDirs"] or [], key=uuid_key)      # Kafka sorts them, not the cordoned
    cordoned = value.get("cordonedLogDirs")
    return (f"BrokerRegistration(id={value['brokerId']}, epoch={value['brokerEpoch']}, "
            f"incarnationId={value['incarnationId']}, "
            f"listeners=[{_endpoints(value['listeners'])}], "
            f"supportedFeatures={{{_features(value['features'])}}}, "
            f"rack={'Optional.empty' if rack is None else f'Optional[{rack}]'}, "
            f"fenced={java_bool(value['fenced'])}, "
            f"inControlledShutdown={java_bool(value['inControlledShutdown'])}, "
            f"isMigratingZkBroker={java_bool(value['isMigratingZkBroker'])}, "
            f"directories={_str_list(dirs)}, "
            f"cordonedDirectories={'null' if cordoned is None else _str_list(cordoned)})")


def controller(value: dict) -> str:
    """``ControllerRegistration(…)`` from the native tree's registration value."""
    return (f"ControllerRegistration(id={value['controllerId']}, "
            f"incarnationId={value['incarnationId']}, "
            f"zkMigrationReady={java_bool(value['zkMigrationReady'])}, "
            f"listeners=[{_endpoints(value['listeners'])}], "
            f"supportedFeatures={{{_features(value['features'])}}})")


def partition(state) -> str:
    """``PartitionRegistration(…)`` of a folded partition (``PartitionState``).
    Python prints a list of ints as Java's ``Arrays.toString`` does; this runs
    once per partition in a ``tree``, so it formats in as few calls as it can."""
    recovery = _RECOVERY.get(state.leader_recovery_state)
    if recovery is None:
        recovery = str(state.leader_recovery_state)
    return (f"PartitionRegistration(replicas={state.replicas}, "
            f"directories=[{', '.join(state.directories)}], isr={state.isr}, "
            f"removingReplicas={state.removing_replicas}, "
            f"addingReplicas={state.adding_replicas}, elr={state.elr}, "
            f"lastKnownElr={state.last_known_elr}, leader={state.leader}, "
            f"leaderRecoveryState={recovery}, leaderEpoch={state.leader_epoch}, "
            f"partitionEpoch={state.partition_epoch})")


class _Slot(str):
    """Where a value goes in a format being written: ``{i}``, and so in a
    list too (``str(list)`` shows its items' ``repr``)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


_SLOT = re.compile(r"\{\d+\}")


def registration_format(layout: tuple, nl: "str | None" = None) -> "str | None":
    """The ``str.format`` format (numbered fields) of :func:`partition` of
    each partition of a run whose only record is its PartitionRecord, whose
    values ``run_values`` read as ``layout`` (one line: ``nl`` is not used;
    the topic id is not in the text), for :data:`RUN_REGISTRATIONS`: made
    by :func:`partition` itself from a model state holding slots
    (``partition_model.layout_state``), so the two cannot differ. None when
    the layout is not one it writes."""
    state = layout_state(layout, lambda i: _Slot("{%d}" % i))
    if state is None:
        return None
    text = partition(state)
    if "{" in _SLOT.sub("", text) or "}" in _SLOT.sub("", text):
        return None   # a brace that is no slot: not a format
    return text


#: :func:`partition` of each partition of a run, written from the values read of
#: its bytes (``tree /image/topics`` at a million partitions: no state folded)
RUN_REGISTRATIONS: RunTextMaker = RunTexts(registration_format, numbered=True)


def acl(value: dict) -> str:
    """``StandardAcl[…]`` (a Java record) from the native tree's ACL value (enum names)."""
    return (f"StandardAcl[resourceType={value['resourceType']}, "
            f"resourceName={value['resourceName']}, patternType={value['patternType']}, "
            f"principal={value['principal']}, host={value['host']}, "
            f"operation={value['operation']}, permissionType={value['permissionType']}]")


def scram(value: dict) -> str:
    """``ScramCredentialData(…)``: salt and keys in lower-case hex (or
    ``[redacted]``, as the value holds them)."""
    def hexed(v):
        return v if v == "[redacted]" else base64.b64decode(v).hex()
    return (f"ScramCredentialData(salt={hexed(value['salt'])}, "
            f"storedKey={hexed(value['storedKey'])}, serverKey={hexed(value['serverKey'])}, "
            f"iterations={value['iterations']})")


def token(token_id: str, value: dict) -> str:
    """A delegation token, balanced (Kafka prints
    ``DelegationTokenDatatokenId=…(owner=…(tokenRequester=…(renewers=…, …), …``)."""
    return (f"DelegationTokenData(tokenId={token_id}, owner={value['owner']}, "
            f"tokenRequester={value['requester']}, renewers={' '.join(value['renewers'])}, "
            f"issueTimestamp={value['issueTimestamp']}, maxTimestamp={value['maxTimestamp']}, "
            f"expiryTimestamp={value['expirationTimestamp']})")
