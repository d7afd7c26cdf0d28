"""Fixtures of the whole suite. The suite's layout: ``unit/`` (in-process),
``e2e/`` (the command line as a process), ``realkafka/`` (real Kafka
releases), ``spark/`` (a real local Spark), ``support/`` (what they share:
builders, fakes, test doubles; imported as ``tests.support.<module>``)."""

from __future__ import annotations

import gc

import pytest

from tests.support.corpora import require_corpora


@pytest.fixture(autouse=True, scope="module")
def _free_sessions():
    """Sessions a test module left open are freed at its end, their files
    unmapped: the loader pauses the cyclic collector and moves what it made
    to the oldest generation, so dead sessions could otherwise pile up past
    the 1024 descriptors that select() (pexpect's) takes."""
    yield
    gc.collect()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "corpora: reads the real Kafka files of ../shared/corpora (skips where they "
                   "are absent, fails under CI): tests.support.corpora")


@pytest.fixture(autouse=True)
def _corpora(request):
    """A test marked ``corpora`` needs the shared corpora (tests.support.corpora)."""
    if request.node.get_closest_marker("corpora") is not None:
        require_corpora()
