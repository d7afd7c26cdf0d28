"""One module per entity of the image, each with the ``replay`` of every
record type it owns (Kafka's ``*Delta.replay``), gathered in its ``REPLAY``
table: record name -> ``rule(delta, rec)``. :mod:`..delta` dispatches to them."""
