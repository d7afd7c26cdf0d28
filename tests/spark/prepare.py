"""The store tests' set-up, run before them so that CI times it apart from
the tests: from Maven Central, into the caches outside the repository,
Hadoop's jars at PySpark's Hadoop version (``hadoop-aws`` with the AWS SDK
bundle it declares, for s3a; ``hadoop-client-minicluster``, for HDFS) and
S3Proxy's (the S3 server). What is cached is not fetched again. Where Java,
Maven or PySpark is missing it says so and does nothing: the tests then
skip, or fail under CI, with the same reason.

    python -m tests.spark.prepare
"""

from __future__ import annotations

import shutil
import sys
import time

from tests.support import s3proxy
from tests.support.hadoop_jars import minicluster_jars, s3a_jars
from tests.support.spark import spark_unavailable


def _missing() -> "str | None":
    tools = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if tools:
        return f"no {' or '.join(tools)} on PATH"
    return spark_unavailable()


def main() -> int:
    missing = _missing()
    if missing:
        print(f"spark store set-up: nothing resolved: {missing}", file=sys.stderr)
        return 0
    for what, resolve in (("s3a (hadoop-aws, AWS SDK bundle)", s3a_jars),
                          ("S3Proxy", s3proxy.jars), ("HDFS minicluster", minicluster_jars)):
        began = time.monotonic()
        resolve()
        print(f"spark store set-up: {what} jars ready in {time.monotonic() - began:.0f} s",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
