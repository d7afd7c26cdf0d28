"""cat: show the contents of metadata files."""

from __future__ import annotations

from metashell.commands.base import (FAILED, IS_A_DIRECTORY, NOT_FOUND, OK, Command,
                                     expand, has_glob, shown)
from metashell.commands.registry import register
from metashell.errors import MetashellError
from metashell.render import highlight_json, json_text, value_text


@register
class Cat(Command):
    name = "cat"
    description = "Show the contents of metadata files."
    details = """\
Each PATH may be a glob; every file it matches is printed in order.
Text output prints strings, numbers and booleans plainly and objects and
arrays as indented JSON; when several files are printed (a glob, or more
than one PATH), each value comes after a 'PATH:' line naming the file it
is, with a blank line between them (as ls and changes do). With --output
json each file's value is one compact JSON document per line (ready for
jq, whatever matched); --with-path wraps each as {"path": ..., "value":
...} instead, to tell which file each came from.

Errors: 'cat: PATH: no such file or directory' when nothing matches,
'cat: PATH: is a directory' for a directory; the exit status is then 1."""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="+", metavar="PATH", help="files to show")
        parser.add_argument("--with-path", action="store_true",
                            help="with --output json: each value as {path, value}")

    def run(self, ctx, args) -> int:
        status = OK
        several = len(args.targets) > 1 or any(has_glob(t) for t in args.targets)
        printed = 0
        for target in args.targets:
            matches = expand(ctx, target)
            if not matches:
                ctx.error(f"cat: {target}: {NOT_FOUND}")
                status = FAILED
            for match in matches:
                path = shown(target, match)
                try:
                    value = self._value(match)
                except MetashellError as e:
                    ctx.error(f"cat: {path}: {e}")
                    status = FAILED
                    continue
                self._print(ctx, path, value, args.with_path, several, printed)
                printed += 1
        return status

    @staticmethod
    def _value(match):
        """A file's value; a directory is an error."""
        if match.node.is_dir:
            raise MetashellError(IS_A_DIRECTORY)
        return match.node.value()

    @staticmethod
    def _print(ctx, path: str, value, with_path: bool, several: bool, printed: int) -> None:
        """One file's value; in text, after its path when several are shown."""
        if ctx.json:
            ctx.write(json_text({"path": path, "value": value} if with_path else value))
            return
        if several:
            if printed:
                ctx.write()
            ctx.write(f"{path}:")
        if isinstance(value, (dict, list)):
            ctx.write(highlight_json(value_text(value), ctx.color))
        else:
            ctx.write(value_text(value))
