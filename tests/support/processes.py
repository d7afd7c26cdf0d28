"""Servers the Spark tests start as plain processes on loopback, stopped by PID.

Each is started in its own process group with its output in a log file of
its working folder; ``stop`` ends it by its PID (SIGTERM, then SIGKILL) and
every server still running when the interpreter exits is stopped too, so a
failed or interrupted test session leaves nothing behind.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time
from pathlib import Path

_RUNNING: "dict[int, subprocess.Popen]" = {}


def start(cmd: "list[str]", workdir: Path, log_name: str, env: "dict | None" = None
          ) -> subprocess.Popen:
    """Start ``cmd`` in ``workdir``, its output in ``workdir/log_name``."""
    workdir.mkdir(parents=True, exist_ok=True)
    with open(workdir / log_name, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    _RUNNING[proc.pid] = proc
    return proc


def stop(proc: subprocess.Popen, grace_s: float = 10) -> None:
    """End ``proc`` by its PID: SIGTERM, then SIGKILL after ``grace_s``."""
    _RUNNING.pop(proc.pid, None)
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace_s)


def wait_for(check, what: str, proc: subprocess.Popen, log: Path, timeout_s: float):
    """Poll ``check()`` until it returns a true value; fail naming ``what`` and
    the log's tail if ``proc`` exits or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode}) before it was ready:\n"
                               + _tail(log))
        time.sleep(0.5)
    raise RuntimeError(f"{what} not ready after {timeout_s:.0f} s:\n" + _tail(log))


def _tail(log: Path, chars: int = 3000) -> str:
    try:
        return log.read_text(errors="replace")[-chars:]
    except OSError:
        return f"(no log at {log})"


@atexit.register
def _stop_all() -> None:
    for proc in list(_RUNNING.values()):
        stop(proc, grace_s=5)


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else "java"
