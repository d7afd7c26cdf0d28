"""The commands by name: each command's class registers itself where it is
defined (``@register``), as pgcli's special commands do; ``help``, ``man``,
the dispatcher and the completer read :data:`COMMANDS`."""

from __future__ import annotations

import difflib

#: name -> command, alphabetical (the order of help and of error messages)
COMMANDS: dict = {}


def register(cls):
    """Class decorator: one instance of the command ``cls`` under its name."""
    command = cls()
    if command.name in COMMANDS:
        raise ValueError(f"two commands named {command.name!r}")
    COMMANDS[command.name] = command
    ordered = sorted(COMMANDS.items())
    COMMANDS.clear()
    COMMANDS.update(ordered)
    return cls


def command_names() -> list[str]:
    return list(COMMANDS)


def unknown_command_message(name: str) -> str:
    """``unknown command 'blah' (choose from cat, cd, ...)``, plus a
    did-you-mean for a prefix or a close typo."""
    names = command_names()
    message = f"unknown command '{name}' (choose from {', '.join(names)})"
    guesses = [n for n in names if name and n.startswith(name)]
    if not guesses:
        guesses = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if guesses:
        message += "; did you mean " + " or ".join(f"'{g}'" for g in guesses) + "?"
    return message
