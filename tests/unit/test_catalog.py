"""The record catalog: checked against Kafka's own schemas, round-tripped with
generated data for every record and version, and fed hand-made and broken bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.support.paths import SHARED
from metashell.errors import RecordDecodeError
from metashell.kraft import catalog, enums
from metashell.kraft.primitives import read_uvarint, uuid_to_str
from metashell.kraft.fields import MISSING, UNKNOWN_TAGS
from metashell.kraft.schema import Message
from tests.support.catalog_checks import (CASE_IDS, CASE_PARAMS, compare_fields, compare_message, record_values,
                                          versions)

SCHEMAS = SHARED / "reference" / "kafka-schemas"


# ---------------------------------------------------------------------------
# Shape of the catalog
# ---------------------------------------------------------------------------

def test_tables_are_keyed_by_their_own_api_key():
    for table in (catalog.METADATA, catalog.METADATA_2_8, catalog.CONTROL):
        for key, m in table.items():
            assert m.api_key == key, m.name
    assert sorted(catalog.METADATA) == [k for k in range(30) if k != 13]
    assert 30 not in catalog.METADATA  # no release defines it: reported as undecodable
    assert sorted(catalog.METADATA_2_8) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14]
    assert sorted(catalog.CONTROL) == [2, 3, 4, 5, 6]
    assert catalog.CONTROL_NAMES == {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
                                     4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


def test_frames_kinds_and_layouts():
    for m in catalog.METADATA.values():
        assert (m.frame, m.kind, m.layout, m.flexible) == (1, "metadata", None, "0+"), m.name
    for m in catalog.METADATA_2_8.values():
        assert (m.frame, m.kind, m.layout) == (0, "metadata", None), m.name
        assert m.flexible == ("0+" if m.api_key in (5, 6) else "none"), m.name
    for key, alts in catalog.SUPERSEDED.items():
        current = catalog.METADATA[key]
        for m in alts:
            assert (m.api_key, m.frame, m.name, m.flexible) == (key, 1, current.name, "0+")
            assert m.layout and set(versions(m)) <= set(versions(current))
    assert {k: [m.layout for m in v] for k, v in catalog.SUPERSEDED.items()} == {
        10: ["3.0-3.5"], 11: ["3.0-3.4"], 12: ["3.0-3.2"]}
    for m in list(catalog.CONTROL.values()) + [catalog.LEADER_CHANGE_2_8]:
        assert (m.kind, m.flexible) == ("control", "0+"), m.name
    assert catalog.LEADER_CHANGE_2_8.layout == "2.8"
    assert [f.name for f in catalog.LEADER_CHANGE_2_8.fields] == ["LeaderId", "Voters", "GrantingVoters"]


def test_lookup():
    assert catalog.lookup(1, 2) is catalog.METADATA[2]
    assert catalog.lookup(0, 14).name == "QuotaRecord"
    assert catalog.lookup(1, 14).name == "ClientQuotaRecord"
    assert catalog.lookup(1, 13) is None
    assert catalog.lookup(1, 29).name == "UnregisterControllerRecord"
    assert catalog.lookup(1, 30) is None
    assert catalog.lookup(0, 15) is None
    assert catalog.lookup(2, 2) is None


def test_declared_defaults():
    def field(m, *path):
        fields = m.fields
        for name in path:
            f = next(f for f in fields if f.name == name)
            fields = f.fields
        return f

    M = catalog.METADATA
    assert field(M[3], "PartitionId").default == -1
    assert field(M[3], "LeaderRecoveryState").default == 0
    assert field(M[0], "Fenced").default is True
    assert field(M[0], "IsMigratingZkBroker").default is False
    assert field(M[5], "Leader").default == -2
    assert field(M[5], "LeaderRecoveryState").default == -1
    assert field(M[5], "Isr").default is None
    assert field(M[15], "BrokerEpoch").default == -1
    assert field(M[23], "Name").default is None
    assert field(M[3], "Replicas").default is MISSING
    assert M[3].defaults(0)["leader"] == -1
    assert catalog.METADATA_2_8[5].defaults(0)["leader"] == -2


def test_removed_records_match_their_last_schema():
    assert catalog.METADATA[6].fields == catalog.METADATA_2_8[6].fields
    assert [f.name for f in catalog.METADATA[16].fields] == ["Name"]


# ---------------------------------------------------------------------------
# Field by field against Kafka's JSON schemas
# ---------------------------------------------------------------------------

def _load_schema(path: Path) -> dict:
    text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if not line.lstrip().startswith("//"))
    return json.loads(text)


def _schemas(folder: str) -> list[dict]:
    if not SCHEMAS.is_dir():
        pytest.skip(f"shared/reference/kafka-schemas not present: {SCHEMAS}")
    files = sorted((SCHEMAS / folder).glob("*.json"))
    assert files, f"no schemas in {SCHEMAS / folder}"
    return [dict(_load_schema(p), _file=p.name) for p in files]


def test_superseded_layouts_match_the_2_8_fields():
    """The 3.0 layouts replaced in place (section 12) are the 2.8 fields, made flexible."""
    files = {j["apiKey"]: j for j in _schemas("metadata-2.8")}
    for key, alts in catalog.SUPERSEDED.items():
        for m in alts:
            compare_fields(m.fields, files[key]["fields"], {}, f"{m.name} {m.layout}")


@pytest.mark.parametrize("folder,table", [("metadata", "METADATA"), ("metadata-2.8", "METADATA_2_8")])
def test_metadata_catalog_matches_kafka_schemas(folder, table):
    ours = getattr(catalog, table)
    seen = set()
    for j in _schemas(folder):
        assert j["type"] == "metadata"
        key = j["apiKey"]
        assert key in ours, f"{j['_file']}: apiKey {key} missing from {table}"
        compare_message(ours[key], j)
        seen.add(key)
    extra = set(ours) - seen
    # 6 (AccessControlRecord) and 16 (RemoveFeatureLevelRecord) were removed
    # from Kafka's tree; they stay decodable here. 29 (UnregisterControllerRecord)
    # came with Kafka 4.4, after these reference schemas were taken
    # (tests/realkafka compares the catalog with each release's own schemas).
    assert extra == ({6, 16, 29} if table == "METADATA" else set()), extra


def test_control_catalog_matches_kafka_schemas():
    by_name = {m.name: m for m in catalog.CONTROL.values()}
    seen = set()
    for j in _schemas("control"):
        assert j["name"] in by_name, f"{j['_file']}: {j['name']} missing from CONTROL"
        compare_message(by_name[j["name"]], j)
        seen.add(j["name"])
    assert seen == set(by_name)


# ---------------------------------------------------------------------------
# Round trips with data generated from the schema
# ---------------------------------------------------------------------------

_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
@_SETTINGS
@given(data=st.data())
def test_round_trip(m, version, data):
    value = data.draw(record_values(m.fields, version))
    raw = bytes(m.encode(version, value))
    decoded, end = m.decode(version, raw)
    assert end == len(raw)
    assert decoded == value
    assert bytes(m.encode(version, decoded)) == raw
    # the same body inside a larger buffer, read through a memoryview
    buf = memoryview(b"\xff" * 3 + raw + b"\xee" * 5)
    again, end = m.decode(version, buf, 3, 3 + len(raw))
    assert again == value and end == 3 + len(raw)


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.large_base_example])
@given(data=st.data())
def test_long_values_round_trip(m, version, data):
    """Strings, bytes and arrays longer than one length byte holds."""
    value = data.draw(record_values(m.fields, version, long=True))
    raw = bytes(m.encode(version, value))
    assert m.decode(version, raw) == (value, len(raw))
    buf = memoryview(b"\xff" * 3 + raw + b"\xee" * 5)
    assert m.decode(version, buf, 3, 3 + len(raw)) == (value, 3 + len(raw))


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
def test_defaults_round_trip(m, version):
    """An all-defaults value encodes to the smallest body and decodes back."""
    value = m.defaults(version)
    raw = bytes(m.encode(version, value))
    assert m.decode(version, raw) == (value, len(raw))
    # absent keys are the defaults too
    assert bytes(m.encode(version, {})) == raw


# ---------------------------------------------------------------------------
# Hand-written vectors (kraft-format.md section 18)
# ---------------------------------------------------------------------------

def _frame(value: bytes) -> tuple[Message, int, int]:
    frame, pos = read_uvarint(value, 0)
    key, pos = read_uvarint(value, pos)
    version, pos = read_uvarint(value, pos)
    m = catalog.lookup(frame, key)
    assert m is not None
    return m, version, pos


def _decode_value(value: bytes) -> tuple[Message, dict]:
    m, version, pos = _frame(value)
    data, end = m.decode(version, value, pos)
    assert end == len(value)
    assert bytes(value[:pos]) + bytes(m.encode(version, data)) == value
    return m, data


def test_vector_topic_record():
    value = bytes.fromhex("010200" "04666f6f" "0102030405060708090a0b0c0d0e0f10" "00")
    m, data = _decode_value(value)
    assert m.name == "TopicRecord"
    assert data == {"name": "foo", "topicId": uuid_to_str(bytes(range(1, 17)))}
    assert data["topicId"] == "AQIDBAUGBwgJCgsMDQ4PEA"


def test_vector_no_op():
    m, data = _decode_value(bytes.fromhex("01140000"))
    assert (m.name, data) == ("NoOpRecord", {})


def test_vector_bootstrap_feature_level():
    value = bytes.fromhex("010c0011") + b"metadata.version" + bytes.fromhex("001300")
    m, data = _decode_value(value)
    assert m.name == "FeatureLevelRecord"
    assert data == {"name": "metadata.version", "featureLevel": 19}
    assert enums.METADATA_VERSIONS[data["featureLevel"]] == "3.7-IV4"
    # the superseded 3.0-3.2 layout does not fit these bytes
    with pytest.raises(RecordDecodeError):
        catalog.SUPERSEDED[12][0].decode(0, value, 3)


def test_vector_leader_change():
    value = bytes.fromhex("0000" "00000001" "020000000100" "020000000100" "00")
    data, end = catalog.CONTROL[2].decode(0, value)
    assert end == len(value)
    assert data == {"version": 0, "leaderId": 1,
                    "voters": [{"voterId": 1, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                    "grantingVoters": [{"voterId": 1, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"}]}
    assert bytes(catalog.CONTROL[2].encode(0, data)) == value
    # the same message in the 2.8 layout: no Version, and the 3.0+ layout does not fit
    old = value[2:]
    data28, _ = catalog.LEADER_CHANGE_2_8.decode(0, old)
    assert data28 == {"leaderId": 1, "voters": [{"voterId": 1}], "grantingVoters": [{"voterId": 1}]}
    assert bytes(catalog.LEADER_CHANGE_2_8.encode(0, data28)) == old
    with pytest.raises(RecordDecodeError):
        catalog.CONTROL[2].decode(0, old)


def test_vector_snapshot_header_and_footer():
    header = bytes.fromhex("0000" "0000000000000000" "00")
    assert catalog.CONTROL[3].decode(0, header) == ({"version": 0, "lastContainedLogTimestamp": 0}, 11)
    assert catalog.CONTROL[4].decode(0, bytes.fromhex("000000")) == ({"version": 0}, 3)


def test_vector_2_8_partition_record_not_flexible():
    m = catalog.METADATA_2_8[3]
    data = dict(m.defaults(0), partitionId=0, replicas=[1], isr=[1], removingReplicas=None,
                addingReplicas=[], leader=1, leaderEpoch=0, partitionEpoch=0)
    raw = bytes(m.encode(0, data))
    assert raw == (bytes.fromhex("00000000") + bytes(16)
                   + bytes.fromhex("00000001 00000001 00000001 00000001 ffffffff 00000000"
                                   " 00000001 00000000 00000000"))
    assert m.decode(0, raw) == (data, len(raw))


# ---------------------------------------------------------------------------
# Unknown tagged fields
# ---------------------------------------------------------------------------

def _partition_v0_body(tags: bytes) -> bytes:
    return (bytes.fromhex("00000007") + bytes(range(16))        # PartitionId 7, TopicId
            + bytes.fromhex("020000000102000000010101")        # Replicas [1], Isr [1], [], []
            + bytes.fromhex("00000001" "00000005" "00000009")  # Leader 1, epochs 5 and 9
            + tags)


def test_unknown_tags_are_kept_and_reencoded():
    # two tags a fork writes (100, 101) around a known one (0 = LeaderRecoveryState)
    tags = bytes.fromhex("03" "000101" "6403aabbcc" "650100")
    body = _partition_v0_body(tags)
    m = catalog.METADATA[3]
    data, end = m.decode(0, body)
    assert end == len(body)
    assert data["leaderRecoveryState"] == 1
    assert data[UNKNOWN_TAGS] == [[100, b"\xaa\xbb\xcc"], [101, b"\x00"]]
    assert (data["partitionId"], data["leader"], data["leaderEpoch"], data["partitionEpoch"]) == (7, 1, 5, 9)
    assert bytes(m.encode(0, data)) == body


def test_known_tag_outside_its_versions_is_kept_as_unknown():
    # PartitionChangeRecord v0 with tag 6 (ELR exists only from v2)
    m = catalog.METADATA[5]
    body = bytes.fromhex("00000003") + bytes(16) + bytes.fromhex("01" "06" "01" "01")
    data, _ = m.decode(0, body)
    assert data["eligibleLeaderReplicas"] is None
    assert data[UNKNOWN_TAGS] == [[6, b"\x01"]]
    assert bytes(m.encode(0, data)) == body
    data2, _ = m.decode(2, body)
    assert data2["eligibleLeaderReplicas"] == [] and UNKNOWN_TAGS not in data2


def test_unknown_tags_in_nested_structs():
    m = catalog.METADATA[0]
    value = m.defaults(3)
    value["endPoints"] = [{"name": "PLAINTEXT", "host": "h", "port": 9092, "securityProtocol": 0,
                           UNKNOWN_TAGS: [[7, b"xyz"]]}]
    raw = bytes(m.encode(3, value))
    data, _ = m.decode(3, raw)
    assert data["endPoints"][0][UNKNOWN_TAGS] == [[7, b"xyz"]]
    assert bytes(m.encode(3, data)) == raw


# ---------------------------------------------------------------------------
# Broken input: always RecordDecodeError, never IndexError and friends
# ---------------------------------------------------------------------------

def _sample(m: Message, version: int) -> bytes:
    value = m.defaults(version)
    for f in m.fields:
        if version in f.versions_range and f.is_array and not f.is_struct:
            value[f.json] = [_sample_scalar(f.element_type)] * 2
        elif version in f.versions_range and not f.is_struct:
            value[f.json] = _sample_scalar(f.type)
        elif version in f.versions_range and f.is_array:
            value[f.json] = [{g.json: g.default_value() for g in f.fields}]
    return bytes(m.encode(version, value))


def _sample_scalar(t: str):
    return {"bool": True, "float64": 1.5, "uuid": "AQIDBAUGBwgJCgsMDQ4PEA", "string": "abc",
            "bytes": b"\x01\x02"}.get(t, 7)


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
def test_truncation_and_trailing_garbage(m, version):
    raw = _sample(m, version)
    assert m.decode(version, raw)[1] == len(raw)
    for cut in range(len(raw)):
        with pytest.raises(RecordDecodeError):
            m.decode(version, raw[:cut])
        # the same, inside a larger buffer whose following bytes must not be read as the body's
        with pytest.raises(RecordDecodeError):
            m.decode(version, raw + b"\x00" * 8, 0, cut)
    with pytest.raises(RecordDecodeError):
        m.decode(version, raw + b"\x00")
    assert m.decode(version, raw + b"\x00", exact=False)[1] == len(raw)


def test_unknown_version_is_a_decode_error():
    with pytest.raises(RecordDecodeError):
        catalog.METADATA[2].decode(1, b"\x00")


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(junk=st.binary(max_size=48))
def test_garbage_never_escapes_as_other_errors(m, version, junk):
    try:
        m.decode(version, junk)
    except RecordDecodeError:
        pass


# ---------------------------------------------------------------------------
# enums
# ---------------------------------------------------------------------------

def test_enum_names():
    assert enums.name_of(enums.CONFIG_RESOURCE_TYPES, 2) == "TOPIC"
    assert enums.CONFIG_RESOURCE_TREE_NAMES == {0: "unknown", 2: "topic", 4: "broker", 8: "broker_logger",
                                                16: "client_metrics", 32: "group"}
    assert enums.name_of(enums.CONFIG_RESOURCE_TYPES, 64) == "UNKNOWN(64)"
    assert enums.name_of(enums.SCRAM_MECHANISMS, 1) == "SCRAM-SHA-256"
    assert enums.name_of(enums.SCRAM_MECHANISMS, 2) == "SCRAM-SHA-512"
    assert enums.SECURITY_PROTOCOLS == {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
    assert enums.ACL_OPERATIONS[15] == "TWO_PHASE_COMMIT"
    assert enums.PATTERN_TYPES[4] == "PREFIXED"
    assert enums.ACL_PERMISSION_TYPES[3] == "ALLOW"
    assert enums.METADATA_VERSIONS[1] == "3.0-IV1"
    assert enums.METADATA_VERSIONS[29] == "4.2-IV1"
    assert enums.METADATA_VERSIONS[30] == "4.3-IV0"
    assert enums.METADATA_VERSIONS[33] == "4.4-IV2"
    assert sorted(enums.METADATA_VERSIONS) == list(range(1, 35))


@pytest.mark.parametrize("key", [
    "ssl.keystore.password", "ssl.key.password", "ssl.truststore.password", "ssl.keystore.key",
    "sasl.jaas.config", "sasl.oauthbearer.client.credentials.client.secret",
    "password.encoder.secret", "password.encoder.old.secret", "delegation.token.secret.key",
    "delegation.token.master.key", "listener.name.internal.ssl.keystore.password",
    "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", "listener.name.external.ssl.keystore.key",
    "some.plugin.password", "custom.client.secret.value", "SSL.KEYSTORE.PASSWORD",
])
def test_sensitive_configs(key):
    assert enums.is_sensitive_config(key)


@pytest.mark.parametrize("key", [
    "retention.ms", "ssl.keystore.location", "sasl.mechanism", "listener.name.internal.ssl.keystore.type",
    "min.insync.replicas", "password.encoder.iterations", "delegation.token.expiry.time.ms",
])
def test_not_sensitive_configs(key):
    assert not enums.is_sensitive_config(key)
