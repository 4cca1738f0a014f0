"""The cost guard: the work semfix does on a fixed corpus of real kernels, counted, not timed.

Wall time on a shared machine swings 2x from run to run; the number of function calls a run
makes does not. Each figure is one in-process `semfix check -q --exit-zero --no-cache --jobs 1` of a pinned
public wheel's Python files (tests too, most of them holding no Pallas code), under cProfile, in
a fresh interpreter with PYTHONHASHSEED=0, counting the calls semfix makes and the calls made
into semfix: a call counts where its caller or its callee is semfix's own code. What libraries
do inside (libcst, click, packaging) is left out, so a new release of one moves nothing, while
a walk semfix starts (`ast.walk`, `tokenize`) counts one call per node or token it yields, and
so does semfix's own `nodes.walk` (a list, built without a call per node) per node it lists,
and `nodes.names_within` per node of the tree it indexes.

A call is not a cost of its own: one regular expression's search of a whole file, or one
parse, counts one call whatever it reads, and the run-wide questions of issue 43 (a search of
every file for its imports) made a default run 1.6x slower while the calls rose 9%. So each
figure has a second one beside it (`<tree> <selection>, bytes read`): the bytes (or
characters) semfix's own regular expressions search (a search to the end of what it finds, else
to the end of its text; `finditer`, `findall`, `sub`, `split` the whole text; an anchored
`match` none) and its parses (`ast.parse`, `compile`) read; a byte searched by a pattern that
starts with `\\b` or a look-around weighs ten (`weight`): Python's `re` tries such a pattern at
every offset, where one that starts with a literal is searched for in C (a `\\bglobals\\(\\)|...`
searched in every kernel was a tenth of a default check, and the unweighted figure did not see
it). On tpu-inference's default run it read 13.5 MB before those questions (4a2827a) and 40.5 MB
after them (cb9c724), unweighted.

The budget is benchmarks/cost_budget.json, one figure per tree and selection (and its bytes
read) for the Python it was measured on. tests/test_cost.py fails when a figure is more than 10% over its budget (or
30% under it: a change that saves that much lowers the budget, so the saving is kept). A change
that must cost more raises the budget in the same commit (`--update`) and says why there.

    python benchmarks/cost.py [--trees DIR] [--work DIR] [--update]

--trees: a folder holding one unpacked tree per wheel, named as the wheel's requirement
(tpu-inference==0.32.0); else each wheel is fetched with `pip download --no-deps` into --work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGET = HERE / "cost_budget.json"
TREES = ("tpu-inference==0.32.0", "tokamax==0.0.17")
NEWER_PYTHON = ("--python-version", "3.12", "--only-binary=:all:")  # tokamax 0.0.17 requires 3.12
SELECTIONS = {"default": (), "every rule": ("--select", "SEM")}
OVER = 1.10  # a figure this far over its budget fails the guard
UNDER = 0.70  # and one this far under it: the budget is lowered (or the corpus did not run)
READ = ", bytes read"  # the figure of the bytes searched and parsed, beside each count of calls

#: Run in a fresh interpreter, in the tree (named `.`: a tree kept in a hidden folder, such as
#: pytest's cache, is not excluded); argv holds check's options; prints the two counts.
_COUNT = """
import ast, builtins, cProfile, os, re, sys
from pathlib import Path

import semfix
from semfix.analysis import nodes

from cost import weight

walked, whole = 0, nodes.walk
read = 0  # bytes (or characters) semfix's regular expressions search and its parses read
ours = str(Path(semfix.__file__).parent) + os.sep


def walk(node):  # before any module binds it: a walk's nodes are counted, as ast.walk's were
    global walked
    found = whole(node)
    walked += len(found)
    return found


nodes.walk = walk
within = nodes.names_within


def names_within(tree, known):  # one walk of the tree, its nodes counted as `walk`'s, less the defs `known` answers
    global walked
    found = within(tree, known)
    skipped = [d for _, nested in found.values() for d in nested if id(d) in known]
    walked += len(whole(tree)) - sum(len(whole(d)) - 1 for d in skipped)
    return found


