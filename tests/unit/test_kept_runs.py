"""A snapshot's configs, quotas, ACLs, SCRAM users and tokens kept unread
in runs (fast/kept_runs.py) until that part of the image is looked at: the
runs the reader finds are exactly the records of one kind that follow one
another, and whatever is looked at first, and whatever the log does after
the snapshot, the image, the history, the counts and the problems are those
of applying every record as read."""

from __future__ import annotations

from pathlib import Path

import pytest

from metashell.fast.deferred import API_KEY, KEPT_COUNT, KEPT_RUN, REF, kind
from metashell.fs.root import build_root
from metashell.fast.kept_runs import kept_run, record_starts
from metashell.loader.reader import read_file
from metashell.kraft.writer import Out, encode_records, record
from metashell.replay.engine import ReplayEngine
from metashell.queries.summary import summarize
from metashell.session.files import open_session
from tests.support.replay import Log, engine_over, leaves, write_snapshot
from tests.support.records import acl, config, noop, partition, reframed, topic, uid

END = 500   # the snapshot's end offset


def undecodable_config() -> Out:
    """A ConfigRecord whose resource name claims more bytes than it holds."""
    value = bytearray(config(2, "t0", "retention.ms", "1").encoded_value())
    value[4] = 0x7F
    return Out(value=bytes(value))


def service_acl(n: int, topic_name: str) -> Out:
    """ACL ``uid(100 + n)`` on ``topic_name``: one of three service users, READ or WRITE."""
    return acl(uid(100 + n), topic_name, principal=f"User:svc-{n % 3}", operation=3 + n % 2)


def others() -> list[Out]:
    """A snapshot's client quotas, ACLs, SCRAM users and tokens, in its order."""
    return [
        *[record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": f"u{i}"}],
                 key="producer_byte_rate", value=1024.0 * (i + 1), remove=False) for i in range(3)],
        record("ProducerIdsRecord", brokerId=1, brokerEpoch=5, nextProducerId=1000),
        *[service_acl(n, f"t{n % 6}") for n in range(8)],
        *[record("UserScramCredentialRecord", name=f"u{i}", mechanism=1 + i % 2, salt=b"s" * 8,
                 storedKey=b"k" * 32, serverKey=b"v" * 32, iterations=4096) for i in range(3)],
        *[record("DelegationTokenRecord", owner="User:a", requester="User:a", renewers=[],
                 issueTimestamp=1, maxTimestamp=2, expirationTimestamp=3, tokenId=f"tok{i}")
          for i in range(2)],
    ]


def snapshot_records(configs_per_topic: int = 3, spoil: bool = False) -> list[Out]:
    """Topics and partitions, then their configs (a broker's and the
    cluster's too), quotas, ACLs, SCRAM users and tokens, as
    ``MetadataImage.write`` orders them; ``spoil``: a config undecodable,
    one with a header, one with a timestamp delta, an ACL undecodable."""
    outs = []
    for t in range(6):
        outs += [topic(f"t{t}", uid(t + 1)), *[partition(uid(t + 1), p) for p in range(3)]]
    keys = ("retention.ms", "cleanup.policy", "min.insync.replicas", "segment.bytes")
    values = ("86400000", "compact", "2", "x" * 200)   # a value length of two bytes
    for t in range(6):
        for k in range(configs_per_topic):
            outs.append(config(2, f"t{t}", keys[k % 4], values[(k + t) % 4]))
    outs += [config(4, "1", "log.retention.hours", "168"), config(4, "", "min.insync.replicas", "1")]
    if spoil:
        outs[-5] = reframed(outs[-5], headers=(("h", b"v"),))
        outs[-8] = reframed(outs[-8], timestamp_delta=3)
        outs.insert(-3, undecodable_config())
    rest = others()
    if spoil:   # an ACL whose principal claims more bytes than it holds
        value = bytearray(rest[6].encoded_value())
        value[-16] = 0x7F
        rest[6] = Out(value=bytes(value))
    return outs + rest


