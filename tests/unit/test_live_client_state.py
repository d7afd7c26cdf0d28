"""The observer's state machine driven by scripted Fetch answers (no I/O):
leadership, committed-only release, the uncommitted tail, DivergingEpoch,
snapshots, HWM monotonicity, errors."""

from __future__ import annotations

import pytest

from metashell.errors import LiveError
from metashell.kraft.batch import BatchScanner
from metashell.live import CommittedEvent, Controller, SnapshotEvent
from metashell.live import protocol as p
from metashell.live.state import FetchAnswer, Follower
from metashell.kraft.writer import LogWriter
from tests.support.records import noop

C1, C2, C3 = Controller(1, "h1", 9093), Controller(2, "h2", 9093), Controller(3, "h3", 9093)


def batches(base: int, epoch: int, sizes: list[int]) -> bytes:
    """Batches of NoOpRecords at ``base``: one batch per entry of ``sizes``."""
    w = LogWriter(base, epoch)
    for n in sizes:
        w.batch([noop() for _ in range(n)])
    return w.getvalue()


def leader_answer(records=None, hwm=-1, leader=(1, 5), **kw) -> FetchAnswer:
    return FetchAnswer(high_watermark=hwm, records=records, leader=leader, **kw)


def follower_at_leader(epoch=5) -> Follower:
    f = Follower([C1, C2, C3])
    step = f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(1, epoch)), C2)
    assert step.action == "leader" and f.leader == C1 and f.epoch == epoch
    return f


def offsets(events) -> list[tuple[int, int]]:
    """(base, last) of every batch the committed events carry."""
    out = []
    for e in events:
        if isinstance(e, CommittedEvent):
            got = [(h.base_offset, h.last_offset) for h in BatchScanner(e.data, "event")]
            assert got[0][0] == e.base_offset and got[-1][1] == e.last_offset
            out += got
    return out


def test_discovery_from_a_non_leader():
    f = Follower([C1, C2, C3])
    assert f.fetch_fields() == {"leader_epoch": 0, "fetch_offset": 0, "last_fetched_epoch": 0, "high_watermark": -1}
    step = f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(3, 7)), C1)
    assert step.action == "leader" and f.leader == C3 and f.epoch == 7
    assert f.status().state == "connecting"


def test_endpoints_teach_addresses_of_unnamed_controllers():
    f = Follower([Controller(None, "h1", 9093)])
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(2, 4), endpoints={2: ("h2", 9094)}),
               Controller(None, "h1", 9093))
    assert f.leader == Controller(2, "h2", 9094)


def test_election_in_progress_rotates():
    f = Follower([C1, C2])
    step = f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(-1, 9)), C1)
    assert step.action == "rotate" and f.leader is None and f.epoch == 9


def test_stale_node_is_ignored():
    f = follower_at_leader(epoch=5)
    step = f.on_fetch(FetchAnswer(error=p.UNKNOWN_LEADER_EPOCH, leader=(2, 3)), C2)
    assert step.action == "rotate" and f.leader == C1 and f.epoch == 5


@pytest.mark.parametrize("error", [p.BROKER_NOT_AVAILABLE, p.UNKNOWN_SERVER_ERROR, p.UNKNOWN_LEADER_EPOCH])
def test_transient_errors_rotate(error):
    f = follower_at_leader()
    assert f.on_fetch(FetchAnswer(error=error, leader=(1, 5)), C1).action == "rotate"


@pytest.mark.parametrize("error, words", [
    (p.CLUSTER_AUTHORIZATION_FAILED, "ClusterAction on the Cluster resource"),
    (p.INCONSISTENT_CLUSTER_ID, "--cluster-id"),
    (p.INVALID_REQUEST, "INVALID_REQUEST"),
])
def test_fatal_top_level_errors(error, words):
    f = Follower([C1])
    with pytest.raises(LiveError) as e:
        f.on_fetch(FetchAnswer(error=error, top_level=True), C1)
    assert words in str(e.value) and str(C1) in str(e.value)


