"""``diff`` on generated logs: every kind of node added, removed and
modified, with the expected lines written by hand; JSON, ``--stat``,
``--by-id``, secrets, exit codes, and the rewound image (``--from-offset``
without a second replay) against a second replay."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from metashell import cli
from metashell.session.baseline import open_baseline
from metashell.commands import Context, complete_line, run_words
from metashell.errors import MetashellError
from metashell.fs.compare import compare
from metashell.fs.root import build_root
from metashell.kraft.writer import record
from metashell.session.files import open_session
from tests.support.replay import TS0, Log, write_snapshot
from tests.support.records import acl, broker, change, config, feature, partition, scram, token, topic, uid

T1, T2, T3, T4, T5 = (uid(n) for n in range(1, 6))
A1, A2, A3 = uid(11), uid(12), uid(13)
READ, WRITE, DESCRIBE = 3, 4, 8


def quota(entity, key, value):
    return record("ClientQuotaRecord", entity=[{"entityType": t, "entityName": n} for t, n in entity],
                  key=key, value=value, remove=False)


def producer_ids(next_id):
    return record("ProducerIdsRecord", brokerId=1, brokerEpoch=10, nextProducerId=next_id)


def every_kind_log(tmp_path):
    """A cluster up to offset ``f``, then a change to every kind of node."""
    log = Log()
    log.add(feature("metadata.version", 20), feature("group.version", 1))
    log.add(broker(1, fenced=False), broker(2, fenced=False), broker(3, fenced=False))
    log.add(topic("orders", T1), partition(T1, 0), partition(T1, 1))
    log.add(topic("old", T2), partition(T2, 0))
    log.add(topic("keep", T3), partition(T3, 0))
    log.add(config(2, "orders", "retention.ms", "1000"), config(2, "old", "cleanup.policy", "compact"),
            config(4, "1", "ssl.keystore.password", "secret1"))
    log.add(acl(A1, "orders", operation=READ), acl(A2, "keep", operation=WRITE))
    log.add(quota([("user", "alice")], "producer_byte_rate", 1000.0))
    log.add(scram("alice", 1, 4096, salt=b"salt1"), scram("bob", 1, 4096, salt=b"saltb"))
    log.add(token("tok1", renewers=[]))
    f = log.add(producer_ids(1000))
    log.add(feature("metadata.version", 21), feature("transaction.version", 2),
            feature("group.version", 0))
    log.add(record("FenceBrokerRecord", id=2, epoch=10))
    log.add(record("UnregisterBrokerRecord", brokerId=3, brokerEpoch=10))
    log.add(broker(4, fenced=False))
    log.add(change(T1, 0, isr=[1, 3], leader=3))
    log.add(partition(T1, 2))
    log.add(config(2, "orders", "retention.ms", "2000"))
    log.add(record("RemoveTopicRecord", topicId=T2))
    log.add(topic("fresh", T4), partition(T4, 0, replicas=(2,)))
    log.add(config(4, "1", "ssl.keystore.password", "secret2"))
    log.add(record("RemoveAccessControlEntryRecord", id=A1), acl(A3, "fresh", operation=DESCRIBE))
    log.add(quota([("user", "alice")], "producer_byte_rate", 2000.0),
            quota([("client-id", "app")], "consumer_byte_rate", 500.0))
    log.add(scram("alice", 1, 8192, salt=b"salt2"),
            record("RemoveUserScramCredentialRecord", name="bob", mechanism=1),
            scram("carol", 2, 4096, salt=b"saltc"))
    log.add(record("RemoveDelegationTokenRecord", tokenId="tok1"), token("tok2", renewers=[]))
    log.add(producer_ids(2000))
    return log.write(tmp_path), f


def acl_json(resource, operation):
    return ('{"resourceType":"TOPIC","resourceName":"%s","patternType":"LITERAL",'
            '"principal":"User:alice","host":"*","operation":"%s","permissionType":"ALLOW"}'
            % (resource, operation))


# text output shows a token's times as ISO-8601 (tree.token_text_value)
TOKEN_JSON = ('{"owner":"User:alice","requester":"User:alice","renewers":[],'
              '"issueTimestamp":"1970-01-01T00:00:00.001Z","maxTimestamp":"1970-01-01T00:00:00.003Z",'
              '"expirationTimestamp":"1970-01-01T00:00:00.002Z"}')
REDACTED_SCRAM = ('{"iterations":4096,"salt":"[redacted]","storedKey":"[redacted]",'
                  '"serverKey":"[redacted]"}')

EVERY_KIND = [
    f"- /acls/{A1}  {acl_json('orders', 'READ')}",
    f"+ /acls/{A3}  {acl_json('fresh', 'DESCRIBE')}",
    "~ /brokers/2/isFenced  false → true",
    "- /brokers/3",
    "+ /brokers/4",
    "+ /clientQuotas/client-id",
    "~ /clientQuotas/user/alice/producer_byte_rate  1000.0 → 2000.0",
    "~ /configs/broker/1/ssl.keystore.password  [redacted] → [redacted]",
    "- /configs/topic/old",
    "~ /configs/topic/orders/retention.ms  1000 → 2000",
    f"- /delegationTokens/tok1  {TOKEN_JSON}",
    f"+ /delegationTokens/tok2  {TOKEN_JSON}",
    "- /features/group.version  1",
    "~ /features/metadata.version  20 → 21",
    "+ /features/transaction.version  2",
    "~ /producerIds/nextProducerId  1000 → 2000",
    "~ /scram/SCRAM-SHA-256/alice  iterations 4096 → 8192  salt [redacted] → [redacted]",
    f"- /scram/SCRAM-SHA-256/bob  {REDACTED_SCRAM}",
    f"+ /scram/SCRAM-SHA-512/carol  {REDACTED_SCRAM}",
    "+ /topics/fresh",
    "- /topics/old",
    "~ /topics/orders/0/data  isr [1,2,3] → [1,3]  leader 1 → 3  leaderEpoch 0 → 1  "
    "partitionEpoch 0 → 1",
    "+ /topics/orders/2",
]


def diff(session, *words, cwd="/"):
    """Run ``diff`` in a shell on ``session``: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output="text", cwd=cwd)
    if words and words[0] == "-o":
        ctx.output, words = words[1], words[2:]
    status = run_words(ctx, ["diff", *map(str, words)])
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def every_kind(tmp_path):
    path, f = every_kind_log(tmp_path)
    return open_session(path), f


