"""cat: show the contents of metadata files."""

from __future__ import annotations

from metashell.commands.base import (FAILED, IS_A_DIRECTORY, NOT_FOUND, OK, Command,
                                     expand, shown)
from metashell.errors import MetashellError
from metashell.render import highlight_json, json_text, value_text


class Cat(Command):
    name = "cat"
    description = "Show the contents of metadata files."
    details = """\
Each PATH may be a glob; every file it matches is printed in order.
Text output prints strings, numbers and booleans plainly and objects and
arrays as indented JSON. With --output json each file's value is one
compact JSON document per line (ready for jq).

Errors: 'cat: PATH: no such file or directory' when nothing matches,
'cat: PATH: is a directory' for a directory; the exit status is then 1."""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="+", metavar="PATH", help="files to show")

    def run(self, ctx, args) -> int:
        status = OK
        for target in args.targets:
            matches = expand(ctx, target)
            if not matches:
                ctx.error(f"cat: {target}: {NOT_FOUND}")
                status = FAILED
                continue
            for match in matches:
                if match.node.is_dir:
                    ctx.error(f"cat: {shown(target, match)}: {IS_A_DIRECTORY}")
                    status = FAILED
                    continue
                try:
                    value = match.node.value()
                except MetashellError as e:
                    ctx.error(f"cat: {shown(target, match)}: {e}")
                    status = FAILED
                    continue
                if ctx.json:
                    ctx.write(json_text(value))
                elif match.node.text() is not None:
                    ctx.write(match.node.text())
                elif isinstance(value, (dict, list)):
                    ctx.write(highlight_json(value_text(value), ctx.color))
                else:
                    ctx.write(value_text(value))
        return status
