"""A session: one loaded source, what the shell and the CLI talk to.

Opening files (``files``: plan, read, replay, build the tree), a live
quorum followed (``live``), a one-shot ``log`` that replays nothing
(``planned``), reading files into an engine (``loading``), the image
``diff`` compares with (``baseline``), the log before a snapshot
(``prehistory``), time travel's range (``travel``) and a load's remarks
(``findings``). The package sits above ``fs`` and below the commands' callers
(``cli``, ``repl``, ``spark``); nothing below it imports it.
"""
