"""The benchmarks, each a module run from the checkout's root:
``python -m bench.shapes``, ``python -m bench.instructions`` ... (see each
module's docstring). Run so, the checkout's packages import as they do in
the tests (``bench._util``, ``tests.support.fake_kraft``), with no change
to ``sys.path``; the tests read the bench's generated shapes as
``bench.shapes``."""
