"""The test suite, one folder per kind of test: ``unit/`` (in-process),
``e2e/`` (the command line as a process), ``realkafka/`` (real Kafka
releases), ``spark/`` (a real local Spark) and ``support/`` (what they
share, imported as ``tests.support.<module>``)."""