def log_after(directory: Path) -> Path:
    """Changes to configs after the snapshot: one set, one removed, a topic
    (and with it its configs) removed and made again."""
    log = Log(END)
    log.add(config(2, "t1", "retention.ms", "5"))
    log.add(config(2, "t2", "cleanup.policy", None))
    log.add(record("RemoveTopicRecord", topicId=uid(4)))
    log.add(topic("t3", uid(40)), config(2, "t3", "retention.ms", "7"))
    log.add(record("RemoveAccessControlEntryRecord", id=uid(101)), service_acl(9, "t1"))
    log.add(record("RemoveUserScramCredentialRecord", name="u1", mechanism=2))
    log.add(record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": "u0"}],
                   key="producer_byte_rate", value=0.0, remove=True))
    log.add(record("RemoveDelegationTokenRecord", tokenId="tok0"))
    return log.write(directory)


def shown(eng: ReplayEngine, first: str) -> tuple:
    """What a user sees, ``first`` looked at first: the configs, a config's
    history, the summary's counts, or the whole tree."""
    image = eng.image
    looks = {
        "configs": lambda: dict(image.configs()),
        "acls": lambda: {k: (e.value, e.change) for k, e in image.acls().items()},
        "quotas": lambda: {k: {n: (e.value, e.change) for n, e in v.items()} for k, v in image.quotas().items()},
        "scram": lambda: {k: (e.value, e.change) for k, e in image.scram().items()},
        "tokens": lambda: {k: (e.value, e.change) for k, e in image.tokens().items()},
        "history": lambda: [(r.offset, r.data["value"]) for r in image.records(("config", "topic", "t1")) or ()],
        "acl history": lambda: [(r.offset, r.name) for r in image.records(("acl", uid(101))) or ()],
        "summary": lambda: summarize(image, eng),
        "tree": lambda: leaves(build_root(image)),
    }
    out = {first: looks[first]()}
    for name, look in looks.items():
        out.setdefault(name, look())
    out["configs"] = {k: {n: (e.value, e.change) for n, e in v.items()} for k, v in out["configs"].items()}
    # problems sorted: a kept record that fails is reported when it is read
    return out, sorted(str(p) for p in eng.problems), eng.applied, dict(eng.by_type)


@pytest.mark.parametrize("first", ["configs", "acls", "quotas", "scram", "tokens", "history", "acl history",
                                   "summary", "tree"])
@pytest.mark.parametrize("spoil", [False, True])
@pytest.mark.parametrize("with_log", [False, True])
@pytest.mark.parametrize("end", [END, None])
def test_configs_kept_unread_show_as_applied(tmp_path, first, spoil, with_log, end):
    snap = write_snapshot(tmp_path, END, snapshot_records(spoil=spoil))
    paths = [snap] + ([log_after(tmp_path)] if with_log else [])
    kept = engine_over(*paths, deferred=True, first_is_snapshot=True, snapshot_end=end)
    if not with_log:
        assert sorted(kept.image.kept_runs) == [4, 10, 11, 14, 18]   # not read yet
    got = shown(kept, first)
    assert got == shown(engine_over(*paths, first_is_snapshot=True, snapshot_end=end), first)
    assert spoil == any("undecodable AccessControlEntryRecord" in p for p in got[1])


def test_ls_leaves_them_unread_and_summary_reads_the_configs(tmp_path):
    write_snapshot(tmp_path, END, snapshot_records())
    s = open_session(tmp_path)
    assert sorted(s.root.child("topics").children()) == [f"t{t}" for t in range(6)]
    runs = s.image.kept_runs[4]
    assert [n for _, _, n in runs] == [6 * 3 + 2]   # one run: every ConfigRecord
    summary = s.summary()
    assert 4 not in s.image.kept_runs and summary["records"]["byType"]["ConfigRecord"] == 20
    # the others only checked to decode for the counts, still unread
    assert sorted(s.image.kept_runs) == sorted(s.image.kept_checked) == [10, 11, 14, 18]
    assert summary["records"]["byType"]["AccessControlEntryRecord"] == 8
    settled = open_session(tmp_path)
    settled.image.settle()
    assert settled.summary() == summary and summary["underMinIsrPartitions"] > 0   # min ISR from configs
    assert s.image.configs()[("topic", "t0")]["retention.ms"].value == "86400000"


