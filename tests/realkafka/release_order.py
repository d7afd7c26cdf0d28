"""Each real-Kafka test module's tests of one release run one after another.

A plugin of the whole suite (``pytest_plugins`` in ``tests/conftest.py``).
pytest orders a module's tests so that a module-scoped parameter's set-ups
are few, by the parameter's index; for a test that has a second parameter
of its own (``test_live_quorum``'s ``form``, ``mechanism``) that index runs
over both, so ``[3.4.1-voters]`` landed among 3.5.2's tests. In one worker
that tore 3.4.1's live cluster down and formatted it again over its own
files ("already formatted"). Run last, after pytest's own ordering, this
keeps the first place of each (module, release) and moves the rest of its
tests up behind it; every other test keeps its place.
"""

from __future__ import annotations

import pytest

from .release_times import release_of


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    first_place: "dict[object, int]" = {}
    for place, item in enumerate(items):
        first_place.setdefault(_run_together(item), place)
    items.sort(key=lambda item: first_place[_run_together(item)])


def _run_together(item) -> object:
    """What an item runs with: its module and release, or only itself."""
    version = release_of(item)
    return item if version is None else (item.path, version)
