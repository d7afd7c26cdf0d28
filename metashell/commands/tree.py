"""tree: show a subtree with its contents."""

from __future__ import annotations

from metashell.commands.base import FAILED, NOT_FOUND, OK, Command, expand, has_glob, shown
from metashell.fs.walk import tree_text_lines, write_tree_json
from metashell.render import json_text


class Tree(Command):
    name = "tree"
    description = "Show the contents of metadata nodes in a tree structure."
    details = """\
Text format (stable; Kafka's ShellNodePrinter layout): the start node's own
name is not printed; every child prints as 'name:' on its own line and its
content follows two spaces deeper, children in sorted order. A file's value
prints as cat prints it (scalars plainly, objects as indented JSON), every
line indented. For example 'tree /topics/foo':

  0:
    data:
      {
        "partitionId": 0,
        ...
      }
  id:
    kWcQ2mB9T4yAjf0hnL2t6g
  name:
    foo

A file as the start node prints like cat. When PATHs match several nodes,
each is printed under a 'PATH:' line with its content two spaces deeper.
With no PATH, the working directory.

--output json: one JSON document: a directory is an object of its
children, a file is its value; with several PATHs or a glob, an object
mapping each matched path to its tree.

Errors: 'tree: PATH: no such file or directory' (exit status 1)."""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="nodes to show (default: .)")

    def run(self, ctx, args) -> int:
        targets = args.targets or ["."]
        status = OK
        found = []
        for target in targets:
            matches = expand(ctx, target)
            if not matches:
                ctx.error(f"tree: {target}: {NOT_FOUND}")
                status = FAILED
            found.extend((shown(target, m), m.node) for m in matches)
        several = len(targets) > 1 or any(has_glob(t) for t in targets)
        write = ctx.out.write
        if ctx.json:
            if not several:
                if found:
                    write_tree_json(found[0][1], write)
                    write("\n")
                return status
            write("{")
            for i, (label, node) in enumerate(found):
                write(("," if i else "") + json_text(label) + ":")
                write_tree_json(node, write)
            write("}\n")
            return status
        if len(found) == 1 and not several:
            ctx.write_lines(tree_text_lines(found[0][1]))
            return status
        for label, node in found:
            ctx.write(f"{label}:")
            ctx.write_lines(tree_text_lines(node, 2))
        return status