# =========================================================================== lines

def test_every_kind_of_node(every_kind):
    session, f = every_kind
    status, out, err = diff(session, "--from-offset", f)
    assert (status, err) == (1, "")
    assert out.splitlines() == EVERY_KIND


def test_reversed_sides_swap_the_signs(every_kind):
    session, f = every_kind
    earlier = open_session(session.source, until_offset=f)
    status, out, _ = diff(earlier, "--against", session.source)
    flipped = {"+": "-", "-": "+", "~": "~"}
    lines = out.splitlines()
    assert status == 1 and len(lines) == len(EVERY_KIND)
    assert {line.split("  ")[0][2:] for line in lines} == \
        {line.split("  ")[0][2:] for line in EVERY_KIND}
    for line in lines:
        path = line.split("  ")[0][2:]
        mine = next(x for x in EVERY_KIND if x.split("  ")[0][2:] == path)
        assert line[0] == flipped[mine[0]]
    assert "~ /features/metadata.version  21 → 20" in lines


def test_paths_narrow_the_diff(every_kind):
    session, f = every_kind
    status, out, _ = diff(session, "--from-offset", f, "/features", "/topics/orders")
    assert status == 1
    assert out.splitlines() == [line for line in EVERY_KIND
                                if line[2:].startswith(("/features/", "/topics/orders/"))]
    status, out, _ = diff(session, "--from-offset", f, "keep", cwd="/topics")
    assert (status, out) == (0, "")


def test_secrets_shown_when_asked(tmp_path):
    path, f = every_kind_log(tmp_path)
    session = open_session(path, show_secrets=True)
    _, out, _ = diff(session, "--from-offset", f, "/configs/broker", "/scram/SCRAM-SHA-256/alice")
    assert out.splitlines() == [
        "~ /configs/broker/1/ssl.keystore.password  secret1 → secret2",
        "~ /scram/SCRAM-SHA-256/alice  iterations 4096 → 8192  salt c2FsdDE= → c2FsdDI=",
    ]