nodes.names_within = names_within


def searched(text, pos=0, endpos=sys.maxsize, found=None, pattern=None):  # from `pos` to what it found, else its end
    global read
    if isinstance(text, (str, bytes)):
        read += max(0, (found.end() if found is not None else min(len(text), endpos)) - pos) * weight(pattern)


# A pattern semfix compiled: a search weighs the text it may read, from `pos` on (a match,
# anchored where it starts, counts as the call it is). Each method is one call, as the
# pattern's own was: the call figure stays as without it.
class Counted:

    __slots__ = ("real",)

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def search(self, text, pos=0, endpos=sys.maxsize):
        found = self.real.search(text, pos, endpos)
        searched(text, pos, endpos, found, self.real)
        return found

    def finditer(self, text, pos=0, endpos=sys.maxsize):
        searched(text, pos, endpos, pattern=self.real)
        return self.real.finditer(text, pos, endpos)

    def findall(self, text, pos=0, endpos=sys.maxsize):
        searched(text, pos, endpos, pattern=self.real)
        return self.real.findall(text, pos, endpos)

    def sub(self, repl, text, count=0):
        searched(text, pattern=self.real)
        return self.real.sub(repl, text, count)

    def subn(self, repl, text, count=0):
        searched(text, pattern=self.real)
        return self.real.subn(repl, text, count)

    def split(self, text, maxsplit=0):
        searched(text, pattern=self.real)
        return self.real.split(text, maxsplit)

    def match(self, text, pos=0, endpos=sys.maxsize):
        return self.real.match(text, pos, endpos)

    def fullmatch(self, text, pos=0, endpos=sys.maxsize):
        return self.real.fullmatch(text, pos, endpos)


def real(pattern):
    return pattern.real if isinstance(pattern, Counted) else pattern


def mine():
    return sys._getframe(2).f_code.co_filename.startswith(ours)


def counting(function, text_at):
    def counted(pattern, *args, **kwargs):
        result = function(real(pattern), *args, **kwargs)
        if mine():
            searched(args[text_at], found=result if function is search else None, pattern=pattern)
        return result

    return counted


compiled, search = re.compile, re.search
re.compile = lambda pattern, flags=0: (Counted if mine() else real)(compiled(real(pattern), flags))
for name, text_at in (("search", 0), ("finditer", 0), ("findall", 0), ("split", 0), ("sub", 1), ("subn", 1)):
    setattr(re, name, counting(getattr(re, name), text_at))
for name in ("match", "fullmatch"):
    setattr(re, name, lambda pattern, *args, _real=getattr(re, name), **kwargs: _real(real(pattern), *args, **kwargs))
parsed, compiles = ast.parse, builtins.compile


def parse(source, *args, **kwargs):
    if mine():
        searched(source)
    return parsed(source, *args, **kwargs)


def compile_(source, *args, **kwargs):
    if mine():
        searched(source)
    return compiles(source, *args, **kwargs)


ast.parse, builtins.compile = parse, compile_
from semfix.cli.main import main

profile = cProfile.Profile()
profile.enable()
try:
    arguments = ["check", "-q", "--exit-zero", "--no-cache", "--jobs", "1", *sys.argv[1:], "."]
    main(arguments, prog_name="semfix", standalone_mode=False)
except SystemExit:
    pass
profile.disable()
profile.create_stats()
calls = 0
for (file, _, _), (_, _, _, _, callers) in profile.stats.items():
    for (caller, _, _), (count, *_rest) in callers.items():
        if file.startswith(ours) or caller.startswith(ours):
            calls += count
