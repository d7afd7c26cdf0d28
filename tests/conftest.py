"""Fixtures of the whole suite. The suite's layout: ``unit/`` (in-process),
``e2e/`` (the command line as a process), ``realkafka/`` (real Kafka
releases), ``spark/`` (a real local Spark), ``support/`` (what they share:
builders, fakes, test doubles; imported as ``tests.support.<module>``)."""

from __future__ import annotations

import gc
import signal

import pytest

from tests.realkafka.release_times import release_of
from tests.support.corpora import require_corpora

# each real Kafka release's wall time in the summary, and its tests in an order
# that sets each of its module's clusters up once (plugins: see their docstrings)
pytest_plugins = ["tests.realkafka.release_times", "tests.realkafka.release_order"]


@pytest.fixture(autouse=True, scope="module")
def _free_sessions():
    """Sessions a test module left open are freed at its end, their files
    unmapped: the loader pauses the cyclic collector and moves what it made
    to the oldest generation, so dead sessions could otherwise pile up past
    the 1024 descriptors that select() (pexpect's) takes."""
    yield
    gc.collect()


def pytest_configure(config):
    _hear_ctrl_c()
    config.addinivalue_line(
        "markers", "corpora: reads the real Kafka files of ../shared/corpora (skips where they "
                   "are absent, fails under CI): tests.support.corpora")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Each test's pytest-xdist group (``--dist loadgroup``), marked before
    the worker turns the marks into node ids (first: this file is registered
    before xdist's worker plugin, whose hook would otherwise run first and
    see no mark, and the groups would be one test each). What shares an
    expensive set-up runs in one worker, which sets it up once:

    * every test of a real Kafka release, all releases in one group: their
      clusters (a workload cluster per release, shared across modules, and
      the live and combined ones) then run one after another, as they would
      in one process, while the other worker runs the rest. Two releases'
      clusters side by side (ten JVMs electing and registering on two cores)
      starved each other's brokers, and per-release groups taking turns
      (``cluster.ClusterSlot``) left a worker waiting for the other's
      cluster: 25 minutes instead of about 21;
    * the Spark tests (one session, the standalone cluster, HDFS and S3);
    * any other test with its file (its module's fixtures)."""
    for item in items:
        if release_of(item) is not None:
            group = "kafka-releases"
        elif item.path.parent.name == "spark":
            group = "spark"
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _corpora(request):
    """A test marked ``corpora`` needs the shared corpora (tests.support.corpora)."""
    if request.node.get_closest_marker("corpora") is not None:
        require_corpora()


def _hear_ctrl_c() -> None:
    """Ctrl-C reaches the suite and the processes it starts even when the
    suite was started in the background of a script (``cmd &`` without job
    control), which sets SIGINT to be ignored, and ignored it stays across
    ``exec``: the tests of Ctrl-C (a shell exits 130, ``watch`` stops) send
    it to themselves or to a child, which would then wait forever. A handler
    of our own is reset to the default in a child, as Python's is."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
