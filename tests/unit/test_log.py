"""``log``: every record and batch of the files, checked against an
independent reading of them (kafka-python's record walk and a hand decoder
of the common record bodies written here from the format reference), its
filters, ``--batches`` on damaged files and redaction."""

from __future__ import annotations

import io
import json
import shutil
import struct
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from tests.support.paths import CORPORA, EXAMPLE
from tests.support.corpora import corpus_cases, needs_corpora
from metashell.commands import Context, run_words
from metashell.session.files import open_session


# metadata apiKey -> record type (Kafka's metadata/src/main/resources/common/metadata)
METADATA_NAMES = {
    0: "RegisterBrokerRecord", 1: "UnregisterBrokerRecord", 2: "TopicRecord", 3: "PartitionRecord",
    4: "ConfigRecord", 5: "PartitionChangeRecord", 6: "AccessControlRecord", 7: "FenceBrokerRecord",
    8: "UnfenceBrokerRecord", 9: "RemoveTopicRecord", 10: "DelegationTokenRecord",
    11: "UserScramCredentialRecord", 12: "FeatureLevelRecord", 14: "ClientQuotaRecord",
    15: "ProducerIdsRecord", 16: "RemoveFeatureLevelRecord", 17: "BrokerRegistrationChangeRecord",
    18: "AccessControlEntryRecord", 19: "RemoveAccessControlEntryRecord", 20: "NoOpRecord",
    21: "ZkMigrationStateRecord", 22: "RemoveUserScramCredentialRecord",
    23: "BeginTransactionRecord", 24: "EndTransactionRecord", 25: "AbortTransactionRecord",
    26: "RemoveDelegationTokenRecord", 27: "RegisterControllerRecord", 28: "ClearElrRecord",
}
CONTROL_NAMES = {2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord", 4: "SnapshotFooterRecord",
                 5: "KRaftVersionRecord", 6: "VotersRecord"}


def corpus_files() -> list:
    return corpus_cases(lambda: sorted(p for p in CORPORA.rglob("*") if p.is_file() and p.stat().st_size
                                       and p.suffix in (".log", ".checkpoint")))


# ------------------------------------------------------------------ an independent reading

class Body:
    """A cursor over a record value (flexible versions: compact strings and arrays)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def fixed(self, fmt: str):
        (v,) = struct.unpack_from(">" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self) -> "str | None":
        n = self.uvarint() - 1
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def uuid(self) -> str:
        import base64
        raw = self.data[self.pos:self.pos + 16]
        self.pos += 16
        return base64.urlsafe_b64encode(raw)[:22].decode()

    def int32s(self) -> list:
        return [self.fixed("i") for _ in range(self.uvarint() - 1)]


def hand_decode(api_key: int, version: int, body: Body) -> "dict | None":
    """The leading fields of the common record bodies, read by hand."""
    if api_key == 2 and version == 0:
        return {"name": body.string(), "topicId": body.uuid()}
    if api_key == 3:
        d = {"partitionId": body.fixed("i"), "topicId": body.uuid(), "replicas": body.int32s(),
             "isr": body.int32s(), "removingReplicas": body.int32s(),
             "addingReplicas": body.int32s(), "leader": body.fixed("i")}
        # LeaderRecoveryState is a tagged field, after the fixed ones
        d["leaderEpoch"], d["partitionEpoch"] = body.fixed("i"), body.fixed("i")
        return d
    if api_key == 5:
        return {"partitionId": body.fixed("i"), "topicId": body.uuid()}
    if api_key == 12:
        return {"name": body.string(), "featureLevel": body.fixed("h")}
    if api_key == 4:
        return {"resourceType": body.fixed("b"), "resourceName": body.string(),
                "name": body.string()}
    if api_key in (7, 8):
        return {"id": body.fixed("i"), "epoch": body.fixed("q")}
    if api_key == 0:
        return {"brokerId": body.fixed("i")}
    return None


def independent(path: Path) -> list[dict]:
    """Every record of ``path`` by kafka-python's walk, with its type and
    version read from the value's frame header (or the control key)."""
    out = []
    records = MemoryRecords(path.read_bytes())
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        for rec in batch:
            doc = {"offset": rec.offset, "epoch": batch.leader_epoch,
                   "control": batch.is_control_batch, "timestamp": rec.timestamp}
            if batch.is_control_batch:
                _, ctype = struct.unpack(">hh", rec.key[:4])
                doc.update(type=CONTROL_NAMES[ctype], version=0, fields=None)
            else:
                body = Body(rec.value)
                body.uvarint()                              # frame version
                api_key, version = body.uvarint(), body.uvarint()
                doc.update(type=METADATA_NAMES[api_key], version=version,
                           fields=hand_decode(api_key, version, body))
            out.append(doc)
    return out


# ------------------------------------------------------------------ running the command

