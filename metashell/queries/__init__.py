"""Questions asked of a replayed image, answered for the commands, the tree
and the sessions: each partition's state (``partition_states``), the
``summary`` counts, a record described in one line (``describe``), when
each broker registered (``registration``).

Below ``fs`` (the tree shows registration times) and above ``replay``: a
query reads the image and never changes it.
"""