def test_stat(every_kind):
    session, f = every_kind
    status, out, _ = diff(session, "--from-offset", f, "--stat")
    assert status == 1
    assert out.splitlines() == [
        "acls              +1  -1  ~0",
        "brokers           +1  -1  ~1",
        "clientQuotas      +1  -0  ~1",
        "configs           +0  -1  ~2",
        "delegationTokens  +1  -1  ~0",
        "features          +1  -1  ~1",
        "producerIds       +0  -0  ~1",
        "scram             +1  -1  ~1",
        "topics            +2  -1  ~1",
        "23 changes: 8 added, 7 removed, 8 modified",
    ]
    status, out, _ = diff(session, "-o", "json", "--from-offset", f, "--stat", "/features")
    assert (status, json.loads(out)) == (1, {"features": {"added": 1, "removed": 1, "modified": 1}})


def test_json(every_kind):
    session, f = every_kind
    status, out, _ = diff(session, "-o", "json", "--from-offset", f, "/features",
                          "/topics/orders", "/scram")
    docs = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert docs[:3] == [
        {"path": "/features/group.version", "op": "remove", "old": 1, "new": None},
        {"path": "/features/metadata.version", "op": "modify", "old": 20, "new": 21},
        {"path": "/features/transaction.version", "op": "add", "old": None, "new": 2},
    ]
    data = docs[3]
    assert data["path"] == "/topics/orders/0/data" and data["op"] == "modify"
    assert data["fields"] == {"isr": {"old": [1, 2, 3], "new": [1, 3]},
                              "leader": {"old": 1, "new": 3},
                              "leaderEpoch": {"old": 0, "new": 1},
                              "partitionEpoch": {"old": 0, "new": 1}}
    assert data["old"]["replicas"] == data["new"]["replicas"] == [1, 2, 3]
    added = docs[4]
    assert (added["path"], added["op"], added["old"]) == ("/topics/orders/2", "add", None)
    assert added["new"]["data"]["partitionId"] == 2 and added["new"]["data"]["isr"] == [1, 2, 3]
    alice = docs[5]
    assert alice["fields"] == {"iterations": {"old": 4096, "new": 8192},
                               "salt": {"old": "[redacted]", "new": "[redacted]"}}
    assert [d["op"] for d in docs[6:]] == ["remove", "add"]


# =========================================================================== topics by id

def recreated_log(tmp_path):
    log = Log()
    log.add(topic("orders", T1), partition(T1, 0))
    log.add(topic("keep", T3), partition(T3, 0))
    f = log.next_offset - 1
    log.add(record("RemoveTopicRecord", topicId=T1))
    log.add(topic("orders", T5), partition(T5, 0))
    return open_session(log.write(tmp_path)), f


def test_a_recreated_topic_by_name_is_modified(tmp_path):
    session, f = recreated_log(tmp_path)
    status, out, _ = diff(session, "--from-offset", f)
    assert status == 1
    assert out.splitlines() == [f"~ /topics/orders/0/data  topicId {T1} → {T5}",
                                f"~ /topics/orders/id  {T1} → {T5}"]


def test_a_recreated_topic_by_id_is_replaced(tmp_path):
    session, f = recreated_log(tmp_path)
    status, out, _ = diff(session, "--from-offset", f, "--by-id")
    assert status == 1
    assert out.splitlines() == ["- /topics/orders", "+ /topics/orders"]
    status, out, _ = diff(session, "-o", "json", "--from-offset", f, "--by-id")
    removed, added = (json.loads(line) for line in out.splitlines())
    assert removed["op"] == "remove" and removed["old"]["id"] == T1 and removed["new"] is None
    assert added["op"] == "add" and added["new"]["id"] == T5 and added["old"] is None


def test_topic_ids_only_when_named(tmp_path):
    session, f = recreated_log(tmp_path)
    _, out, _ = diff(session, "--from-offset", f, "/topicIds")
    assert out.splitlines() == [f"- /topicIds/{T1}", f"+ /topicIds/{T5}"]


# =========================================================================== quorum, local