def run(source: Path, *words, output="text", show_secrets=False) -> tuple[int, str, str]:
    session = open_session(source, show_secrets=show_secrets)
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output=output)
    status = run_words(ctx, ["log", *words])
    return status, out.getvalue(), err.getvalue()


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@needs_corpora
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_record_against_an_independent_reading(path):
    status, out, err = run(path, output="json")
    assert status == 0, err
    ours = json_lines(out)
    theirs = independent(path)
    assert len(ours) == len(theirs)
    for mine, ref in zip(ours, theirs):
        assert (mine["offset"], mine["epoch"], mine["control"], mine["type"], mine["version"]) == \
               (ref["offset"], ref["epoch"], ref["control"], ref["type"], ref["version"])
        assert mine["time"] == _iso(ref["timestamp"])
        if ref["fields"] is not None and mine["data"] is not None:
            assert {k: mine["data"][k] for k in ref["fields"]} == ref["fields"]


@needs_corpora
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_text_is_one_line_per_record(path):
    status, out, _ = run(path)
    assert status == 0
    theirs = independent(path)
    lines = out.splitlines()
    assert len(lines) == len(theirs)
    for line, ref in zip(lines, theirs):
        offset, time, type_, version, _summary = (line.split(None, 4) + [""])[:5]
        assert (int(offset), time, type_, version) == \
               (ref["offset"], _iso(ref["timestamp"]), ref["type"], f"v{ref['version']}")


@needs_corpora
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_batches_against_kafka_python(path):
    status, out, _ = run(path, "--batches", output="json")
    assert status == 0
    ours = json_lines(out)
    theirs = []
    buf = path.read_bytes()
    records = MemoryRecords(buf)
    position = 0
    while (batch := records.next_batch()) is not None:
        theirs.append({"position": position, "baseOffset": batch.base_offset,
                       "lastOffset": batch.last_offset, "count": batch.records_count,
                       "epoch": batch.leader_epoch, "producerId": batch.producer_id,
                       "control": batch.is_control_batch, "crcValid": batch.validate_crc(),
                       "size": batch.size_in_bytes, "maxTime": _iso(batch.max_timestamp)})
        position += batch.size_in_bytes
    assert [{k: b[k] for k in theirs[0]} for b in ours] == theirs
    assert all(b["file"] == str(path) and b["compression"] == "none" for b in ours)


def test_log_dir_lists_every_segment_and_with_snapshots_the_snapshots():
    _, out, _ = run(EXAMPLE, "--batches", output="json")
    files = {Path(b["file"]).name for b in json_lines(out)}
    assert files == {"00000000000000000000.log"}
    _, out, _ = run(EXAMPLE, "--batches", "--snapshots")
    heads = [line for line in out.splitlines() if line.startswith("# ")]
    assert [Path(h[2:]).name for h in heads] == [
        "bootstrap.checkpoint", "00000000000000000194-0000000001.checkpoint",
        "00000000000000000000.log"]


# ------------------------------------------------------------------ filters

def _all_records() -> list[dict]:
    return json_lines(run(EXAMPLE, output="json")[1])


