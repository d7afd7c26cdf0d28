"""cd: set the working directory."""

from __future__ import annotations

from metashell.commands.base import (FAILED, NOT_A_DIRECTORY, NOT_FOUND, OK, Command,
                                     expand)


class Cd(Command):
    name = "cd"
    description = "Set the current working directory."
    path_args = "first"
    dirs_only = True
    details = """\
With no PATH, go to /. 'cd -' goes back to the previous directory. PATH may
be a glob that matches exactly one directory (a glob matching several is an
error rather than a silent pick).

Errors: 'cd: PATH: no such file or directory', 'cd: PATH: not a directory',
'cd: PATH: ambiguous (N directories match)'; the exit status is then 1."""

    def add_arguments(self, parser):
        parser.add_argument("target", nargs="?", default="/", metavar="PATH",
                            help="the new working directory (default: /)")

    def run(self, ctx, args) -> int:
        target = args.target
        if target == "-":
            target = ctx.previous_cwd or ctx.cwd
        matches = expand(ctx, target)
        if not matches:
            ctx.error(f"cd: {args.target}: {NOT_FOUND}")
            return FAILED
        dirs = [m for m in matches if m.node.is_dir]
        if not dirs:
            ctx.error(f"cd: {args.target}: {NOT_A_DIRECTORY}")
            return FAILED
        if len(dirs) > 1:
            ctx.error(f"cd: {args.target}: ambiguous ({len(dirs)} directories match)")
            return FAILED
        ctx.previous_cwd, ctx.cwd = ctx.cwd, dirs[0].path
        if args.target == "-":
            ctx.write(ctx.cwd)
        return OK