def test_quorum_only_when_asked(tmp_path):
    log = Log()
    log.leader(1)
    f = log.add(feature("metadata.version", 20))
    log.leader(2, epoch=5)
    session = open_session(log.write(tmp_path))
    assert diff(session, "--from-offset", f)[:2] == (0, "")
    status, out, _ = diff(session, "--from-offset", f, "--include-quorum")
    assert status == 1
    assert out.splitlines() == ["~ /metadataQuorum/leader  leaderId 1 → 2  epoch 1 → 5",
                                "~ /metadataQuorum/leaderEpoch  1 → 5",
                                "~ /metadataQuorum/leaderId  1 → 2",
                                f"~ /metadataQuorum/offset  {f} → {f + 1}",
                                "~ /metadataQuorum/time  2023-11-14T22:13:21.000Z → "
                                "2023-11-14T22:13:22.000Z"]
    assert diff(session, "--from-offset", f, "/metadataQuorum/leaderId")[1] == \
        "~ /metadataQuorum/leaderId  1 → 2\n"
    assert diff(session, "--from-offset", 0, "/local") == (0, "", "")


# =========================================================================== exit codes

def test_equal_images_exit_0(every_kind):
    session, _ = every_kind
    last = session.image.last_offset
    assert diff(session, "--from-offset", last) == (0, "", "")
    assert diff(session, "--against", session.source) == (0, "", "")


@pytest.mark.parametrize("words,message", [
    ([], "diff: one of the arguments --from-offset --from-time --against is required"),
    (["--from-offset", "1", "--against", "x"],
     "diff: argument --against: not allowed with argument --from-offset"),
    (["--from-offset", "x"], "diff: argument --from-offset: invalid int value: 'x'"),
    (["--from-time", "yesterday"], "diff: argument --from-time: 'yesterday' is neither ISO-8601 "
                                   "(2024-05-10T20:06:51Z) nor epoch milliseconds"),
    (["--from-offset", "1", "/nope"], "diff: /nope: no such file or directory in either image"),
])
def test_usage_errors_exit_2(every_kind, words, message):
    session, _ = every_kind
    assert diff(session, *words) == (2, "", message + "\n")


