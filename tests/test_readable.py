"""Readable output: names where Kafka shows names, release names, ISO
times, a fenced broker never reading as running, a controlled shutdown
shown once in ``diff``, colour only when asked."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

from metashell.commands import Context, run_words
from metashell.kraft import enums
from metashell.replay.describe import describe
from metashell.session import open_session

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster"


def rec(type_name: str, /, **data):
    return SimpleNamespace(name=type_name, data=data, error=None)


def sh(session, *words, output="text", color=False) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output=output, color=color)
    return run_words(ctx, list(words)), out.getvalue(), err.getvalue()


def test_record_summaries_name_states_releases_and_times():
    change = rec("PartitionChangeRecord", partitionId=3, leader=2, isr=None, replicas=None,
                 addingReplicas=None, removingReplicas=None, leaderRecoveryState=1)
    assert describe(change) == "partition 3: leader 2, leaderRecoveryState RECOVERING"
    level = max(enums.METADATA_VERSIONS)
    mv = rec("FeatureLevelRecord", name="metadata.version", featureLevel=level)
    assert describe(mv) == f"metadata.version = {level} ({enums.METADATA_VERSIONS[level]})"
    assert describe(rec("FeatureLevelRecord", name="group.version", featureLevel=1)) == \
        "group.version = 1"
    token = rec("DelegationTokenRecord", tokenId="t1", owner="User:a", requester="User:a",
                renewers=["User:b"], issueTimestamp=1715371611486,
                maxTimestamp=1715371611486 + 86_400_000, expirationTimestamp=1715371611486 + 3600_000)
    assert describe(token) == ("token t1 owner User:a renewers User:b issued "
                               "2024-05-10T20:06:51.486Z expires 2024-05-10T21:06:51.486Z "
                               "max 2024-05-11T20:06:51.486Z")


def test_fenced_broker_does_not_read_as_running():
    s = open_session(EXAMPLE)
    _, out, _ = sh(s, "summary")
    started = out[out.index("  started:"):].splitlines()[1:]
    fenced = json.loads(sh(s, "summary", output="json")[1])["brokers"]["fenced"]
    assert fenced
    for line in started[:4]:
        broker = int(line.split(":")[0])
        assert " up " not in line
        assert line.endswith("  fenced") == (broker in fenced)
    _, out, _ = sh(s, "brokers", output="json")
    states = {r["broker"]: r["state"] for r in json.loads(out)}
    assert all(states[b] == "fenced" for b in fenced)


def test_controlled_shutdown_shown_once_in_diff():
    s = open_session(EXAMPLE)
    _, out, _ = sh(s, "diff", "--from-offset", "250", "/brokers")
    lines = out.splitlines()
    assert "~ /brokers/3/inControlledShutdown  false → true" in lines
    assert not any(line.startswith("~ /brokers/3/registration") for line in lines)
    assert any(line.startswith("~ /brokers/1/registration  brokerEpoch") for line in lines)
    assert not any("fenced" in line for line in lines if "/registration" in line)


def test_colour_only_when_asked():
    s = open_session(EXAMPLE)
    plain = sh(s, "diff", "--from-offset", "100")[1]
    assert "\x1b[" not in plain and "\n+ " in plain and "\n- " in plain
    coloured = sh(s, "diff", "--from-offset", "100", color=True)[1]
    assert "\x1b[31m- " in coloured and "\x1b[32m+ " in coloured
    assert "\x1b[31m~" not in coloured and "\x1b[32m~" not in coloured
    assert "\x1b[1;31m" in sh(s, "partitions", "--offline", color=True)[1]
    assert "\x1b[" not in sh(s, "partitions", "--offline")[1]


def test_ls_long_header_and_partition_text():
    s = open_session(EXAMPLE)
    _, out, _ = sh(s, "ls", "-l", "/topics/orders")
    assert out.splitlines()[0].split() == ["T", "SIZE", "OFFSET", "LAST", "CHANGE", "NAME"]
    _, out, _ = sh(s, "cat", "/topics/orders/0/data")
    assert '  "replicas": [1, 2, 3],' in out.splitlines()
    _, out, _ = sh(s, "partitions", "/topics/orders/0", output="json")
    assert json.loads(out)[0]["leaderRecoveryState"] == "RECOVERED"


def test_leader_recovery_state_named_in_text_a_code_in_json(tmp_path):
    """A partition's ``leaderRecoveryState`` reads ``RECOVERING`` in text
    (``cat``, ``tree``, ``diff``), as Kafka's shell prints it; ``-o json``
    keeps the record's code, the stable JSON scripts read."""
    from test_replay_support import change, load, partition, topic, uid

    s = load(tmp_path, topic("foo", uid(1)), partition(uid(1), 0, [1, 2], leaderRecoveryState=0),
             change(uid(1), 0, leader=2, leaderRecoveryState=1))
    _, out, _ = sh(s, "cat", "/topics/foo/0/data")
    assert '  "leaderRecoveryState": "RECOVERING",' in out.splitlines()
    _, out, _ = sh(s, "cat", "/topics/foo/0/data", output="json")
    assert json.loads(out)["leaderRecoveryState"] == 1
    _, out, _ = sh(s, "tree", "/topics/foo")
    assert '      "leaderRecoveryState": "RECOVERING",' in out.splitlines()
    _, out, _ = sh(s, "tree", "/topics/foo", output="json")
    assert json.loads(out)["0"]["data"]["leaderRecoveryState"] == 1
    _, out, _ = sh(s, "diff", "--from-offset", "1", "/topics")
    assert "leaderRecoveryState RECOVERED → RECOVERING" in out
    _, out, _ = sh(s, "diff", "--from-offset", "1", "/topics", output="json")
    fields = json.loads(out.splitlines()[0])["fields"]
    assert fields["leaderRecoveryState"] == {"old": 0, "new": 1}
    _, out, _ = sh(s, "cat", "/image/topics/byName/foo/0")
    assert "leaderRecoveryState=RECOVERING," in out