def test_only_committed_batches_leave_in_order_once():
    f = follower_at_leader()
    data = batches(0, 5, [2, 3, 1])            # offsets 0-1, 2-4, 5
    step = f.on_fetch(leader_answer(data, hwm=3), C1)   # only 0-1 is committed (lastOffset < 3)
    assert step.action == "fetch"
    assert offsets(step.events) == [(0, 1)]
    assert f.next_offset == 6 and f.last_fetched_epoch == 5 and f.committed == 2
    assert f.fetch_fields()["high_watermark"] == 3
    # an empty answer moving the HWM releases the tail kept aside
    step = f.on_fetch(leader_answer(None, hwm=6), C1)
    assert offsets(step.events) == [(2, 4), (5, 5)]
    assert f.committed == 6 and not f.pending
    assert len(step.events) == 1   # one run from one answer is one event


def test_whole_answer_committed_is_passed_without_copy():
    f = follower_at_leader()
    data = batches(0, 5, [1, 1])
    (event,) = f.on_fetch(leader_answer(data, hwm=2), C1).events
    assert event.data is data and event.source == f"controller {C1}"


def test_caught_up_at_the_first_hwm():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2]), hwm=4), C1)
    assert f.target == 4 and f.status().state == "catching-up"
    f.on_fetch(leader_answer(batches(2, 5, [2]), hwm=4), C1)
    status = f.status()
    assert status.state == "following" and status.committed_offset == 4 and status.high_watermark == 4
    assert status.endpoint == str(C1) and status.leader_id == 1 and status.leader_epoch == 5


def test_empty_log_is_caught_up_at_once():
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    assert f.status().state == "following"


def test_trailing_partial_batch_is_dropped_and_fetched_again():
    f = follower_at_leader()
    data = batches(0, 5, [1, 4])
    cut = data[:-10]
    step = f.on_fetch(leader_answer(cut, hwm=5), C1)
    assert offsets(step.events) == [(0, 0)] and f.next_offset == 1
    step = f.on_fetch(leader_answer(batches(1, 5, [4]), hwm=5), C1)
    assert offsets(step.events) == [(1, 4)]


def test_batches_below_the_fetch_offset_are_skipped():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2]), hwm=2), C1)
    step = f.on_fetch(leader_answer(batches(0, 5, [2, 1]), hwm=3), C1)
    assert offsets(step.events) == [(2, 2)]


def test_hwm_going_back_after_failover_is_ignored():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [3]), hwm=3), C1)
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(2, 6)), C1)
    step = f.on_fetch(leader_answer(batches(3, 6, [1]), hwm=-1, leader=(2, 6)), C2)
    assert step.events == [] and f.high_watermark == 3 and f.status().high_watermark == 3
    step = f.on_fetch(leader_answer(None, hwm=2, leader=(2, 6)), C2)
    assert step.events == [] and f.high_watermark == 3
    step = f.on_fetch(leader_answer(None, hwm=4, leader=(2, 6)), C2)
    assert offsets(step.events) == [(3, 3)]


def test_diverging_epoch_truncates_the_uncommitted_tail():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2, 2, 2]), hwm=2), C1)   # 0-1 committed; 2-3, 4-5 pending
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(2, 6)), C1)
    step = f.on_fetch(leader_answer(diverging=(5, 4), leader=(2, 6)), C2)
    assert step.action == "fetch" and step.events == []
    assert f.next_offset == 4 and f.last_fetched_epoch == 5
    step = f.on_fetch(leader_answer(batches(4, 6, [1]), hwm=5, leader=(2, 6)), C2)
    assert offsets(step.events) == [(2, 3), (4, 4)]
    assert [h.epoch for e in step.events for h in BatchScanner(e.data, "x")] == [5, 6]


def test_diverging_at_the_committed_offset_drops_all_pending():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2, 2]), hwm=2), C1)
    f.on_fetch(leader_answer(diverging=(4, 2)), C1)
    assert not f.pending and f.next_offset == 2 and f.last_fetched_epoch == 5


def test_a_leader_whose_log_ends_before_the_image_is_reported_not_followed_back():
    # a quorum restored from an older copy: committed data "diverges"
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2, 2]), hwm=4), C1)
    with pytest.raises(LiveError) as e:
        f.on_fetch(leader_answer(diverging=(3, 1)), C1)
    message = str(e.value)
    assert message.startswith(f"{C1}: the leader's log is behind this image: its log of epoch 3 ends at "
                              "offset 1, before offset 4 already applied (was the quorum restored")
    assert f.committed == 4 and f.fetch_fields()["fetch_offset"] == 4   # nothing was taken back


def test_a_leader_offering_a_snapshot_older_than_the_image_is_reported():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [10]), hwm=10), C1)
    with pytest.raises(LiveError, match="offers a snapshot ending at offset 6, before offset 10 already"):
        f.on_fetch(leader_answer(snapshot=(6, 5), hwm=6), C1)