def test_an_other_side_that_cannot_be_loaded_exits_2(every_kind, tmp_path):
    session, _ = every_kind
    status, out, err = diff(session, "--against", tmp_path / "missing.log")
    assert (status, out) == (2, "")
    assert err.startswith("diff: ") and "missing.log" in err and err.count("\n") == 1
    bad = tmp_path / "00000000000000000000-0000000001.checkpoint"
    bad.write_bytes(b"not a kafka file, " * 10)
    status, out, err = diff(session, "--against", bad)
    assert (status, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err


def test_one_shot_exit_status_and_script_mode(tmp_path):
    path, f = every_kind_log(tmp_path / "log")
    runner = CliRunner()
    result = runner.invoke(cli.make_cli(), ["-s", str(path), "diff", "--from-offset", str(f),
                                            "/features"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [x for x in EVERY_KIND if x[2:].startswith("/features/")]
    result = runner.invoke(cli.make_cli(), ["-s", str(path), "diff", "--from-offset", "9999"])
    assert (result.exit_code, result.stdout) == (2, "")   # no image there: never "equal"
    result = runner.invoke(cli.make_cli(), ["-s", str(path), "diff"])
    assert result.exit_code == 2
    result = runner.invoke(cli.make_cli(), ["-s", str(path)],
                           input=f"diff --from-offset {f} /producerIds\n")
    assert result.stdout == "~ /producerIds/nextProducerId  1000 → 2000\n"


def test_time_travel_on_both_sides(every_kind):
    session, f = every_kind
    # --until-offset on the command line: the "to" side is that point too
    to = open_session(session.source, until_offset=f + 3)   # the batch of three features
    assert diff(to, "--from-offset", f)[1].splitlines() == [
        "- /features/group.version  1",
        "~ /features/metadata.version  20 → 21",
        "+ /features/transaction.version  2",
    ]
    # --from-time: the batch of offset f was appended at TS0 + 10 s
    status, out, _ = diff(session, "--from-time", "2023-11-14T22:13:30Z")
    assert (status, out.splitlines()) == (1, EVERY_KIND)


# =========================================================================== completion

def test_completion(every_kind, tmp_path):
    session, _ = every_kind
    ctx = Context.for_session(session)
    assert complete_line(ctx, "diff --f")[1] == ["--from-offset", "--from-time"]
    assert complete_line(ctx, "diff --st")[1] == ["--stat"]
    assert complete_line(ctx, "diff /fea")[1] == ["/features/"]
    (tmp_path / "backup-dir").mkdir()
    (tmp_path / "backup.log").write_bytes(b"")
    assert complete_line(ctx, f"diff --against {tmp_path}/back")[1] == \
        [f"{tmp_path}/backup-dir/", f"{tmp_path}/backup.log"]


# =========================================================================== rewound image

def changes_of(old_image, new_image):
    return [(c.path, c.op, tuple(c.fields))
            for c in compare(build_root(old_image, show_secrets=True),
                             build_root(new_image, show_secrets=True),
                             skip={("local",), ("topicIds",), ("image",), ("metadataQuorum",)})]


def growing_log(tmp_path):
    """Partitions changed many times, brokers fenced and unfenced, configs set
    and deleted, after a snapshot, in one-record and many-record batches."""
    root = tmp_path / "logdir"
    part = root / "__cluster_metadata-0"
    write_snapshot(part, 4, [feature("metadata.version", 20), broker(1, fenced=False),
                             topic("a", T1), partition(T1, 0), partition(T1, 1)], epoch=1)
    log = Log(base_offset=4)
    log.add(topic("b", T2), *[partition(T2, p) for p in range(4)])
    for i in range(6):
        log.add(change(T1, i % 2, isr=[1, 2] if i % 3 else [1, 2, 3], leader=-2))
        log.add(change(T2, i % 4, leader=[2, 3][i % 2]), config(2, "b", "x", str(i)))
    log.add(config(2, "b", "x", None), record("FenceBrokerRecord", id=1, epoch=10))
    log.add(record("UnfenceBrokerRecord", id=1, epoch=10), partition(T1, 2), topic("c", T3))
    log.write(part)
    return open_session(root)


def test_the_rewound_image_equals_a_second_replay(tmp_path):
    session = growing_log(tmp_path)
    rewound = 0
    for offset in range(3, session.image.last_offset + 1):
        fast, _ = open_baseline(session, open_session, from_offset=offset)
        slow, _ = open_baseline(session, open_session, from_offset=offset, rewinding=False)
        rewound += fast.topics is not slow.topics
        assert changes_of(fast, session.image) == changes_of(slow, session.image), offset
    assert rewound == session.image.last_offset - 2   # every point after the snapshot


def test_the_image_rewound_to_a_time_equals_a_second_replay(tmp_path):
    session = growing_log(tmp_path)   # batch i of the segment appended at TS0 + 1000 * i
    rewound = 0
    for rewinding in (True, False):
        with pytest.raises(MetashellError, match=r"--from-time .* is before the oldest point "
                                                 r"this source can rebuild: offset 3 at"):
            open_baseline(session, open_session, from_time=TS0 - 1, rewinding=rewinding)
    for time in range(TS0, TS0 + 20_000, 500):
        if time > session.image.last_time:    # no image there: never compared as "equal"
            for rewinding in (True, False):
                with pytest.raises(MetashellError, match=r"is past the end of the data"):
                    open_baseline(session, open_session, from_time=time, rewinding=rewinding)
            continue
        fast, _ = open_baseline(session, open_session, from_time=time)
        slow, _ = open_baseline(session, open_session, from_time=time, rewinding=False)
        rewound += fast.topics is not slow.topics
        assert changes_of(fast, session.image) == changes_of(slow, session.image), time
    assert rewound >= 20


def test_from_offset_on_a_snapshot_file(tmp_path):
    path = write_snapshot(tmp_path, 50, [feature("metadata.version", 20)])
    session = open_session(path)
    assert diff(session, "--from-offset", 49) == (0, "", "")
    status, out, err = diff(session, "--from-offset", 10)
    assert (status, out) == (2, "")
    assert err.startswith(f"diff: {path}: --from-offset 10 is before the oldest point this source can rebuild: offset 49")


def test_warnings_of_the_other_side(every_kind, tmp_path):
    session, _ = every_kind
    log = Log()
    log.add(feature("metadata.version", 20))
    log.add(change(T1, 0, isr=[1]))   # no such topic there: reported, skipped
    other = log.write(tmp_path / "other")
    status, out, err = diff(session, "--against", other, "/features/metadata.version")
    assert (status, out) == (1, "~ /features/metadata.version  20 → 21\n")
    assert err.startswith("kafka-metadata-shell: warning: ") and "offset 1" in err
