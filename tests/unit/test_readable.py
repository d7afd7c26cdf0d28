"""Readable output: names where Kafka shows names, release names, ISO
times, a fenced broker never reading as running, a controlled shutdown
shown once in ``diff``, colour only when asked."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tests.support.paths import EXAMPLE
from tests.support.commands import run_command
from metashell.kraft import enums
from metashell.queries.describe import describe
from metashell.session.files import open_session



def rec(type_name: str, /, **data):
    return SimpleNamespace(name=type_name, data=data, error=None)


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
    _, out, _ = run_command(s, "summary")
    started = out[out.index("  started:"):].splitlines()[1:]
    fenced = json.loads(run_command(s, "summary", output="json")[1])["brokers"]["fenced"]
    assert fenced
    for line in started[:4]:
        broker = int(line.split(":")[0])
        assert " up " not in line
        assert line.endswith("  fenced") == (broker in fenced)
    _, out, _ = run_command(s, "brokers", output="json")
    states = {r["brokerId"]: r["state"] for r in json.loads(out)}
    assert all(states[b] == "fenced" for b in fenced)


def test_controlled_shutdown_shown_once_in_diff():
    s = open_session(EXAMPLE)
    _, out, _ = run_command(s, "diff", "--from-offset", "250", "/brokers")
    lines = out.splitlines()
    assert "~ /brokers/3/inControlledShutdown  false → true" in lines
    assert not any(line.startswith("~ /brokers/3/registration") for line in lines)
    assert any(line.startswith("~ /brokers/1/registration  brokerEpoch") for line in lines)
    assert not any("fenced" in line for line in lines if "/registration" in line)


def test_colour_only_when_asked():
    s = open_session(EXAMPLE)
    plain = run_command(s, "diff", "--from-offset", "100")[1]
    assert "\x1b[" not in plain and "\n+ " in plain and "\n- " in plain
    coloured = run_command(s, "diff", "--from-offset", "100", color=True)[1]
    assert "\x1b[31m- " in coloured and "\x1b[32m+ " in coloured
    assert "\x1b[31m~" not in coloured and "\x1b[32m~" not in coloured
    assert "\x1b[1;31m" in run_command(s, "partitions", "--offline", color=True)[1]
    assert "\x1b[" not in run_command(s, "partitions", "--offline")[1]


def test_ls_long_header_and_partition_text():
    s = open_session(EXAMPLE)
    _, out, _ = run_command(s, "ls", "-l", "/topics/orders")
    assert out.splitlines()[0].split() == ["T", "SIZE", "OFFSET", "LAST", "CHANGE", "NAME"]
    _, out, _ = run_command(s, "cat", "/topics/orders/0/data")
    assert '  "replicas": [1, 2, 3],' in out.splitlines()
    _, out, _ = run_command(s, "partitions", "/topics/orders/0", output="json")
    # the record's code, as cat shows it (the contract's tree: leaderRecoveryState 0)
    assert json.loads(out)[0]["leaderRecoveryState"] == 0


TOKEN_TIMES = ("issueTimestamp", "maxTimestamp", "expirationTimestamp")


def _iso(ms: int) -> str:
    from datetime import datetime, timezone
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def test_token_times_are_iso_in_text_and_epoch_ms_in_json():
    s = open_session(EXAMPLE)
    token = run_command(s, "ls", "/delegationTokens")[1].split()[0]
    path = f"/delegationTokens/{token}"
    value = json.loads(run_command(s, "cat", path, output="json")[1])
    assert all(type(value[k]) is int for k in TOKEN_TIMES)
    assert json.loads(run_command(s, "tree", "/delegationTokens", output="json")[1]) == {token: value}
    for words in (["cat", path], ["tree", "/delegationTokens"], ["cat", "/delegationTokens/*"]):
        out = run_command(s, *words)[1]
        for k in TOKEN_TIMES:
            assert f'"{k}": "{_iso(value[k])}"' in out, (words, k)
        assert str(value["issueTimestamp"]) not in out
    # the rest of the token as it was, Kafka's own string under /image as Kafka prints it
    assert f'"owner": "{value["owner"]}"' in run_command(s, "cat", path)[1]
    image = run_command(s, "cat", f"/image/delegationToken/{token}")[1]
    assert f"issueTimestamp={value['issueTimestamp']}" in image


def test_fenced_brokers_are_red_in_ls_only_with_colour():
    s = open_session(EXAMPLE)
    fenced = set(json.loads(run_command(s, "summary", output="json")[1])["brokers"]["fenced"])
    brokers = run_command(s, "ls", "/brokers")[1].split()
    assert fenced and set(map(int, brokers)) - fenced
    for long in ([], ["-l"]):
        coloured = run_command(s, "ls", *long, "/brokers", color=True)[1]
        for b in brokers:
            assert (f"\x1b[1;31m{b}\x1b[0m" in coloured) == (int(b) in fenced), (long, b)
            assert (f"\x1b[1;34m{b}\x1b[0m" in coloured) == (int(b) not in fenced), (long, b)
        assert "\x1b[" not in run_command(s, "ls", *long, "/brokers")[1]


def test_no_colour_when_not_a_terminal_or_no_color(monkeypatch, capsys):
    from metashell import cli
    for env in ({}, {"NO_COLOR": "1"}):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setattr(cli, "_isatty", lambda stream: True)      # a terminal
        assert cli.main(["-s", str(EXAMPLE), "ls", "/brokers"], standalone_mode=False) == 0
        out = capsys.readouterr().out
        assert ("\x1b[1;31m" in out) == (not env)
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(cli, "_isatty", lambda stream: False)
    assert cli.main(["-s", str(EXAMPLE), "ls", "/brokers"], standalone_mode=False) == 0
    assert "\x1b[" not in capsys.readouterr().out


def test_leader_recovery_state_named_in_text_a_code_in_json(tmp_path):
    """A partition's ``leaderRecoveryState`` reads ``RECOVERING`` in text
    (``cat``, ``tree``, ``diff``), as Kafka's shell prints it; ``-o json``
    keeps the record's code, the stable JSON scripts read."""
    from tests.support.replay import load
    from tests.support.records import change, partition, topic, uid

    s = load(tmp_path, topic("foo", uid(1)), partition(uid(1), 0, [1, 2], leaderRecoveryState=0),
             change(uid(1), 0, leader=2, leaderRecoveryState=1))
    _, out, _ = run_command(s, "cat", "/topics/foo/0/data")
    assert '  "leaderRecoveryState": "RECOVERING",' in out.splitlines()
    _, out, _ = run_command(s, "cat", "/topics/foo/0/data", output="json")
    assert json.loads(out)["leaderRecoveryState"] == 1
    _, out, _ = run_command(s, "tree", "/topics/foo")
    assert '      "leaderRecoveryState": "RECOVERING",' in out.splitlines()
    _, out, _ = run_command(s, "tree", "/topics/foo", output="json")
    assert json.loads(out)["0"]["data"]["leaderRecoveryState"] == 1
    _, out, _ = run_command(s, "diff", "--from-offset", "1", "/topics")
    assert "leaderRecoveryState RECOVERED → RECOVERING" in out
    _, out, _ = run_command(s, "diff", "--from-offset", "1", "/topics", output="json")
    fields = json.loads(out.splitlines()[0])["fields"]
    assert fields["leaderRecoveryState"] == {"old": 0, "new": 1}
    _, out, _ = run_command(s, "cat", "/image/topics/byName/foo/0")
    assert "leaderRecoveryState=RECOVERING," in out
