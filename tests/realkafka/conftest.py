"""Real-Kafka tests: the ``kafka_version`` parameter, the ``realkafka``
marker, Kafka's logs in the report of a failed test, and each release's wall
time at the end of the run.

Every test under this directory is marked ``realkafka``; a test that takes
the ``kafka_version`` fixture runs once per release chosen by
``METASHELL_KAFKA_VERSIONS`` (default: every release in versions.txt).
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from .cluster import ACTIVE
from .jars import selected_versions

# Wall time spent per release (setup, call and teardown of its tests).
RELEASE_SECONDS: "dict[str, float]" = defaultdict(float)


def pytest_generate_tests(metafunc):
    if "kafka_version" in metafunc.fixturenames:
        versions = selected_versions()
        metafunc.parametrize("kafka_version", versions, ids=versions, scope="module")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "realkafka" in item.nodeid.split("::")[0]:
            item.add_marker(pytest.mark.realkafka)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    version = getattr(getattr(item, "callspec", None), "params", {}).get("kafka_version")
    if version is not None:
        RELEASE_SECONDS[version] += report.duration
    if report.failed:
        for cluster in ACTIVE:
            report.sections.append((f"Kafka {cluster.version} logs", cluster.log_tails()))
    return report


def pytest_terminal_summary(terminalreporter):
    if not RELEASE_SECONDS:
        return
    terminalreporter.section("real Kafka: wall time per release")
    for version, seconds in RELEASE_SECONDS.items():
        terminalreporter.write_line(f"Kafka {version:8} {seconds:7.1f} s")
    terminalreporter.write_line(f"total        {sum(RELEASE_SECONDS.values()):7.1f} s")
