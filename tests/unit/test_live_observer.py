"""End-to-end: the live observer (``metashell.live.Observer``)
against the fake controller quorum (``fake_kraft``).

Each test sets up the quorum, follows it with a real observer over
loopback, acts on the fake at chosen moments and checks what the observer
yielded: every release profile, leader discovery, snapshots, failovers,
uncommitted tails, dropped connections, and the fatal errors of issue 8
(one line, no hang past the timeout). Every wait is bounded.
"""

from __future__ import annotations

import functools
import time

import pytest

from tests.support.fake_kraft import PROFILES, Fault, noop_records, split_batches
from tests.support.fake_kraft_follow import (a_cluster_log, caught_up, check_contiguous, image_json, live_config,
                                             parked_at_the_log_end, quorums, rebuild,  # noqa: F401 (fixture)
                                             record_offsets)
from tests.support.records import partition, topic, uid
from tests.support.waiting import wait_until
from metashell.errors import CorruptDataError
from metashell.live import CommittedEvent, LiveError, SnapshotEvent
from metashell.loader.reader import FileReader
from metashell.kraft.writer import snapshot_bytes


T1 = uid(1)


# ------------------------------------------------------------------ every release

@pytest.mark.parametrize("profile,version", [("3.0", 12), ("3.3", 13), ("3.7", 16), ("3.9", 17),
                                             ("4.0", 17), ("4.1", 18)])
