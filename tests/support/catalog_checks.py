"""Checks of the record catalog that several test modules share (no tests
here): every (message, version) it can decode, its messages compared with
Kafka's JSON schemas (of the shared reference or of a release), and
generated values of any record at any version, and what a decoder did
with some bytes, to compare two decoders strictly."""

from __future__ import annotations

from hypothesis import strategies as st

from metashell.kraft import catalog
from metashell.kraft.fields import MISSING, Field, Versions
from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.schema import Message


def versions(m: Message) -> list[int]:
    """Every version of ``m`` the catalog decodes."""
    r = m.valid_range
    return list(range(r.lo, r.hi + 1))


def _cases() -> list[tuple[str, Message, int]]:
    out = []
    for key, m in sorted(catalog.METADATA.items()):
        out += [(f"f1-{m.name}-v{v}", m, v) for v in versions(m)]
    for key, m in sorted(catalog.METADATA_2_8.items()):
        out += [(f"f0-{m.name}-v{v}", m, v) for v in versions(m)]
    for key, alts in sorted(catalog.SUPERSEDED.items()):
        for m in alts:
            out += [(f"old-{m.name}-{m.layout}-v{v}", m, v) for v in versions(m)]
    for key, m in sorted(catalog.CONTROL.items()):
        out += [(f"ctl-{m.name}-v{v}", m, v) for v in versions(m)]
    m = catalog.LEADER_CHANGE_2_8
    out += [(f"ctl-{m.name}-2.8-v0", m, 0)]
    return out


# every (message, version) the catalog can decode, and a test id for each
CASES = _cases()
CASE_IDS = [c[0] for c in CASES]
CASE_PARAMS = [c[1:] for c in CASES]


_INT_TYPES = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def _kafka_default(raw, ftype: str):
    """A JSON ``default`` as the Python value the catalog uses."""
    if isinstance(raw, bool) or isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return raw
    s = str(raw).strip()
    if s == "null":
        return None
    if ftype == "bool":
        assert s in ("true", "false"), s
        return s == "true"
    if ftype in _INT_TYPES:
        neg = s.startswith("-")
        body = s[1:] if neg else s
        value = int(body, 16) if body.lower().startswith("0x") else int(body)
        return -value if neg else value
    if ftype == "float64":
        return float(s)
    return s  # string / uuid literal


def compare_fields(ours, theirs: list[dict], common: dict, where: str,
                    through: "int | None" = None) -> None:
    """``ours`` equals Kafka's ``theirs``; with ``through``, only the fields of
    versions up to ``through`` (nested ones too) are compared."""
    if through is not None:
        ours = _fields_through(ours, through)
    assert [f.name for f in ours] == [t["name"] for t in theirs], f"{where}: field names/order"
    for f, t in zip(ours, theirs):
        w = f"{where}.{f.name}"
        assert isinstance(f, Field)
        assert f.type == t["type"], w
        assert f.versions_range == Versions(t.get("versions", "none")), f"{w} versions"
        assert f.nullable_range == Versions(t.get("nullableVersions", "none")), f"{w} nullableVersions"
        if "tag" in t:
            assert f.tag == int(t["tag"]), f"{w} tag"
            assert f.tagged_range == Versions(t.get("taggedVersions", "none")), f"{w} taggedVersions"
        else:
            assert f.tag is None and f.tagged is None, f"{w} is not tagged in Kafka's schema"
        if "default" in t:
            assert f.default is not MISSING, f"{w}: Kafka declares default {t['default']!r}"
            want = _kafka_default(t["default"], f.type)
            assert f.default == want and type(f.default) is type(want), f"{w} default"
        else:
            assert f.default is MISSING, f"{w}: Kafka declares no default"
        sub = t.get("fields")
        if sub is None and f.element_type in common:
            sub = common[f.element_type]
        if f.is_struct:
            assert sub is not None, f"{w}: struct without fields in Kafka's schema"
            compare_fields(f.fields, sub, common, w, through)
        else:
            assert not f.fields and sub is None, w


def _fields_through(fields, hi: int) -> list:
    """The fields that exist in some version up to ``hi`` (a newer release's
    additions dropped), for comparing the catalog with an older schema set."""
    return [f for f in fields if f.versions_range.lo is not None and f.versions_range.lo <= hi]


def compare_message(m: Message, j: dict) -> None:
    """The catalog's message equals Kafka's schema ``j`` for every version
    ``j`` defines; the catalog may know later versions (of later releases)."""
    where = f"{j['_file']} vs {m.name}"
    assert m.name == j["name"], where
    theirs = Versions(j["validVersions"])
    assert m.valid_range.lo == theirs.lo, f"{where} validVersions"
    assert m.valid_range.hi >= theirs.hi, f"{where}: Kafka has versions up to {theirs.hi}"
    assert Versions(m.flexible) == Versions(j.get("flexibleVersions", "none")), f"{where} flexibleVersions"
    common = {s["name"]: s["fields"] for s in j.get("commonStructs", ())}
    compare_fields(m.fields, j["fields"], common, m.name, through=theirs.hi)


_RANGES = {
    "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
    "int64": (-2**63, 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_UUID = st.binary(min_size=16, max_size=16).map(uuid_to_str)


# long values: lengths and counts past one byte (varints of two bytes, arrays
# longer than the decoders' inline tables), read by their shared readers
_LONG_TEXT = st.text(st.characters(codec="utf-8"), min_size=130, max_size=140)


def scalar(t: str, long: bool = False):
    if t in _RANGES:
        return st.integers(*_RANGES[t])
    return {
        "bool": st.booleans(),
        "float64": st.floats(allow_nan=False),
        "uuid": _UUID,
        "string": _LONG_TEXT if long else _TEXT,
        "bytes": st.binary(min_size=130, max_size=140) if long else st.binary(max_size=16),
    }[t]


def _long_list(element_type: str):
    """An array longer than the decoders' inline tables (33-36 elements) whose
    first element is long and the others short: drawing 33 long strings
    character by character is most of a minute of Hypothesis's time and reads
    no other bytes."""
    return st.tuples(scalar(element_type, long=True),
                     st.lists(scalar(element_type), min_size=32, max_size=35)).map(
        lambda first_and_rest: [first_and_rest[0], *first_and_rest[1]])


def record_values(fields, version: int, long: bool = False):
    """A strategy of a record's (or struct's) values at ``version``: every
    field of the version drawn from its type (null too where nullable, a
    tagged one omitted half of the time), the others their default;
    ``long``: strings, bytes and arrays past one byte of length."""
    parts = {}
    for f in fields:
        if version not in f.versions_range:
            parts[f.json] = st.just(f.default_value())
            continue
        if f.is_array:
            elem = record_values(f.fields, version, long) if f.is_struct else scalar(f.element_type, long)
            s = _long_list(f.element_type) if long and not f.is_struct else st.lists(elem, max_size=4)
        elif f.is_struct:
            s = record_values(f.fields, version, long)
        else:
            s = scalar(f.type, long)
        if version in f.nullable_range:
            s = st.none() | s
        # tagged fields: the default (= omitted on the wire) half of the time
        if f.tag is not None:
            s = st.just(f.default_value()) | s
        parts[f.json] = s
    return st.fixed_dictionaries(parts)


def outcome(fn, buf, pos, end):
    """What a decoder did, compared strictly: ``repr`` keeps dict key order,
    list vs tuple, bool vs int, and the error's class and message."""
    try:
        return repr(fn(buf, pos, end))
    except Exception as e:   # the error itself is what is compared
        return f"{type(e).__name__}: {e}"
