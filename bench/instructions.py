"""Instructions per record, from ``valgrind --tool=callgrind``: the numbers
that do not move when the machine is busy.

For each shape of ``bench/shapes.py`` (its cached files, generated there)
and each measurement (``walk``: kafka-python's bare walk; ``ls``: load until
``ls /topics`` answers; ``summary``: the same plus ``summary``; ``find``, on
request only: load, then read every file of the tree, every partition
folded, as ``bench/shapes.py --find`` does; ``until``, on request, for
shapes with a limit: ``--until-offset`` in the middle of the log, until
``ls /topics`` answers), runs the
measurement under callgrind, subtracts a run that only does the imports,
and prints instructions per record read, and our counts as a ratio of the
walk's. Callgrind runs 50-100 times slower than the machine: use a small
``--partitions`` (the default, 20,000, takes a few minutes in all).

The modules are compiled to bytecode first and every child runs with
``PYTHONHASHSEED=0``: a child that compiles what it imports (under
``PYTHONDONTWRITEBYTECODE``, each time) or hashes strings in another order
counts millions of instructions that are not the measurement's.

    python -m bench.instructions
    python -m bench.instructions --only snap-8mib-v2 --what ls
    python -m bench.instructions --only logdir --what ls --what find
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._util import BENCH_DIR, again, print_table
from bench.shapes import MEASURES, SHAPES, shape_path

WHAT = ("walk", "ls", "summary")
ON_REQUEST = ("find", "until")


def child(what: str, path: Path, info: dict) -> None:
    import kafka.record  # noqa: F401
    import metashell.fs.walk  # noqa: F401
    import metashell.session.files  # noqa: F401
    if what == "imports":
        return
    from metashell.session.files import open_session
    if what == "ls":
        open_session(path).root.child("topics").children()
    elif what == "summary":
        open_session(path).summary()
    else:
        MEASURES[what](path, info)


def instructions(what: str, path: Path, info: dict) -> int:
    """Instructions (Ir) of one child process under callgrind."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        *again(__file__), "--child", what, str(path), json.dumps(info)],
                       check=True, capture_output=True, env=env, cwd=BENCH_DIR.parent)
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def compile_modules() -> None:
    """Write the bytecode of the project's modules, so that no child compiles them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "metashell", "bench", "tests"],
                   cwd=BENCH_DIR.parent, check=True, env=env)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=20_000)
    ap.add_argument("--only", choices=SHAPES, action="append")
    ap.add_argument("--what", choices=WHAT + ON_REQUEST, action="append")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), json.loads(args.child[2]))
        return 0
    whats = args.what or list(WHAT)
    compile_modules()
    rows = []
    for shape in args.only or SHAPES:
        path, info = shape_path(shape, args.partitions)
        base = instructions("imports", path, info)
        per = {w: (instructions(w, path, info) - base) / info["records"] for w in whats
               if w != "until" or "until" in info}   # a limit only where the shape has one
        walk = per.get("walk")
        rows.append([shape, f"{info['records']:,}"] + [
            "-" if w not in per else
            f"{per[w]:,.0f}" + (f" ({per[w] / walk:.2f}x)" if walk and w != "walk" else "")
            for w in whats])
        print(f"{shape}: done", file=sys.stderr, flush=True)
    print()
    print_table(["shape", "records"] + [f"{w} Ir/rec" for w in whats], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