def test_every_release_profile(quorums, profile, version):
    q = a_cluster_log(quorums(3, profile=profile)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), (f.error, f.statuses[-1:])
    assert f.offsets() == list(range(q.log.end_offset))
    fetches = [r for n in q.nodes.values() for r in n.fetches]
    assert {r.version for r in fetches} == {version}
    # ApiVersions first on every connection; a too-new one (error 35) is retried lower
    asked = [v for k, v in q.nodes[1].requests if k == 18]
    assert q.nodes[1].requests[0][0] == 18 and asked[-1] == PROFILES[profile][18][1]
    leader_fetches = q.nodes[1].fetches
    if version == 12:
        assert leader_fetches[0].topics[0].topic == "__cluster_metadata"
    else:
        assert str(leader_fetches[0].topics[0].topic_id) == "00000000-0000-0000-0000-000000000001"
    if version <= 14:     # the observer's identity (section 1.2): ReplicaId -1, or no ReplicaState
        assert all(r.replica_id == -1 for r in fetches)
    else:
        assert all(r.replica_state is None or r.replica_state.replica_id == -1 for r in fetches)
    # then it follows: a new committed batch shows up
    hwm = q.hwm
    q.append([topic("late", uid(100))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset)
    if version >= 18:   # it tells the leader the HWM it knows (KIP-1166)
        assert any(r.topics[0].partitions[0].high_watermark == hwm for r in leader_fetches[1:])
    assert {"t0", "t2", "late"} <= rebuild(f.events).image.topic_names.keys()


def test_leader_discovery_from_a_non_leader(quorums):
    q = a_cluster_log(quorums(3, profile="3.9", leader_id=3, epoch=4)).start()
    f = quorums.follow(live_config(q, [1], with_ids=False))   # only node 1 is given, no ids
    assert f.wait(caught_up), f.error
    assert f.statuses[-1].leader_id == 3 and f.statuses[-1].leader_epoch == 4
    assert f.statuses[-1].endpoint == q.nodes[3].address
    assert all(r.topics[0].partitions[0].fetch_offset == 0 for r in q.nodes[1].fetches)
    assert q.nodes[3].fetches


def test_ipv6_loopback_with_node_endpoints(quorums):
    q = a_cluster_log(quorums(3, profile="3.9", leader_id=2, host="::1")).start()
    f = quorums.follow(live_config(q, [1], with_ids=False))     # "[::1]:port", leader via NodeEndpoints
    assert f.wait(caught_up), f.error
    assert f.statuses[-1].endpoint == f"2@[::1]:{q.nodes[2].port}"
    assert f.offsets() == list(range(q.log.end_offset))


def test_leader_discovery_without_ids_before_3_9(quorums):
    # bootstrap servers only and no NodeEndpoints: the leader is found by asking each address
    q = a_cluster_log(quorums(3, profile="3.7", leader_id=3)).start()
    f = quorums.follow(live_config(q, with_ids=False))
    assert f.wait(caught_up), f.error
    assert f.offsets() == list(range(q.log.end_offset)) and q.nodes[3].fetches


def test_leader_discovery_with_voter_ids_before_3_9(quorums):
    # 3.7 never sends NodeEndpoints: the leader's address comes from the id@host:port list
    q = a_cluster_log(quorums(3, profile="3.7", leader_id=2)).start()
    f = quorums.follow(live_config(q, [1, 2, 3]))
    assert f.wait(caught_up), f.error
    assert f.offsets() == list(range(q.log.end_offset)) and q.nodes[2].fetches


def test_election_in_progress_then_a_leader(quorums):
    q = a_cluster_log(quorums(3)).start()
    q.begin_election()
    f = quorums.follow(live_config(q))
    time.sleep(0.5)                  # the behaviour: half a second of election, and it does not follow
    assert not f.following()
    q.failover(2, hwm=q.log.end_offset + 1)
    assert f.wait(caught_up), f.error
    assert f.offsets() == list(range(q.log.end_offset))


# ------------------------------------------------------------------ snapshots

def snapshot_of(records, epoch=1, per_batch=2):
    return snapshot_bytes(records, epoch=epoch, per_batch=per_batch)


@functools.lru_cache(maxsize=1)
def big_snapshot() -> tuple[bytes, int]:
    """A snapshot over 8 MiB (more than one FetchSnapshot chunk) and its
    end offset: one topic whose partitions have 40 replicas each."""
    replicas = list(range(1, 41))
    records = [topic("big", T1)] + [
        partition(T1, p, replicas, version=0) for p in range(27_000)]
    data = snapshot_of(records, per_batch=2000)
    assert len(data) > 8 << 20
    return data, len(records) + 2


@pytest.mark.parametrize("profile", ["3.3", "4.1"])
def test_snapshot_download_in_chunks_then_following(quorums, profile):
    q = quorums(3, profile=profile)
    snap, end = big_snapshot()
    q.truncate_to_snapshot(snap, end, 1)           # the log below ``end`` is gone
    q.commit()
    q.start()
    f = quorums.follow(live_config(q, timeout=20))
    assert f.wait(caught_up, 30), f.error
    snaps = f.of(SnapshotEvent)
    assert len(snaps) == 1 and bytes(snaps[0].data) == snap
    assert (snaps[0].end_offset, snaps[0].epoch) == (end, 1)
    assert sum(1 for k, _ in q.nodes[1].requests if k == 59) >= 2      # in chunks
    q.append([topic("after", uid(2))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset)
    check_contiguous(f.events)
    assert f.offsets() == list(range(end, q.log.end_offset))
    image = rebuild(f.events).image
    assert set(image.topic_names) == {"big", "after"}
    assert len(image.topic_by_name("big").partition_ids()) == 27_000


def test_log_truncated_behind_the_observer_forces_a_new_snapshot(quorums):
    q = a_cluster_log(quorums(3)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    q.nodes[1].stop()                             # the observer is cut off ...
    end = q.log.end_offset
    for _ in range(5):
        q.append(noop_records(2))
    q.commit()
    snap_end = q.log.end_offset
    q.truncate_to_snapshot(snapshot_of([topic("t0", uid(10))]), snap_end, 1)
    q.nodes[1].start()                            # ... and comes back behind the log start
    assert f.wait(lambda f: len(f.of(SnapshotEvent)) == 1, 15), f.error
    snap = f.of(SnapshotEvent)[0]
    assert snap.end_offset == snap_end and end < snap_end
    q.append([topic("x", uid(102))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset)
    check_contiguous(f.events)


# ------------------------------------------------------------------ committed only

def test_uncommitted_tail_is_never_yielded_and_its_truncation_is_survived(quorums):
    q = a_cluster_log(quorums(3)).start()
    committed = q.hwm
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    q.append([topic("ghost", uid(103))])       # never committed
    q.append([topic("ghost2", uid(104))])
    wait_until(lambda: any(r.topics[0].partitions[0].fetch_offset > committed for r in q.nodes[1].fetches),
               "the observer to fetch the uncommitted records")
    assert max(f.offsets()) == committed - 1
    q.failover(2, truncate_to=committed, tail=[[topic("real", uid(105))]])
    q.commit()
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 15), (f.error, f.statuses[-1:])
    names = {t.name for t in rebuild(f.events).image.topics.values()}
    assert "real" in names and not names & {"ghost", "ghost2"}
    check_contiguous(f.events)
    assert f.offsets() == list(range(q.log.end_offset))
    assert any(r.topics[0].partitions[0].fetch_offset > committed for r in q.nodes[1].fetches)


def test_hwm_going_back_after_failover_is_ignored(quorums):
    q = a_cluster_log(quorums(3)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    high = f.statuses[-1].high_watermark
    q.failover(2, hwm=2)                      # the new leader knows less for a while
    time.sleep(1.5)                           # the behaviour: that while, the shown HWM never goes back
    assert all(a.high_watermark <= b.high_watermark for a, b in zip(f.statuses, f.statuses[1:]))
    assert f.statuses[-1].high_watermark >= high
    q.commit()
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 10)
    check_contiguous(f.events)


def test_dropped_connection_during_a_long_poll(quorums):
    q = a_cluster_log(quorums(3)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    wait_until(lambda: parked_at_the_log_end(q), "a Fetch parked in a long poll")
    q.nodes[1].drop_connections()
    q.append([topic("after-drop", uid(106))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 10), f.error
    check_contiguous(f.events)
    assert f.offsets() == list(range(q.log.end_offset))


@pytest.mark.parametrize("action", ["drop-before", "drop-after"])
def test_dropped_requests_are_retried(quorums, action):
    q = a_cluster_log(quorums(1)).start()
    q.nodes[1].faults += [Fault(action, api_key=1), Fault(action, api_key=1)]
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    assert f.offsets() == list(range(q.log.end_offset))


def test_a_slow_answer_beyond_the_request_timeout_is_retried(quorums):
    q = a_cluster_log(quorums(1)).start()
    q.nodes[1].faults.append(Fault("delay", api_key=1, seconds=2.0))
    f = quorums.follow(live_config(q, timeout=10, request_timeout=0.5))
    assert f.wait(caught_up, 10), f.error
    assert f.offsets() == list(range(q.log.end_offset))


# ------------------------------------------------------------------ failover

def test_failover_mid_log(quorums):
    q = a_cluster_log(quorums(3, profile="4.1")).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    q.append([topic("before", uid(107))], commit=True)
    q.failover(3, hwm=-1)
    q.nodes[1].stop()                          # the old leader is gone
    q.append([topic("after", uid(108))])
    q.commit()
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 15), (f.error, f.statuses[-1:])
    assert f.statuses[-1].leader_id == 3 and f.statuses[-1].leader_epoch == 2
    check_contiguous(f.events)
    assert f.offsets() == list(range(q.log.end_offset))


@pytest.mark.parametrize("profile", ["3.7", "4.1"])
def test_parked_fetch_answered_not_leader_moves_to_the_new_leader(quorums, profile):
    q = a_cluster_log(quorums(3, profile=profile)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    wait_until(lambda: parked_at_the_log_end(q), "a Fetch parked on node 1")   # which stays up
    q.failover(2, hwm=q.committed)
    q.append([topic("on-2", uid(110))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 10), (f.error, f.statuses[-1:])
    assert f.statuses[-1].leader_id == 2 and q.nodes[2].fetches
    check_contiguous(f.events)
    assert f.offsets() == list(range(q.log.end_offset))


def test_failover_mid_snapshot_restarts_the_download(quorums):
    q = quorums(3)
    snap, end = big_snapshot()
    q.truncate_to_snapshot(snap, end, 1)
    q.commit()
    q.start()
    # the first chunk is answered; the second is held while the leader changes
    q.nodes[1].faults.append(Fault("delay", api_key=59, seconds=0.0))
    q.nodes[1].faults.append(Fault("delay", api_key=59, seconds=0.8))
    f = quorums.follow(live_config(q, timeout=20))
    wait_until(lambda: sum(1 for k, _ in q.nodes[1].requests if k == 59) >= 2,
               "the second FetchSnapshot", timeout=15, interval=0.005)
    q.failover(2, hwm=end + 1)
    assert f.wait(lambda f: f.committed_offset == end + 1, 30), (f.error, f.statuses[-1:])
    snaps = f.of(SnapshotEvent)
    assert len(snaps) == 1 and bytes(snaps[0].data) == snap
    positions = [k for k, _ in q.nodes[2].requests if k == 59]
    assert len(positions) >= 2                     # the whole download again, on the new leader
    check_contiguous(f.events)
    assert f.offsets() == [end]                    # the new leader's LeaderChange batch


def topics_in(data: bytes) -> list[tuple[str, str]]:
    """(name, id) of every TopicRecord in some batches."""
    return [(r.data["name"], r.data["topicId"]) for batch in FileReader("log", buf=data)
            for r in batch.records if r.name == "TopicRecord"]


@pytest.mark.parametrize("profile,seed", [("3.3", 11), ("3.9", 12), ("4.1", 13)])
def test_random_schedule_with_snapshots_rebuilds_the_committed_image(quorums, profile, seed):
    """Appends of new topics, commits, failovers that replace the
    uncommitted tail (the new leader's HWM unknown or behind at first),
    snapshots that delete the log behind them (even one being downloaded),
    dropped connections, at seeded random moments: the image rebuilt from
    what the observer yielded holds exactly the committed topics, and the
    batches it yielded are the leader's log, byte for byte."""
    import random
    rng = random.Random(seed)
    q = a_cluster_log(quorums(3, profile=profile)).start()
    f = quorums.follow(live_config(q, timeout=20))
    assert f.wait(caught_up), f.error
    in_snapshot: list[tuple[str, str]] = []
    deadline = time.monotonic() + 10          # a bound for a very slow machine, not a schedule
    for n in range(1, 41):
        if time.monotonic() > deadline:
            break
        action = rng.random()
        if action < 0.5:
            q.append([topic(f"r{n}", uid(1000 + n))])
            if rng.random() < 0.6:
                q.commit()
        elif action < 0.65:
            leader = rng.choice([i for i in q.nodes if i != q.leader_id])
            replace = rng.random() < 0.6
            q.failover(leader, truncate_to=q.committed if replace else None,
                       tail=[[topic(f"tail{n}", uid(5000 + n))]] if replace else [],
                       hwm=rng.choice([-1, q.committed]))
        elif action < 0.75 and q.committed > q.log.start_offset:
            in_snapshot += snapshot_at_commit(q, in_snapshot)
        elif action < 0.8:
            # the observer loses the leader while the log moves past it into a snapshot
            node = q.nodes[q.leader_id]
            node.stop()
            q.append([topic(f"gone{n}", uid(9000 + n))], commit=True)
            in_snapshot += snapshot_at_commit(q, in_snapshot)
            node.start()
        elif action < 0.85:
            q.nodes[rng.choice(list(q.nodes))].drop_connections()
        else:
            q.commit()
        time.sleep(rng.uniform(0, 0.1))       # the behaviour: faults at random moments of the fetching
    q.commit()
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 20), (f.error, f.statuses[-1:])
    check_contiguous(f.events)
    with q.cond:
        log = b"".join(b.data for b in q.log.batches)
    expected = {name for name, _ in in_snapshot + topics_in(log)}
    assert set(rebuild(f.events).image.topic_names) == expected
    # byte for byte the leader's log, from where it starts now (no record lost or repeated)
    since_snapshot = []
    for e in f.events:
        if isinstance(e, SnapshotEvent):
            since_snapshot = []
        elif isinstance(e, CommittedEvent):
            since_snapshot += split_batches(e.data)
    kept = [d for d in since_snapshot if int.from_bytes(d[:8], "big") >= q.log.start_offset]
    assert b"".join(kept) == log
    assert f.of(SnapshotEvent), "the schedule never sent the observer to a snapshot"


def snapshot_at_commit(q, in_snapshot) -> list:
    """The leader snapshots at its commit point and deletes the log below;
    returns the topics the log below held."""
    end = q.committed
    with q.cond:
        below = b"".join(b.data for b in q.log.batches if b.last < end)
    added = topics_in(below)
    q.truncate_to_snapshot(snapshot_of([topic(name, t) for name, t in in_snapshot + added]), end)
    return added


# ------------------------------------------------------------------ errors (issue 8, "Errors")

def fails(f, timeout):
    assert f.wait(lambda f: f.finished, timeout + 5), "the observer hung past its timeout"
    assert isinstance(f.error, LiveError), repr(f.error)
    message = str(f.error)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_nothing_reachable_names_every_address(quorums):
    q = quorums(2).start()
    addresses = [q.nodes[1].address, q.nodes[2].address]
    q.stop()
    start = time.monotonic()
    f = quorums.follow(live_config(q, timeout=1.0))
    message = fails(f, 1.0)
    assert time.monotonic() - start < 6
    for a in addresses:
        assert a.split("@")[1] in message


def test_cluster_authorization_failed(quorums):
    q = a_cluster_log(quorums(1)).start()
    q.nodes[1].deny_cluster_action = True
    message = fails(quorums.follow(live_config(q)), 5)
    assert "ClusterAction" in message and "Cluster" in message


def test_wrong_cluster_id(quorums):
    q = a_cluster_log(quorums(1)).start()
    message = fails(quorums.follow(live_config(q, cluster_id="not-this-one")), 5)
    assert "cluster id" in message.lower()


def test_broker_listener_instead_of_a_controller(quorums):
    q = quorums(1, profile="broker").start()
    message = fails(quorums.follow(live_config(q)), 5)
    assert "FetchSnapshot" in message or "controller" in message.lower()
    assert "broker" in message.lower() or "controller listener" in message.lower()


def test_controller_too_old(quorums):
    PROFILES["2.8"] = {**PROFILES["3.0"], 1: (0, 11)}
    try:
        q = quorums(1, profile="2.8").start()
        message = fails(quorums.follow(live_config(q)), 5)
        assert "Fetch" in message or "too old" in message
    finally:
        del PROFILES["2.8"]


def test_corrupt_batch_on_the_wire(quorums):
    q = a_cluster_log(quorums(1)).start()
    q.corrupt_batch(2)
    message = fails(quorums.follow(live_config(q)), 5)
    # the same diagnostics as for a file holding the same bytes (answered from offset 0)
    with pytest.raises(CorruptDataError) as e:
        for _ in FileReader("seg.log", buf=b"".join(b.data for b in q.log.batches)):
            pass
    assert message.endswith(str(e.value)[len("seg.log "):]), (message, str(e.value))
    assert q.nodes[1].address in message


def test_a_parked_fetch_gives_way_to_close(quorums):
    q = a_cluster_log(quorums(1)).start()
    f = quorums.follow(live_config(q, max_wait_ms=5000, request_timeout=10))
    assert f.wait(caught_up), f.error
    wait_until(lambda: parked_at_the_log_end(q), "a Fetch parked in a long poll")
    assert f.close() < 2


def test_after_catch_up_losing_the_quorum_is_a_status_not_an_error(quorums):
    q = a_cluster_log(quorums(2)).start()
    f = quorums.follow(live_config(q, timeout=1.0))
    assert f.wait(caught_up), f.error
    for n in q.nodes.values():
        n.stop()
    assert f.wait(lambda f: f.statuses[-1].state == "lost", 10), f.statuses[-1:]
    assert f.error is None and not f.finished
    for n in q.nodes.values():
        n.start()
    q.append([topic("back", uid(109))], commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 15), f.statuses[-1:]


# ------------------------------------------------------------------ DescribeQuorum

def test_describe_quorum_on_a_second_connection(quorums):
    q = a_cluster_log(quorums(3, leader_id=2)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    d = f.observer.describe_quorum()
    assert (d["leaderId"], d["leaderEpoch"], d["highWatermark"]) == (2, 1, q.hwm)
    assert d["answeredBy"] == q.nodes[2].address
    assert [v["replicaId"] for v in d["voters"]] == [1, 2, 3]
    assert {n["nodeId"] for n in d["nodes"]} == {1, 2, 3}
    assert [o["replicaId"] for o in d["observers"]] == [100]
    assert f.following() and not f.finished


@pytest.mark.parametrize("profile,timestamps", [("3.0", False), ("3.3", True), ("4.1", True)])
def test_describe_quorum_by_release(quorums, profile, timestamps):
    q = a_cluster_log(quorums(3, profile=profile)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    d = f.observer.describe_quorum()
    assert d["leaderId"] == 1 and d["highWatermark"] == q.hwm
    voters = {v["replicaId"]: v for v in d["voters"]}
    assert voters[1]["logEndOffset"] == q.log.end_offset
    assert (voters[2]["lastFetchTimestamp"] > 0) == timestamps     # v0 has no times: -1
    if not timestamps:
        assert voters[2]["lastFetchTimestamp"] == voters[2]["lastCaughtUpTimestamp"] == -1


def test_describe_quorum_denied_is_a_live_error(quorums):
    q = a_cluster_log(quorums(1)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    q.nodes[1].deny_describe = True
    with pytest.raises(LiveError) as e:
        f.observer.describe_quorum()
    assert "\n" not in str(e.value)
    assert f.following() and not f.finished       # the follower goes on


def test_image_matches_a_file_load(quorums, tmp_path):
    """The same records written to a segment and served live give the same tree."""
    from metashell.session.files import open_session
    q = a_cluster_log(quorums(3)).start()
    f = quorums.follow(live_config(q))
    assert f.wait(caught_up), f.error
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"".join(b.data for b in q.log.batches))
    assert image_json(rebuild(f.events).image) == image_json(open_session(seg).image)
    assert record_offsets(b"".join(e.data for e in f.of(CommittedEvent))) == list(range(q.hwm))