def test_snapshot_then_fetch_resumes_at_its_end():
    f = follower_at_leader()
    step = f.on_fetch(leader_answer(snapshot=(100, 4), hwm=120), C1)
    assert step.action == "snapshot" and step.snapshot == (100, 4) and step.events == []
    (event,) = f.on_snapshot(100, 4, b"snapshot bytes", "snapshot from 1")
    assert isinstance(event, SnapshotEvent) and (event.end_offset, event.epoch) == (100, 4)
    assert f.fetch_fields()["fetch_offset"] == 100 and f.fetch_fields()["last_fetched_epoch"] == 4
    assert f.committed == 100 and f.status().state == "catching-up"
    step = f.on_fetch(leader_answer(batches(100, 5, [20]), hwm=120), C1)
    assert offsets(step.events) == [(100, 119)] and f.status().state == "following"


def test_a_snapshot_replaces_the_pending_tail():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [2, 2]), hwm=2), C1)
    f.on_snapshot(50, 5, b"x", "s")
    assert not f.pending and f.committed == 50 and f.high_watermark == 50


def test_corrupt_batch_from_the_wire_is_named_like_a_file():
    f = follower_at_leader()
    data = bytearray(batches(7, 5, [3]))
    data[-3] ^= 0xFF
    with pytest.raises(LiveError) as e:
        f.on_fetch(leader_answer(bytes(data), hwm=10), C1)
    message = str(e.value)
    assert f"controller {C1}" in message and "byte 0" in message and "offset 7" in message and "CRC-32C" in message


def test_lost_only_after_catch_up():
    f = follower_at_leader()
    f.on_unreachable("h1: refused")
    assert f.status().state == "connecting"
    f.on_fetch(leader_answer(None, hwm=0), C1)
    f.on_unreachable("h1: refused")
    assert f.status().state == "lost" and f.status().detail == "h1: refused"
    f.on_fetch(leader_answer(None, hwm=0), C1)
    assert f.status().state == "following" and f.status().detail is None


def test_an_election_is_shown_as_an_election_until_a_leader_or_silence():
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    step = f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(-1, 6)), C2)
    assert step.action == "rotate" and f.status().state == "election"
    assert (f.status().leader_id, f.status().leader_epoch) == (-1, 6)
    assert "election of epoch 6 in progress" in f.status().detail
    f.on_no_connection(str(C1), "refused")          # the old leader is gone: still an election
    assert f.status().state == "election"
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(3, 6)), C2)
    f.on_fetch(leader_answer(None, hwm=0, leader=(3, 6)), C3)
    assert f.status().state == "following" and f.status().leader_id == 3


def test_voters_of_the_lost_leaders_epoch_that_know_no_leader_are_an_election():
    # every controller restarted: they come back at the old epoch, leader unknown
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    for c in (C1, C2, C3):
        f.on_no_connection(str(c), "refused")
    assert f.status().state == "lost" and f.status().leader_id == 1
    step = f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(-1, 5)), C2)
    assert step.action == "rotate"
    assert (f.status().state, f.status().leader_id, f.status().leader_epoch) == ("election", -1, 5)
    f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(2, 6)), C3)
    f.on_fetch(leader_answer(None, hwm=0, leader=(2, 6)), C2)
    assert f.status().state == "following" and f.status().leader_id == 2


def test_a_voter_that_knows_no_leader_while_the_leader_answers_changes_nothing():
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(-1, 5)), C2)
    assert f.status().leader_id == 1 and f.status().state != "election"


def test_every_address_unreachable_is_a_lost_quorum_even_after_an_election():
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(-1, 6)), C2)
    for c in (C1, C2):
        f.on_no_connection(str(c), "refused")
        assert f.status().state == "election"
    f.on_no_connection(str(C3), "refused")
    assert f.status().state == "lost" and f.status().detail == f"{C3}: refused"


def test_catching_up_whenever_the_image_is_behind_the_high_watermark():
    f = follower_at_leader()
    f.on_fetch(leader_answer(batches(0, 5, [4]), hwm=4), C1)
    assert f.status().state == "following"
    # the quorum ran ahead (the observer was away): an answer capped before the HWM
    f.on_fetch(leader_answer(batches(4, 5, [4]), hwm=20), C1)
    assert f.status().state == "catching-up" and f.status().committed_offset == 8
    f.on_fetch(leader_answer(batches(8, 5, [12]), hwm=20), C1)
    assert f.status().state == "following"


