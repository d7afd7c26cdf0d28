"""The real Kafka files next to the checkout (``../shared/corpora``), which
the project does not ship. Every test that reads them goes through this
module: where they are absent such a test skips with the reason, except
under CI (``CI`` set), where that is a failure, so that CI never passes
quietly without them.

A test says it reads them with the ``corpora`` marker (the root conftest
acts on it) or by calling :func:`require_corpora`; a parametrization over
corpus files takes its cases from :func:`corpus_cases`, which stands in one
marked case for the files when they are absent (so the test is reported,
not dropped as an empty parameter set).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

import pytest

from tests.support.paths import CORPORA

needs_corpora = pytest.mark.corpora


def require_corpora() -> Path:
    """The corpora's directory; skips the calling test where it is absent
    (fails it under CI)."""
    if not CORPORA.is_dir():
        _missing(f"the shared Kafka corpora are not here ({CORPORA}; not shipped with the project)")
    return CORPORA


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the corpus tests, but {reason}")
    pytest.skip(reason)


def corpus_cases(cases: "Callable[[], Iterable]", width: int = 1) -> list:
    """``cases()`` as a list where the corpora are present; otherwise one
    case marked ``corpora`` (skipped, or failed under CI), of ``width``
    values (one per name the parametrization gives)."""
    if CORPORA.is_dir():
        return list(cases())
    return [pytest.param(*[None] * width, id="corpora-absent", marks=needs_corpora)]


def corpus(name: str) -> Path:
    """One entry of the corpora (a file or log dir, by its relative name);
    skips the calling test where it is absent (fails it under CI)."""
    path = require_corpora() / name
    if not path.exists():
        _missing(f"the corpus entry {name} is not there (expected at {path})")
    return path
