"""Spark reading S3 in the tests: ``hadoop-aws`` (and the AWS SDK bundle it
declares, :func:`.hadoop_jars.s3a_jars`) on the driver's class path and the
store's settings as ``spark.hadoop.*``, the way a user passes them to
``spark-submit``. The shared test session was started without those jars,
so reads from S3 run in a child driver (:mod:`.s3a_reads`) and the CLI in a
child process, both given ``PYSPARK_SUBMIT_ARGS``.

The settings make a dead endpoint or a missing bucket fail in seconds: one
attempt of the SDK, one retry of s3a, short connection timeouts (s3a's
defaults retry for minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .hadoop_jars import s3a_jars
from .paths import REPO
from .s3proxy import USER, Identity

#: a child driver's or CLI run's limit against a hang, not a speed check: every table
#: twice over the fleet takes minutes on a quiet machine, many more on a loaded one
RUN_TIMEOUT_S = 2400


def settings(endpoint: str, identity: Identity = USER) -> dict:
    """``spark.hadoop.*`` for the S3 server at ``endpoint``, signed as ``identity``."""
    return {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": identity.access_key,
        "spark.hadoop.fs.s3a.secret.key": identity.secret,
        "spark.hadoop.fs.s3a.attempts.maximum": "1",
        "spark.hadoop.fs.s3a.retry.limit": "1",
        "spark.hadoop.fs.s3a.retry.interval": "100ms",
        "spark.hadoop.fs.s3a.connection.establish.timeout": "2s",
        "spark.hadoop.fs.s3a.connection.timeout": "10s",
    }


def bucket_settings(bucket: str, identity: Identity) -> dict:
    """``spark.hadoop.*`` that sign the requests to ``bucket`` alone as
    ``identity`` (s3a's per-bucket settings), beside the session's own."""
    return {f"spark.hadoop.fs.s3a.bucket.{bucket}.access.key": identity.access_key,
            f"spark.hadoop.fs.s3a.bucket.{bucket}.secret.key": identity.secret}


def env(conf: dict) -> dict:
    """The environment of a child PySpark driver with s3a and ``conf``."""
    jars = os.pathsep.join(str(j) for j in s3a_jars())
    confs = " ".join(f"--conf {k}={v}" for k, v in conf.items())
    path = [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    return dict(os.environ, PYSPARK_SUBMIT_ARGS=f"--driver-class-path {jars} {confs} pyspark-shell",
                PYTHONPATH=os.pathsep.join(path))


def reads(conf: dict, request: dict) -> dict:
    """What :mod:`.s3a_reads` answers to ``request``, read on a child driver."""
    proc = subprocess.run([sys.executable, "-m", "tests.support.s3a_reads", json.dumps(request)],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env(conf),
                          cwd=REPO)
    if proc.returncode != 0:
        raise AssertionError(f"the s3a reads failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def fleet(conf: dict, *paths: str, tmp=None) -> subprocess.CompletedProcess:
    """``kafka-metadata-fleet PATHS --master local[1]`` with s3a and ``conf``;
    ``tmp``, if given, is the run's TMPDIR (to see what the run leaves there)."""
    run_env = env(conf) if tmp is None else dict(env(conf), TMPDIR=str(tmp))
    return subprocess.run([sys.executable, "-m", "metashell.spark.fleet", *paths,
                           "--master", "local[1]"], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, env=run_env, cwd=REPO)
