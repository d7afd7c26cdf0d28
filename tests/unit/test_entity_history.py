"""``changes`` and ``log --entity`` give an entity the same history: a
topic's holds its partitions' records, a deleted topic's is found by its
name (or id) up to its removal, and a path that names nothing is an error.
On the bundled example cluster, whose topic tmp-load-test (id
KMXa9J9vQnmn_qdU8k5jQQ) is created at offset 157 and removed at 204."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.commands import run_command
from metashell.session.files import open_session

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster"
DELETED_ID = "KMXa9J9vQnmn_qdU8k5jQQ"


@pytest.fixture(scope="module")
def session():
    return open_session(EXAMPLE)


def changes_offsets(session, path) -> list[int]:
    status, out, err = run_command(session, "changes", path, output="json")
    assert (status, err) == (0, ""), err
    return [row["offset"] for row in json.loads(out)]


def log_offsets(session, path) -> list[int]:
    status, out, err = run_command(session, "log", "--entity", path, output="json")
    assert (status, err) == (0, ""), err
    return [json.loads(line)["offset"] for line in out.splitlines()]


def topic_names(session) -> set[str]:
    """Every topic the replay applied, live or deleted (clickstream-raw's
    TopicRecord, at 229, is in a transaction aborted at 256: log shows it as
    written, no replay applies it)."""
    _, out, _ = run_command(session, "ls", "/topics", output="json")
    return set(json.loads(out)) | {"tmp-load-test"}


@pytest.mark.parametrize("path", ["/topics/nosuch", "/nonsense/path", "/topics/orders/99",
                                  "/topicIds/AAAAAAAAAAAAAAAAAAAAAA"])
def test_log_entity_that_names_nothing_is_an_error(session, path):
    assert run_command(session, "log", "--entity", path) == (
        1, "", f"log: --entity {path}: no such file or directory\n")


def test_log_entity_with_no_record_in_the_window_is_no_error(session):
    assert run_command(session, "log", "--entity", "/topics/orders", "--from-offset", "522") == (0, "", "")


@pytest.mark.parametrize("path", ["/topics/tmp-load-test", f"/topicIds/{DELETED_ID}"])
def test_changes_of_a_deleted_topic_up_to_its_removal(session, path):
    status, out, err = run_command(session, "changes", path, output="json")
    assert (status, err) == (0, "")
    rows = json.loads(out)
    assert [(r["offset"], r["type"]) for r in rows] == [
        (157, "TopicRecord"), (159, "PartitionRecord"), (160, "PartitionRecord"),
        (161, "PartitionRecord"), (204, "RemoveTopicRecord")]
    assert rows[-1]["summary"] == f"topic {DELETED_ID} removed"
    assert changes_offsets(session, path + "/1") == [160]


def test_a_deleted_topic_is_in_the_tree_before_its_removal():
    before = open_session(EXAMPLE, until_offset=201)
    assert changes_offsets(before, "/topics/tmp-load-test") == [157, 159, 160, 161]


def test_changes_and_log_entity_agree_on_every_topic_and_partition(session):
    names = topic_names(session)
    assert {"orders", "tmp-load-test"} <= names and "clickstream-raw" not in names
    for name in sorted(names):
        assert changes_offsets(session, f"/topics/{name}") == log_offsets(session, f"/topics/{name}"), name
    for pid in range(6):
        path = f"/topics/orders/{pid}"
        assert changes_offsets(session, path) == log_offsets(session, path), path
    orders = changes_offsets(session, "/topics/orders")
    assert len(orders) > 1 + 6 and set(changes_offsets(session, "/topics/orders/3")) < set(orders)


def test_changes_of_a_path_that_names_nothing(session):
    assert run_command(session, "changes", "/topics/nosuch") == (
        1, "", "changes: /topics/nosuch: no such file or directory\n")
