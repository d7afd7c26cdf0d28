"""Kafka's command-line tools run in one JVM per cluster (``ToolServer.java``).

A cluster's workload and its degraded state run about fifteen of Kafka's tools
(``kafka-topics``, ``kafka-configs``, ``kafka-metadata-quorum``, ...). Each as
a JVM of its own costs a JVM start and the admin client's class loading, 3-6 s
on a busy two-core machine; ``ToolJvm`` starts one JVM and sends it the tools
one at a time, each with its own stdout, stderr and exit code, as if it had
been run alone (the tools' ``Exit.exit`` throws instead of ending the JVM).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import tempfile
from pathlib import Path

from .jars import cache_root, compiled

SOURCE = Path(__file__).resolve().parent / "ToolServer.java"
STOP_TIMEOUT_S = 10.0


class ToolFailed(AssertionError):
    """A tool exited non-zero; the message holds its command and output."""


def server_classes() -> Path:
    """ToolServer compiled (once per source change; it needs no Kafka jar)."""
    return compiled(SOURCE, cache_root() / "tool-server")


class ToolJvm:
    """One ToolServer JVM on ``classpath``, started by ``java_options``; stopped
    by PID in ``close``."""

    def __init__(self, java_options: "list[str]", classpath: str, workdir: Path):
        self.workdir = Path(tempfile.mkdtemp(prefix="tools-", dir=workdir))
        cmd = ["java", *java_options, "-cp", f"{server_classes()}{os.pathsep}{classpath}",
               "ToolServer"]
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=self.workdir)
        self.count = 0

    def run(self, main_class: str, args: "tuple[str, ...]", timeout: float) -> "tuple[int, str, str]":
        """``main_class``'s exit code, stdout and stderr; TimeoutError (and the
        JVM killed) when it does not answer within ``timeout`` s."""
        if any("\t" in a or "\n" in a for a in args):
            raise ValueError(f"a tool argument holds a tab or a newline: {args!r}")
        self.count += 1
        out = self.workdir / f"{self.count}.out"
        line = "\t".join([str(out), main_class, *args]) + "\n"
        self.process.stdin.write(line.encode())
        self.process.stdin.flush()
        answer = self._answer(timeout, main_class)
        err = Path(f"{out}.err")
        return int(answer.split()[1]), out.read_text(), err.read_text()

    def _answer(self, timeout: float, main_class: str) -> str:
        # a selector, not select(): a long test session's descriptors pass 1024
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            ready = waiting.select(timeout)
        answer = self.process.stdout.readline().decode() if ready else ""
        if not answer.startswith("exit "):
            self.close()
            why = (f"did not answer within {timeout:.0f} s" if not ready else
                   f"ended the tools JVM (status {self.process.returncode})")
            raise TimeoutError(f"{main_class} {why}")
        return answer

    def close(self) -> None:
        """End the JVM (stdin closed; SIGKILL if it lingers) and reap it."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(STOP_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
