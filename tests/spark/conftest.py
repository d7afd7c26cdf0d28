"""The Spark tests' fixture.

``spark``: one real local Spark (``local[2]``) for the whole test session,
with the ``kraft-metadata`` source registered. It needs the ``spark`` extra
and Java; where either is missing the Spark tests skip with the reason,
except under CI (``CI`` set), where a missing Spark is a failure: CI
installs the extra and has Java, so the Spark tests must run there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.spark import require_spark


@pytest.fixture(scope="session")
def spark():
    require_spark()
    from metashell.spark import register
    from metashell.spark.local import start_spark

    session = start_spark("local[2]", app_name="metashell-tests",
                          conf={"spark.sql.shuffle.partitions": "2"})
    register(session)
    log = Path(session.conf.get("spark.metashell.log"))
    yield session
    session.stop()
    log.unlink(missing_ok=True)   # Spark's own output: nothing left in the temporary folder
