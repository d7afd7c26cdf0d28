"""Shared fixtures.

``spark``: one real local Spark (``local[2]``) for the whole test session,
with the ``kraft-metadata`` source registered. It needs the ``spark`` extra
and Java; where either is missing the Spark tests skip with the reason,
except under CI (``CI`` set), where a missing Spark is a failure: CI
installs the extra and has Java, so the Spark tests must run there.
"""

from __future__ import annotations

import gc
import os
import shutil

import pytest


def spark_unavailable() -> "str | None":
    """Why Spark cannot run here, or None."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        return f"the spark extra is not installed ({e}); pip install -e '.[spark]'"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and os.path.exists(
            os.path.join(java_home, "bin", "java"))):
        return "no Java found (PATH or JAVA_HOME); Spark needs Java 17 or 21"
    return None


def require_spark() -> None:
    """Skip (fail under CI) when Spark cannot run here."""
    reason = spark_unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Spark tests, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def spark():
    require_spark()
    from metashell.spark import register
    from metashell.spark.local import start_spark

    session = start_spark("local[2]", app_name="metashell-tests",
                          conf={"spark.sql.shuffle.partitions": "2"})
    register(session)
    yield session
    session.stop()


@pytest.fixture(autouse=True, scope="module")
def _free_sessions():
    """Sessions a test module left open are freed at its end, their files
    unmapped: the loader pauses the cyclic collector and moves what it made
    to the oldest generation, so dead sessions could otherwise pile up past
    the 1024 descriptors that select() (pexpect's) takes."""
    yield
    gc.collect()
