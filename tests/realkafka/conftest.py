"""Real-Kafka tests: the ``kafka_version`` parameter, the ``realkafka``
marker, Kafka's logs in the report of a failed test, and each report's
release and workload note (summed and printed by ``release_times.py``).

Every test under this directory is marked ``realkafka``; a test that takes
the ``kafka_version`` fixture runs once per release chosen by
``METASHELL_KAFKA_VERSIONS`` (default: every release in versions.txt),
unless it parametrizes ``kafka_version`` itself.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from kafka.errors import KafkaTimeoutError, RequestTimedOutError

from .cluster import ACTIVE, NodeExited
from .jars import require_java_and_maven, selected_versions
from .release_times import release_of
from .workload import KafkaRun, run_release


def pytest_generate_tests(metafunc):
    chosen = any("kafka_version" in str(m.args[0])
                 for m in metafunc.definition.iter_markers("parametrize"))
    if "kafka_version" in metafunc.fixturenames and not chosen:
        versions = selected_versions()
        metafunc.parametrize("kafka_version", versions, ids=versions, scope="module")


# One workload run per release for the whole session, shared by every module
# that asks for it (a failed run is remembered, not repeated).
_RUNS: "dict[str, KafkaRun | BaseException]" = {}
# why a release's first workload run failed, where it was run once more (in its note)
_RETRIED: "dict[str, str]" = {}


@pytest.fixture(scope="session")
def kafka_workdir():
    """Where the session's clusters keep their files: a directory of its own
    (pytest's numbered temporary directories are pruned by other pytest
    processes of the same user, which must not happen under a running
    cluster), removed at the end of the session."""
    path = Path(tempfile.mkdtemp(prefix="metashell-realkafka-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def kafka_run(kafka_version, kafka_workdir) -> KafkaRun:
    """A stopped workload cluster of ``kafka_version`` (see workload.py):
    its metadata dirs, snapshots and segments per node, and what the admin API
    reported once the workload had settled."""
    require_java_and_maven()
    run = _RUNS.get(kafka_version)
    if run is None:
        run = _run_release_once_more_if_a_node_died(kafka_version, kafka_workdir)
        _RUNS[kafka_version] = run
    if isinstance(run, BaseException):
        pytest.fail(f"Kafka {kafka_version}: the workload run failed: {run}")
    return run


def _run_release_once_more_if_a_node_died(version: str, workdir: Path) -> "KafkaRun | Exception":
    """The workload run of ``version``, or why it failed. A JVM that died or
    never listened is Kafka's or the machine's trouble, not metashell's: the
    run is repeated once, in a fresh directory, after saying why on stderr;
    so is a request of the admin client that timed out (a starved machine:
    seen once on 4.3.1, which then passed alone). Any other failure, or a
    second one, is the answer."""
    try:
        return run_release(version, workdir / f"{version}-1")
    except (NodeExited, TimeoutError, KafkaTimeoutError, RequestTimedOutError) as e:
        print(f"Kafka {version}: the workload cluster failed ({e}); running it once more",
              file=sys.stderr)
        _RETRIED[version] = f"{type(e).__name__}: {e}"[:300]
    except Exception as e:  # noqa: BLE001 - remembered for the other modules
        return e
    try:
        return run_release(version, workdir / f"{version}-2")
    except Exception as e:  # noqa: BLE001
        return e


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "realkafka" in item.nodeid.split("::")[0]:
            item.add_marker(pytest.mark.realkafka)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A release's report carries its version and its workload's note (it runs
    where its cluster ran: a pytest-xdist worker, whose reports reach the
    summary's process as they are); a failed one, Kafka's logs."""
    report = yield
    version = release_of(item)
    if version is not None:
        report.user_properties.append(("kafka_version", version))
        report.user_properties.append(("kafka_workload", _workload_note(version)))
    if report.failed:
        for cluster in ACTIVE:
            report.sections.append((f"Kafka {cluster.version} logs", cluster.log_tails()))
    return report


def _workload_note(version: str) -> str:
    run = _RUNS.get(version)
    if isinstance(run, KafkaRun):
        upgrade = [s for s in run.workload.steps if s.startswith("metadata.version")]
        skipped = [s for s, how in run.workload.steps.items() if how != "done"]
        retried = _RETRIED.get(version)
        return (f"  (workload {run.seconds:.0f} s; {', '.join(upgrade)}"
                + (f"; skipped: {', '.join(skipped)}" if skipped else "")
                + (f"; run twice, the first failed: {retried}" if retried else "") + ")")
    return "  (workload failed)" if run is not None else ""