def test_a_snapshot_whose_configs_come_between_topics(tmp_path):
    """Configs right after their topic's partitions (another writer's
    order): a run each, the topics after them read as usual."""
    outs = []
    for t in range(5):
        outs += [topic(f"t{t}", uid(t + 1)), *[partition(uid(t + 1), p) for p in range(2)],
                 config(2, f"t{t}", "retention.ms", str(t)), config(2, f"t{t}", "cleanup.policy", "delete")]
    snap = write_snapshot(tmp_path, END, outs)
    kept = engine_over(snap, deferred=True, first_is_snapshot=True, snapshot_end=END)
    assert [n for _, _, n in kept.image.kept_runs[4]] == [2] * 5
    plain = engine_over(snap, first_is_snapshot=True, snapshot_end=END)
    assert shown(kept, "tree") == shown(plain, "tree")


# -- the run itself ---------------------------------------------------------------------

def run_of(outs: list[Out], *, base_records: int = 0) -> tuple[int, list[int], bytes]:
    """``kept_run`` over ``outs`` written after ``base_records`` fillers
    (so that offset deltas take one, two or three bytes): how many it takes
    from the first of ``outs``, where the records start, the bytes."""
    filler = [noop()] * base_records
    payload, _ = encode_records(filler + outs)
    starts = record_starts(payload, 0, base_records + len(outs))
    first = starts[base_records]
    n, end = kept_run(payload, first, len(payload), len(outs), outs[0].spec.api_key if outs[0].spec else 4)
    assert end == (starts + [len(payload)])[base_records + n]
    return n, starts[base_records:], payload


@pytest.mark.parametrize("base_records", [0, 100, 9000])
def test_a_run_takes_the_configrecords_that_follow_one_another(base_records):
    configs = [config(2, f"topic-{i}", "retention.ms", str(10 ** i)) for i in range(5)]
    long = config(2, "t", "k", "v" * 300)   # a record and a value of two-byte lengths
    others = {
        "a partition": partition(uid(1), 0),
        "a header": reframed(configs[0], headers=(("h", b"v"),)),
        "a timestamp delta": reframed(configs[0], timestamp_delta=1),
        "a key": reframed(configs[0], key=b"k"),
    }
    assert run_of(configs + [long], base_records=base_records)[0] == 6
    for name, other in others.items():
        assert run_of(configs[:3] + [other] + configs[3:], base_records=base_records)[0] == 3, name
    assert run_of(configs[:2], base_records=base_records)[0] == 2   # the batch's end
    n, _, _ = run_of([undecodable_config()] + configs)   # framed as one: read (and reported) later
    assert n == 6


def test_the_store_gives_each_record_of_a_run(tmp_path):
    path = write_snapshot(tmp_path, END, snapshot_records(configs_per_topic=2))
    eng = ReplayEngine()
    batches = list(eng.store.open(path, lazy=True))
    entries = [e for b in batches if type(b.records) is list for e in b.records
               if type(e) is tuple and kind(e) == KEPT_RUN]
    assert [(e[API_KEY], e[KEPT_COUNT]) for e in entries] == [(4, 14), (14, 3), (18, 8), (11, 3), (10, 2)]
    refs = eng.store.run_refs(entries[0][REF], 14)
    plain = [r for b in read_file(path, lazy=True) for r in b.records if r.name == "ConfigRecord"]
    assert [(r.offset, r.data) for r in map(eng.store.record, refs)] == [(r.offset, r.data) for r in plain]