print(calls + walked, read)
"""


EVERY_OFFSET = 10  # the weight of a byte searched by a pattern tried at every offset


def weight(pattern: object) -> int:
    """What a byte a pattern searches weighs: a pattern that starts with a literal (or a set of
    characters) is searched for in C and tried only where that is; one that starts with `\\b`
    or a look-around, or is an alternation whose branches start with different literals, is
    tried at every offset (or at each of their first characters), ten times the time and more
    (`\\bglobals\\(\\)|...` searched in each kernel was a tenth of a check, and counted as any
    other search; the migration's gate of eight names, a tenth of a run with every rule)."""
    source = getattr(pattern, "pattern", pattern)
    if isinstance(source, bytes):
        source = source.decode("latin-1")
    if not isinstance(source, str):
        return 1
    if source.startswith((r"\b", "(?<", "(?=", "(?!")):
        return EVERY_OFFSET
    import re._parser as parser  # how `re` reads a pattern (Python 3.11+)

    parsed = list(parser.parse(source))
    if len(parsed) == 1 and parsed[0][0] == parser.BRANCH:  # `a|b|c`, no common first literal
        firsts = [tuple(branch)[0] if len(branch) else (None, None) for branch in parsed[0][1][1]]
        if any(op != parser.LITERAL for op, _ in firsts) or len({value for _, value in firsts}) > 1:
            return EVERY_OFFSET
    return 1


def count(tree: Path, options: tuple[str, ...]) -> tuple[int, int]:
    """The calls one check of `tree` makes, and the bytes its searches and parses read (the
    module's docstring says which count)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r})\n{_COUNT}", *options],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    calls, read = done.stdout.split()[-2:]
    return int(calls), int(read)


def trees(folder: Path | None, work: Path) -> dict[str, Path]:
    """Each pinned wheel's unpacked tree, by its requirement."""
    if folder is not None:
        return {requirement: folder / requirement for requirement in TREES}
    sys.path.insert(0, str(HERE))
    from real import fetch

    return {r: fetch(work / r.split("==")[0], (r,), NEWER_PYTHON) for r in TREES}


def measure(found: dict[str, Path]) -> dict[str, int]:
    """Every tree under every selection: the calls, keyed `<tree> <selection>`, and the bytes
    read, keyed `<tree> <selection>` and READ."""
    figures = {}
    for requirement, tree in found.items():
        for label, options in SELECTIONS.items():
            figures[f"{requirement} {label}"], figures[f"{requirement} {label}{READ}"] = count(tree, options)
    return figures


def python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def budget() -> dict[str, int]:
    """The budget for this Python, empty where none was measured on it."""
    budgets: dict[str, dict[str, int]] = json.loads(BUDGET.read_text()) if BUDGET.exists() else {}
    return budgets.get(python(), {})


def off_budget(figures: dict[str, int], allowed: dict[str, int]) -> list[str]:
    """A line for each figure more than OVER its budget, less than UNDER it, or without one: a
    budget left far above what semfix costs would let the next slowdown through unseen."""
    return [
        f"{key}: {figure:,} {_unit(key)}, budget {allowed[key]:,} ({figure / allowed[key]:.2f}x)"
        if key in allowed
        else f"{key}: {figure:,} {_unit(key)}, no budget for Python {python()}"
        for key, figure in figures.items()
        if key not in allowed or not allowed[key] * UNDER <= figure <= allowed[key] * OVER
    ]


def _unit(key: str) -> str:
    return "bytes" if key.endswith(READ) else "calls"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--update", action="store_true", help="write these figures as the budget")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure(trees(args.trees, args.work or Path(scratch)))
    allowed = budget()
    print(f"{'tree and selection':<52} {'figure':>12} {'budget':>12} {'ratio':>6}")
    for key, figure in figures.items():
        limit = allowed.get(key)
        print(f"{key:<52} {figure:>12,} {limit or 0:>12,} {figure / limit if limit else 0:>5.2f}x")
    if args.update:
        budgets = json.loads(BUDGET.read_text()) if BUDGET.exists() else {}
        budgets[python()] = figures
        BUDGET.write_text(json.dumps(budgets, indent=2, sort_keys=True) + "\n")
        print(f"budget for Python {python()} written to {BUDGET.name}")
        return 0
    failed = off_budget(figures, allowed)
    for line in failed:
        print(f"off budget: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
