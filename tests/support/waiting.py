"""Waiting on a condition instead of sleeping: tests poll what they wait for
with a deadline, so that they are as fast as the machine allows and fail
with a message naming what never happened, instead of guessing a pause
long enough for a busy machine."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(condition: "Callable[[], T]", what: str, timeout: float = 30.0,
               interval: float = 0.01) -> T:
    """``condition()``'s first truthy value, polled every ``interval``
    seconds; fails the test (AssertionError naming ``what``) after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
