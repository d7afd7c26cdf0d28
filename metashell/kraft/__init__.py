"""The KRaft wire format: primitives, schemas, the record catalog, framing, batches, compression, writing."""
