"""What the tests share and are not tests themselves: builders of records
and files, the fake KRaft quorum, test doubles of the session, paths of the
checkout. Imported as ``tests.support.<module>`` (the repository root is on
pytest's ``pythonpath``)."""