def test_offset_and_time_windows():
    every = _all_records()
    _, out, _ = run(EXAMPLE, "--from-offset", "100", "--to-offset", "120", output="json")
    assert json_lines(out) == [r for r in every if 100 <= r["offset"] <= 120]
    t = every[len(every) // 2]["time"]
    _, out, _ = run(EXAMPLE, "--from-time", t, output="json")
    assert json_lines(out) == [r for r in every if r["time"] >= t]
    _, out, _ = run(EXAMPLE, "--to-time", t, output="json")
    assert json_lines(out) == [r for r in every if r["time"] <= t]


def test_type_filter_takes_short_names_in_any_case():
    every = _all_records()
    _, out, _ = run(EXAMPLE, "--type", "partitionchange,Topic", output="json")
    got = json_lines(out)
    assert got and got == [r for r in every if r["type"] in ("PartitionChangeRecord", "TopicRecord")]
    status, out, err = run(EXAMPLE, "--type", "Nonsense")
    assert status == 2 and not out and "unknown record type 'Nonsense'" in err


def test_entity_filter_follows_topics_by_name_and_brokers():
    every = _all_records()
    topic = next(r for r in every if r["type"] == "TopicRecord")["data"]
    _, out, _ = run(EXAMPLE, "--entity", f"/topics/{topic['name']}", output="json")
    got = json_lines(out)
    assert got == [r for r in every if r["type"] in ("TopicRecord", "PartitionRecord",
                                                     "PartitionChangeRecord", "RemoveTopicRecord")
                   and r["data"].get("topicId") == topic["topicId"]]
    _, out, _ = run(EXAMPLE, "--entity", f"/topics/{topic['name']}/0", output="json")
    assert json_lines(out) == [r for r in got if r["data"].get("partitionId") == 0]
    _, out, _ = run(EXAMPLE, "--entity", "/brokers/1/registration", output="json")
    got = json_lines(out)
    assert got and all(r["data"].get("brokerId", r["data"].get("id")) == 1 for r in got)


def test_batches_refuse_record_filters():
    status, _, err = run(EXAMPLE, "--batches", "--type", "Topic")
    assert status == 2 and "--type and --entity select records" in err


# ------------------------------------------------------------------ damage

def _damaged_copy(tmp_path, how: str) -> Path:
    src = EXAMPLE / "__cluster_metadata-0" / "00000000000000000000.log"
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    data = bytearray(dst.read_bytes())
    records = MemoryRecords(bytes(data))
    positions = []
    pos = 0
    while (batch := records.next_batch()) is not None:
        positions.append(pos)
        pos += batch.size_in_bytes
    target = positions[3]
    if how == "crc":
        data[target + 70] ^= 0xFF        # a byte inside the records
    else:
        data[target + 16] = 7            # the magic byte
    dst.write_bytes(bytes(data))
    return dst, target


@pytest.mark.parametrize("how", ["crc", "magic"])
def test_damaged_batches_are_listed_not_skipped(tmp_path, how):
    path, target = _damaged_copy(tmp_path, how)
    status, out, err = run(path, "--batches", output="json")
    assert status == 1
    batches = json_lines(out)
    bad = [b for b in batches if b["position"] == target]
    assert len(bad) == 1
    if how == "crc":
        assert bad[0]["crcValid"] is False
    else:
        assert "magic 2, found 7" in bad[0]["error"] and str(path) in bad[0]["error"]
    assert sum(1 for b in batches if b.get("crcValid")) == len(batches) - 1
    status, out, err = run(path, "--batches")
    assert status == 1 and ("CRC MISMATCH" in out if how == "crc" else "damaged " in out)


def test_damaged_batches_in_record_mode_are_one_line_each_in_order(tmp_path):
    path, target = _damaged_copy(tmp_path, "crc")
    status, out, err = run(path, output="json")
    assert status == 1
    assert err.count("\n") == 1 and f"{path} (byte {target}" in err and "CRC-32C" in err
    every = _all_records()
    ours = json_lines(out)
    assert len(ours) < len(every) and all(r in every for r in ours)


# ------------------------------------------------------------------ secrets

def test_secrets_are_redacted_unless_asked():
    _, out, _ = run(EXAMPLE, "--type", "UserScramCredential", output="json")
    scram = json_lines(out)
    assert scram and all(r["data"]["salt"] == "[redacted]" and r["data"]["storedKey"]
                         == "[redacted]" for r in scram)
    _, out, _ = run(EXAMPLE, "--type", "UserScramCredential", output="json", show_secrets=True)
    assert all(r["data"]["salt"] != "[redacted]" for r in json_lines(out))


def test_json_is_kafkas_json_of_each_record_version():
    """Kafka's JSON (kafka-dump-log): the fields of the record's version
    only, tagged ones only where not at their default, bytes in base64."""
    import base64

    from metashell.kraft import catalog
    _, out, _ = run(EXAMPLE, "--type", "PartitionChange", output="json")
    changes = json_lines(out)
    assert changes
    for r in changes:
        fields = {f.json: f for f in catalog.METADATA[5].fields}
        assert {"partitionId", "topicId"} <= r["data"].keys()
        for name, value in r["data"].items():
            f = fields[name]
            assert r["version"] in f.versions_range, (r["version"], name)
            assert f.tag is None or value != f.default_value(), (r["offset"], name)
    assert any("leader" not in r["data"] for r in changes)     # -2: leader unchanged
    _, out, _ = run(EXAMPLE, "--type", "UserScramCredential", output="json", show_secrets=True)
    for r in json_lines(out):
        assert len(base64.b64decode(r["data"]["salt"], validate=True)) >= 16


def _iso(ms: int) -> str:
    from datetime import datetime, timezone
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def test_completion_of_options_entities_and_types():
    from metashell.commands import complete_line
    session = open_session(EXAMPLE)
    ctx = Context.for_session(session, out=io.StringIO(), err=io.StringIO())
    assert "--batches" in complete_line(ctx, "log --b")[1]
    assert complete_line(ctx, "log --entity /bro")[1] == ["/brokers/"]
    assert complete_line(ctx, "log --type Topic,PartitionC")[1] == ["Topic,PartitionChangeRecord"]


# ------------------------------------------------------------------ one-shot: planned, not replayed

def test_one_shot_log_plans_the_files_and_replays_nothing_unless_asked(monkeypatch):
    from metashell import cli
    from metashell.session.planned import PlannedSession

    opened = []
    real = PlannedSession.loaded

    def loaded(self):
        opened.append(self.source)
        return real(self)
    monkeypatch.setattr(PlannedSession, "loaded", loaded)
    for words in (["log"], ["-o", "json", "log", "--snapshots"], ["log", "--batches"],
                  ["log", "--entity", "/topics/orders"], ["log", "--type", "Topic"]):
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr("sys.stdout", out)
        monkeypatch.setattr("sys.stderr", err)
        status = cli.main(["-s", str(EXAMPLE), *words], standalone_mode=False)
        output = "json" if "json" in words else "text"
        command = words[words.index("log"):]
        expected = run(EXAMPLE, *command[1:], output=output)
        # what a loaded session prints, and the load's warnings before it
        assert (status, out.getvalue()) == expected[:2], words
        assert expected[2] in err.getvalue()
        # the image is loaded only for --entity (topic names)
        assert bool(opened) == ("--entity" in words), words
        opened.clear()
