"""cat: show the contents of metadata files."""

from __future__ import annotations

from metashell.commands.base import FAILED, IS_A_DIRECTORY, NOT_FOUND, OK, Command, shown
from metashell.errors import MetashellError
from metashell.fs.glob import iter_expand
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
            found = 0
            lines = []
            # matches streamed, not listed: '/topics/*/*/data' may match a million
            for match in iter_expand(ctx.root, ctx.cwd, target):
                found += 1
                text = self._text(ctx, target, match)
                if text is None:
                    status = FAILED
                    continue
                lines.append(text)
                if len(lines) >= _LINES_PER_WRITE:
                    ctx.write("\n".join(lines))
                    lines.clear()
            if lines:
                ctx.write("\n".join(lines))
            if not found:
                ctx.error(f"cat: {target}: {NOT_FOUND}")
                status = FAILED
        return status

    @staticmethod
    def _text(ctx, target: str, match) -> "str | None":
        """What ``cat`` prints of one match; None (after saying why) for a
        directory or a value that cannot be read."""
        if match.node.is_dir:
            ctx.error(f"cat: {shown(target, match)}: {IS_A_DIRECTORY}")
            return None
        try:
            value = match.node.value()
        except MetashellError as e:
            ctx.error(f"cat: {shown(target, match)}: {e}")
            return None
        if ctx.json:
            return json_text(value)
        if isinstance(value, (dict, list)):
            return highlight_json(value_text(value), ctx.color)
        return value_text(value)


_LINES_PER_WRITE = 256