def test_a_log_segment_keeps_none(tmp_path):
    """Only a snapshot's are kept: a log's ConfigRecords are applied as read."""
    log = Log()
    log.add(*[config(2, f"t{i}", "retention.ms", "1") for i in range(4)])
    path = log.write(tmp_path)
    eng = ReplayEngine()
    for batch in eng.store.open(path, lazy=True):
        assert not any(type(r) is tuple for r in batch.records)
        eng.apply_batch(batch)
    assert not eng.image.kept_runs and len(eng.image.configs()) == 4



def test_acls_known_to_decode_are_those_the_decoder_reads():
    """``acls_decode`` says True only where every ACL decodes: never for one
    the decoder refuses (a name not UTF-8, one running past its record), and
    False, not a guess, for a layout it does not read (a string of 127 bytes
    or more, a tagged field: then each is decoded)."""
    from metashell.kraft.catalog import METADATA
    from metashell.fast.kept_runs import acls_decode

    good = [service_acl(n, f"topic-{n}") for n in range(4)]

    def spoiled(how: str) -> Out:
        value = bytearray(good[0].encoded_value())
        if how == "not utf-8":
            value[-12] = 0xFF                        # a byte of the principal
        elif how == "past its record":
            value[-16] = 0x7F
        elif how == "a tagged field":
            value = value[:-1] + b"\x01\x00\x00"
        return Out(value=bytes(value))

    # name: (records, known to decode, all decode)
    cases = {"good": (good, True, True), "long": ([service_acl(0, "t" * 200)] + good, False, True),
             "a tagged field": (good[:2] + [spoiled("a tagged field")], False, True)}
    cases.update({how: (good[:2] + [spoiled(how)] + good[2:], False, False)
                  for how in ("not utf-8", "past its record")})
    for name, (outs, known, all_decode) in cases.items():
        payload, _ = encode_records(outs)
        assert acls_decode(payload, 0, len(outs)) == known, name
        decodes = []
        for out in outs:
            value = out.encoded_value()
            try:
                decodes.append(METADATA[18].decode(0, value, 3, len(value))[1] == len(value))
            except Exception:
                decodes.append(False)
        assert all(decodes) == all_decode, name


def test_summary_reads_min_isr_from_the_kept_configs(tmp_path):
    """``summary`` takes every topic's ``min.insync.replicas`` (and the
    cluster's) from the kept ConfigRecords' bytes without applying them, as
    applying them gives: the last one of a topic wins, a null value removes
    it; with one it cannot read there, it applies them all."""
    outs = []
    for t in range(6):
        outs += [topic(f"t{t}", uid(t + 1)),
                 *[partition(uid(t + 1), p, isr=(1, 2) if p == t % 3 else (1, 2, 3)) for p in range(3)]]
    outs += [config(4, "", "min.insync.replicas", "3"),
             *[config(2, f"t{t}", "min.insync.replicas", str(1 + t % 3)) for t in range(6)],
             config(2, "t1", "retention.ms", "1000"), config(2, "t2", "min.insync.replicas", "3"),
             config(2, "t4", "min.insync.replicas", None)]
    write_snapshot(tmp_path / "plain", END, outs)
    write_snapshot(tmp_path / "long", END, outs + [config(2, "t5", "k", "v" * 300)])
    for case in ("plain", "long"):
        s = open_session(tmp_path / case)
        summary = s.summary()
        assert (4 in s.image.kept_runs) == (case == "plain"), case   # applied only where unreadable
        settled = open_session(tmp_path / case)
        settled.image.settle()
        assert summary == settled.summary(), case
        # under min ISR: the lagging partition of t2 (3, set twice), t4 (its own removed: the
        # cluster's 3) and t5 (3)
        assert summary["underMinIsrPartitions"] == 3 and summary["records"]["byType"]["ConfigRecord"] == len(
            [o for o in outs if o.spec is not None and o.spec.name == "ConfigRecord"]) + (case == "long")
