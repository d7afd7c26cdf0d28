"""find: search for nodes in the tree."""

from __future__ import annotations

from itertools import islice

from metashell.commands.base import (FAILED, NOT_FOUND, OK, Command, basename, expand,
                                     path_candidates, shown)
from metashell.fs import glob
from metashell.fs.walk import walk_names
from metashell.render import json_text


def _name_filter(pattern: str):
    """A test of a path's last component against ``-name`` ``pattern``."""
    regex = glob.compile_component(pattern)
    literal = glob.literal_name(pattern)

    def name_ok(path_text: str) -> bool:
        name = path_text[path_text.rfind("/") + 1:] or basename(path_text)
        return regex.fullmatch(name) is not None if regex else name == literal
    return name_ok


class Find(Command):
    name = "find"
    description = "Search for nodes in the directory hierarchy."
    details = """\
Prints each PATH (default: .) and everything below it, depth first, children
in sorted order, one path per line. A PATH without glob characters is
printed as typed and its descendants below it (like find(1)); a glob PATH
prints the absolute paths it matched.

-name GLOB keeps only nodes whose own name matches GLOB (* ? [abc] {a,b});
-type f keeps files, -type d directories. Quote globs so they reach find
unexpanded.

--output json: one JSON array of the paths.

Errors: 'find: PATH: no such file or directory' (exit status 1)."""

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="*", metavar="PATH",
                            help="where to start (default: .)")
        parser.add_argument("-name", dest="name_glob", metavar="GLOB",
                            help="only nodes whose name matches GLOB")
        parser.add_argument("-type", dest="node_type", choices=("f", "d"),
                            help="only files (f) or directories (d)")

    def complete(self, ctx, words):
        if len(words) >= 2 and words[-2] == "-type":
            return [t for t in ("f", "d") if t.startswith(words[-1])]
        if len(words) >= 2 and words[-2] == "-name":
            return []
        if words and words[-1].startswith("-"):
            return [o for o in self.option_strings() if o.startswith(words[-1])]
        return path_candidates(ctx, words[-1] if words else "")

    def run(self, ctx, args) -> int:
        name_ok = _name_filter(args.name_glob) if args.name_glob is not None else None
        want_dir = {"f": False, "d": True}.get(args.node_type)

        status = OK
        first = True
        as_json = ctx.json
        write = ctx.out.write
        if as_json:
            write("[")
        for pattern in args.paths or ["."]:
            matches = expand(ctx, pattern)
            if not matches:
                ctx.error(f"find: {pattern}: {NOT_FOUND}")
                status = FAILED
                continue
            for match in matches:
                walked = walk_names(match.node, shown(pattern, match))
                if want_dir is None and name_ok is None:
                    found = (path_text for path_text, _ in walked)
                else:
                    found = (path_text for path_text, is_dir in walked
                             if (want_dir is None or is_dir == want_dir)
                             and (name_ok is None or name_ok(path_text)))
                # written a thousand paths at a time
                while chunk := list(islice(found, _PATHS_PER_WRITE)):
                    if as_json:
                        write(("" if first else ",") + ",".join(map(json_text, chunk)))
                        first = False
                    else:
                        write("\n".join(chunk) + "\n")
        if as_json:
            write("]\n")
        return status


_PATHS_PER_WRITE = 1024