def test_backoff_doubles_to_two_seconds_with_jitter():
    from metashell.live.observer import Backoff
    b = Backoff()
    delays = [b.delay() for _ in range(10)]
    nominal = [min(2.0, 0.05 * 2 ** i) for i in range(10)]
    assert all(0.8 * n <= d <= 1.2 * n for d, n in zip(delays, nominal))
    assert len({round(d / n, 6) for d, n in zip(delays, nominal)}) > 1   # jittered, not in step
    b.reset()
    assert 0.04 <= b.delay() <= 0.06


def test_node_endpoints_win_over_ids_given_with_c():
    f = Follower([C1, C2])
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(2, 4),
                           endpoints={2: ("kafka-2.internal", 9093)}), C1)
    assert f.leader == Controller(2, "kafka-2.internal", 9093) and not f.warnings


def test_node_endpoints_that_give_an_address_of_c_another_id_are_reported():
    swapped = [Controller(1, "h2", 9093), Controller(2, "h1", 9093)]
    f = Follower(swapped)
    f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(2, 4), endpoints={2: ("h2", 9093)}),
               swapped[1])
    assert f.leader == Controller(2, "h2", 9093)
    assert f.warnings == ["-C names 1@h2:9093 but the quorum says node 2 listens at h2:9093: the ids in -C "
                          "do not match the voters' node ids; using what the quorum says"]


def test_a_c_id_that_is_not_the_node_there_is_reported_and_dropped():
    # no NodeEndpoints (3.3-3.8): -C says 1@h2, the node at h2 is 2 and names 1 as leader
    swapped = [Controller(2, "h1", 9093), Controller(1, "h2", 9093), C3]
    f = Follower(swapped)
    step = f.on_fetch(FetchAnswer(error=p.FENCED_LEADER_EPOCH, leader=(1, 4)), C3)
    assert step.action == "leader" and f.leader == swapped[1]
    step = f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(1, 4)), swapped[1])
    assert step.action == "rotate" and f.leader is None
    assert f.warnings == ["-C names 1@h2:9093 but the controller at h2:9093 is not node 1: it answered "
                          "NOT_LEADER_OR_FOLLOWER naming node 1 as the leader of epoch 4; the ids in -C do "
                          "not match the voters' node ids (looking for the leader at the other addresses)"]
    # the real leader, under the id -C gave it, answers as node 1: now its address is known
    f.on_fetch(leader_answer(None, hwm=0, leader=(1, 4)), swapped[0])
    assert f.leader == Controller(1, "h1", 9093) and f.status().state == "following"
    assert f.warnings[1].startswith("-C names 2@h1:9093 but the controller at h1:9093 is node 1 (it "
                                    "answered as the leader)")


def test_a_resigning_leader_known_to_answer_as_leader_is_not_taken_for_a_wrong_id():
    f = follower_at_leader()
    f.on_fetch(leader_answer(None, hwm=0), C1)
    step = f.on_fetch(FetchAnswer(error=p.NOT_LEADER_OR_FOLLOWER, leader=(1, 5)), C1)
    assert step.action == "leader" and f.leader == C1 and not f.warnings


def test_invalid_request_for_the_partition_is_fatal():
    f = follower_at_leader()
    with pytest.raises(LiveError, match="INVALID_REQUEST"):
        f.on_fetch(FetchAnswer(error=p.INVALID_REQUEST, leader=(1, 5)), C1)


def test_a_downloaded_snapshot_is_checked_like_a_file():
    from metashell.live.observer import _check_batches
    from metashell.kraft.writer import snapshot_bytes
    good = snapshot_bytes([noop() for _ in range(10)], epoch=3)
    _check_batches(good, "snapshot 10-3 from controller 1@h1:9093")
    bad = bytearray(good)
    bad[-5] ^= 0xFF
    with pytest.raises(LiveError) as e:
        _check_batches(bad, "snapshot 10-3 from controller 1@h1:9093")
    assert str(e.value).startswith("snapshot 10-3 from controller 1@h1:9093 (byte ") and "CRC-32C" in str(e.value)
    with pytest.raises(LiveError, match="torn"):
        _check_batches(good[:-7], "snapshot 10-3 from controller 1@h1:9093")
