"""``log`` and ``diff`` on windows that miss the data: a window no record
can be in is a usage error, one past the end (or before the start) of the
data says so on stderr, and ``diff`` never calls a point that does not
exist "equal". Run on the bundled example cluster (offsets 0-522)."""

from __future__ import annotations

import io

import pytest

from metashell.commands import Context, run_words
from tests.support.commands import run_command
from metashell.session.files import open_session
from tests.support.paths import EXAMPLE

LAST = "the last record is offset 522 at 2026-03-03T07:50:02.470Z"
FIRST = "the first record is offset 0 at 2026-03-02T08:00:00.000Z"


@pytest.fixture(scope="module")
def session():
    return open_session(EXAMPLE)


@pytest.mark.parametrize("words, said", [
    (("--from-offset", "99999"), f"--from-offset 99999 is past the end of the data: {LAST}"),
    (("--from-time", "2030-01-01T00:00:00Z"),
     f"--from-time 2030-01-01T00:00:00.000Z is past the end of the data: {LAST}"),
    (("--to-offset", "0", "--from-offset", "0", "--type", "TopicRecord"), None),
    (("--to-time", "2020-01-01T00:00:00Z"),
     f"--to-time 2020-01-01T00:00:00.000Z is before the start of the data: {FIRST}"),
])
@pytest.mark.parametrize("batches", [False, True])
def test_a_window_that_misses_the_data_says_where_the_data_is(session, words, said, batches):
    if batches and "--type" in words:
        return
    status, out, err = run_command(session, "log", *words, *(["--batches"] if batches else []))
    assert status == 0 and out == ""
    if said is None:    # the data is there, the filter kept nothing: no warning
        assert err == ""
    else:
        assert err == f"kafka-metadata-shell: warning: log: {said}\n"


def test_a_window_that_misses_the_data_is_a_problem_for_strict(session):
    ctx = Context.for_session(session, out=io.StringIO(), err=io.StringIO())
    assert run_words(ctx, ["log", "--from-offset", "99999"]) == 0
    assert ctx.problems_raised == 1


@pytest.mark.parametrize("words, said", [
    (("--from-offset", "520", "--to-offset", "510"),
     "--from-offset 520 is after --to-offset 510: no record is in that range"),
    (("--from-time", "2026-03-03T00:00:00Z", "--to-time", "2026-03-02T00:00:00Z"),
     "--from-time 2026-03-03T00:00:00.000Z is after --to-time 2026-03-02T00:00:00.000Z: "
     "no record is in that range"),
    (("--from-offset", "-1"), "--from-offset: must be 0 or more"),
])
def test_an_impossible_window_is_a_usage_error(session, words, said):
    status, out, err = run_command(session, "log", *words)
    assert (status, out, err) == (2, "", f"log: {said}\n")


def test_a_window_inside_the_data_prints_and_warns_nothing(session):
    status, out, err = run_command(session, "log", "--from-offset", "520", "--to-offset", "600")
    assert status == 0 and err == ""
    assert [line.split()[0] for line in out.splitlines()] == ["520", "521", "522"]


@pytest.mark.parametrize("words, said", [
    (("--from-offset", "9999"), f"--from-offset 9999 is past the end of the data: {LAST}"),
    (("--from-time", "2030-01-01T00:00:00Z"),
     f"--from-time 2030-01-01T00:00:00.000Z is past the end of the data: {LAST}"),
])
def test_diff_from_a_point_past_the_end_is_no_answer(session, words, said):
    status, out, err = run_command(session, "diff", *words)
    assert (status, out) == (2, "")
    assert err == f"diff: {said}: there is no image at that point to compare with\n"


def test_diff_past_the_end_of_a_limited_load_replays_further():
    limited = open_session(EXAMPLE, until_offset=201)
    status, _, err = run_command(limited, "diff", "--from-offset", "9999")
    assert status == 2 and f"--from-offset 9999 is past the end of the data: {LAST}" in err
    status, out, err = run_command(limited, "diff", "--from-offset", "300", "--stat")
    assert status == 1 and err == "" and "topics" in out


def test_diff_from_the_last_record_is_equal(session):
    assert run_command(session, "diff", "--from-offset", "522") == (0, "", "")
