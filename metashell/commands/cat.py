"""cat: show the contents of metadata files."""

from __future__ import annotations

from metashell.commands.base import (FAILED, IS_A_DIRECTORY, NOT_FOUND, OK, Command, has_glob,
                                     shown)
from metashell.errors import MetashellError
from metashell.fs.bulk import file_texts, shown_text
from metashell.fs.glob import iter_expand, iter_file_groups, matches_below
from metashell.render import highlight_json, json_text, value_text


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
            found = 0
            lines = []
            # matches streamed, not listed: '/topics/*/*/data' may match a million
            for match, made in self._matches(ctx, target):
                found += 1
                if match is None:   # a file's path and text, made with its siblings'
                    text = f"{chr(10) if printed else ''}{made[0]}:\n" \
                           f"{highlight_json(made[1], ctx.color)}"
                else:
                    text = self._text(ctx, target, match, args.with_path, several, printed)
                if text is None:
                    status = FAILED
                    continue
                printed += 1
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
    def _matches(ctx, target: str):
        """``(match, None)`` for each match of ``target``, or ``(None, (path,
        text))`` for a file whose text its parent made with its siblings'
        (text output of ``.../*/NAME``: a topic's partitions' data, see
        ``Bulk.file_texts``), in the order of the matches."""
        groups = None if ctx.json else iter_file_groups(ctx.root, ctx.cwd, target)
        if groups is None:
            for match in iter_expand(ctx.root, ctx.cwd, target):
                yield match, None
            return
        for parent, name in groups:
            texts = file_texts(parent.node, name)
            if texts is None:
                for match in matches_below(parent, name):
                    yield match, None
                continue
            here = parent.path if parent.components else ""
            for child, text in texts:
                yield None, (f"{here}/{child}/{name}", text)

    @staticmethod
    def _text(ctx, target: str, match, with_path: bool, several: bool,
              printed: int) -> "str | None":
        """What ``cat`` prints of one match (in text, after its path when
        several may be shown); None (after saying why) for a directory or a
        value that cannot be read."""
        if match.node.is_dir:
            ctx.error(f"cat: {shown(target, match)}: {IS_A_DIRECTORY}")
            return None
        made = None
        try:   # text output shows codes Kafka prints by name by their names
            if ctx.json:
                value = match.node.value()
            else:   # the text of the shown value, when the node makes it cheaper
                made = shown_text(match.node)
                value = match.node.shown_value() if made is None else None
        except MetashellError as e:
            ctx.error(f"cat: {shown(target, match)}: {e}")
            return None
        if ctx.json:
            if with_path:
                return json_text({"path": shown(target, match), "value": value})
            return json_text(value)
        text = match.node.text()   # Kafka's strings under /image
        if text is not None:
            pass
        elif made is not None:   # an object's text (a partition's data)
            text = highlight_json(made, ctx.color)
        elif isinstance(value, (dict, list)):
            text = highlight_json(value_text(value), ctx.color)
        else:
            text = value_text(value)
        if not several:
            return text
        return f"{chr(10) if printed else ''}{shown(target, match)}:\n{text}"


_LINES_PER_WRITE = 256
