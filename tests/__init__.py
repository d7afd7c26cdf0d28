"""The test suite, one folder per kind of test (see ``tests/README.md``)."""
