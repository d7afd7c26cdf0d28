"""The real-Kafka tests' set-up, run before them so that CI times it apart
from the tests: the jars of every selected release (broker and shell, the
same ``METASHELL_KAFKA_VERSIONS`` choice the tests make) resolved from Maven
Central into the cache outside the repository. What is cached is not
fetched again. Where Java or Maven is missing it says so and does nothing:
the tests then skip, or fail under CI, with the same reason.

    python -m tests.realkafka.prepare
"""

from __future__ import annotations

import sys
import time

from .image_shell import NEWEST
from .jars import java_missing, kafka_classpath, selected_versions, shell_classpath


def main() -> int:
    missing = java_missing()
    if missing:
        print(f"realkafka set-up: nothing resolved: {missing}", file=sys.stderr)
        return 0
    start = time.monotonic()
    versions = selected_versions()
    for version in versions:
        kafka_classpath(version)
        shell_classpath(version)
    shell_classpath(NEWEST)
    print(f"realkafka set-up: jars of {len(versions)} releases ready "
          f"in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
