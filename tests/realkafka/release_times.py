"""Each real Kafka release's wall time, printed at the end of the run.

A plugin of the whole suite (``pytest_plugins`` in ``tests/conftest.py``), not
of this folder's conftest: under pytest-xdist the process that prints the
summary collects nothing and so loads no conftest below ``tests/``; it sees
the workers' reports, which carry the release and its workload's note
(``conftest.pytest_runtest_makereport``).
"""

from __future__ import annotations

from collections import defaultdict

# Wall time spent per release (setup, call and teardown of its tests), and what
# its workload run did, gathered from the reports where the summary is printed.
RELEASE_SECONDS: "dict[str, float]" = defaultdict(float)
WORKLOAD_NOTES: "dict[str, str]" = {}


def release_of(item) -> "str | None":
    """The Kafka release a test item runs against (its ``kafka_version``
    parameter), None for a test of no release (or of an empty choice of
    releases, whose parameter pytest sets to a marker object)."""
    version = getattr(getattr(item, "callspec", None), "params", {}).get("kafka_version")
    return version if isinstance(version, str) else None


def pytest_runtest_logreport(report):
    properties = dict(report.user_properties)
    version = properties.get("kafka_version")
    if version is not None:
        RELEASE_SECONDS[version] += report.duration
        WORKLOAD_NOTES[version] = properties.get("kafka_workload") or WORKLOAD_NOTES.get(version, "")


def pytest_terminal_summary(terminalreporter):
    if not RELEASE_SECONDS:
        return
    terminalreporter.section("real Kafka: wall time per release")
    for version in sorted(RELEASE_SECONDS, key=lambda v: tuple(int(p) for p in v.split("."))):
        terminalreporter.write_line(f"Kafka {version:8} {RELEASE_SECONDS[version]:7.1f} s"
                                    f"{WORKLOAD_NOTES[version]}")
    terminalreporter.write_line(f"total        {sum(RELEASE_SECONDS.values()):7.1f} s")
