"""The suite's own audit (issue 43): plant one realistic bug into semfix at a time, and see which
test kills it.

Each mutant is data: a file, an exact snippet of today's code (found there exactly once), what
replaces it, a one-line description, and the test files most likely to kill it. The repository
(its tracked and untracked, not ignored files; the JAX environments the tests reuse linked, not
copied) is copied once into a temporary folder; each mutant is written there, never into the
working tree, and `pytest -x -q -p no:cacheprovider` runs against it, its own test files first,
then (with `--full`) the rest of the suite. `PYTHONPATH` names the copy, so the semfix a test
runs in a subprocess (`python -m semfix`) is the mutant too. A test that kills a mutant is run
once more on the unmutated copy: one that fails there too (it needs what the copy lacks: the
pytest cache, the network) killed nothing, and is left out of the runs that follow.

Exit 1 when a mutant survives, or when a snippet no longer matches the code or a test file named
is gone (so the list cannot rot silently: update the mutant with the code it plants into).

    python benchmarks/mutation_check.py [--full] [--only NAME ...] [--list] [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Ignored folders at the root that the tests reuse rather than build (JAX's environments): linked.
REUSED = re.compile(r"\.venv-jax-[0-9.]+")
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider")


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    path: str  # from the repository's root
    original: str  # exact text of today's code, found there exactly once
    replacement: str
    tests: tuple[str, ...]  # test files or ids most likely to kill it, run first


MUTANTS = (
    Mutant(
        "sem002-rank-unchecked",
        "SEM002 never compares the allocation's rank with the indices read: a row read made a view",
        "semfix/rules/sem002.py",
        "    return rank is None or not (counted and view.counted) or rank[0] != used\n",
        "    return rank is None or not (counted and view.counted)\n",
        ("tests/test_runtime_views.py", "tests/test_fixtures.py"),
    ),
    Mutant(
        "sem002-unknown-rank-known",
        "SEM002 takes an unknown rank as known: an unproven rank makes a safe fix",
        "semfix/rules/sem002.py",
        "    return rank is None or not (counted and view.counted) or rank[0] != used\n",
        "    return rank is not None and (not (counted and view.counted) or rank[0] != used)\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "view-rank-unchecked",
        "a Ref proven by a view or a use (no allocation in sight) is never asked for its rank",
        "semfix/rules/sem002.py",
        "    elif one:\n        rank = ctx.rank_shown(view.base, view.scope)\n",
        "    elif False:\n        rank = ctx.rank_shown(view.base, view.scope)\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "view-indices-uncounted",
        "the indices of the views a read is taken through do not count toward the rank",
        "semfix/rules/sem002.py",
        "    outer = [i for level in view.levels for i in level] + list(beyond)\n",
        "    outer = list(beyond)\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "sem004-rank-unchecked",
        "SEM004 never reads the allocation's rank: a row of a 2-D semaphore array goes unreported",
        "semfix/rules/sem004.py",
        "    rank = None if sliced or not levels else ctx.rank(base, scope_of_base)\n",
        "    rank = None\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "launches-disagree",
        "two launches that allocate different ranks: the last one's rank is taken",
        "semfix/analysis/allocations.py",
        "                if id(parameter) in self.param_ranks:  # two allocations: one rank, or none\n",
        "                if False:  # two allocations: one rank, or none\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "unseen-scratch-proves",
        "a launch whose scratch semfix cannot read leaves the other launches' allocation proven",
        "semfix/analysis/allocations.py",
        "            if scratch is None:  # what this call allocates is not known: no kind is proven\n"
        "                self._unprove(body, scope)\n",
        "            if scratch is None:  # what this call allocates is not known: no kind is proven\n"
        "                pass\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "kinds-disagree",
        "two launches that allocate different semaphore kinds: the last one's kind is taken (SEM006)",
        "semfix/analysis/allocations.py",
        "                if id(parameter) in self.param_semaphores:  # two allocations: one kind, or none\n",
        "                if False:  # two allocations: one kind, or none\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "unpacked-name-not-a-tuple",
        "a name an assignment unpacks (`buf, sems = refs`) is taken for an array Ref, not a possible tuple",
        "semfix/analysis/resolution.py",
        "                kinds.add(Kind.UNKNOWN if self.key(node, scope) in self.proofs() else Kind.TUPLE)\n",
        "                kinds.add(Kind.UNKNOWN)\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "helper-value-parameter",
        "a helper that also uses its parameter as a value is read as passing it on: its caller's read 'fixed'",
        "semfix/analysis/resolution.py",
        "            if len(found) == len(used) and _one_need(set(found)):  # its every use on the path: passed on",
        "            if found and _one_need(set(found)):",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "at-on-a-tuple",
        "a tuple of Refs is indexed like an array Ref: `refs[i]` rewritten to `refs.at[i]`",
        "semfix/rules/sem002.py",
        "    if kind is Kind.TUPLE or keyed_by_text(element):",
        "    if keyed_by_text(element):",
        ("tests/test_containers.py", "tests/test_fixtures.py"),
    ),
    Mutant(
        "type-guards-ignored",
        "isinstance/hasattr tests of the Ref are ignored: one branch's evidence rewrites another",
        "semfix/rules/sem002.py",
        "    safe = evidence is not None and not unranked and not _type_tested(ctx, ctx.key(base, scope))\n",
        "    safe = evidence is not None and not unranked\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "rebound-evidence-kept",
        "a name bound twice keeps the proof one binding gave",
        "semfix/analysis/evidence.py",
        "            if len(bindings) > 1 or bindings and bindings[0].declared:\n",
        "            if bindings and bindings[0].declared:\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "sem005-written-buffer",
        "SEM005 fixes a carried buffer read though the buffer is written before the copy",
        "semfix/rules/sem005.py",
        "ctx, call, argument, scope, judge, code=CODE, words=WORDS, arguments=ctx.buffer_args, guard=written",
        "ctx, call, argument, scope, judge, code=CODE, words=WORDS, arguments=ctx.buffer_args, guard=None",
        ("tests/test_sem005.py", "tests/test_fixtures.py"),
    ),
    Mutant(
        "floor-ignored",
        "SEM101 renames whatever the project's JAX floor",
        "semfix/rules/sem101_renames.py",
        "    if moved.same_from is None or ctx.settings.target_jax < moved.same_from:\n",
        "    if moved.same_from is None:\n",
        ("tests/test_jax_floor.py", "tests/test_fixtures.py"),
    ),
    Mutant(
        "removed-import-kept",
        "an import of a name JAX removed, read nowhere, is kept (ImportError on JAX 0.11)",
        "semfix/analysis/import_pruning.py",
        "                wanted = n in spelled or importer\n",
        "                wanted = True\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "crlf-lost",
        "an import the migration adds ends with `\\n` in a CRLF file",
        "semfix/analysis/importer.py",
        "    new_import = request.symbol.text(alias, first_break.group())\n",
        '    new_import = request.symbol.text(alias, "\\n")\n',
        ("tests/test_fixtures.py", "tests/test_properties.py"),
    ),
    Mutant(
        "free-name-check-skipped",
        "the proof never asks whether the rewrite reads a name nothing binds any more",
        "semfix/engine/run.py",
        "    unbound = free_names(tree) if shifts_lines(old.text, edits) else None",
        "    unbound = None",
        ("tests/test_proofs.py",),
    ),
    Mutant(
        "fixed-point-unchecked",
        "the second pass's verdict is ignored: a fix that would change again is written",
        "semfix/engine/run.py",
        '            raise SafetyError("a second run would change the rewritten source again")\n',
        "            pass\n",
        ("tests/test_proofs.py",),
    ),
    Mutant(
        "explain-first-argument",
        "explain looks only at the first argument of the calls the error is about",
        "semfix/explain/blame.py",
        "for u in _unpacked(a)\n        ]\n",
        "for u in _unpacked(a)\n        ][:1]\n",
        ("tests/test_explain.py",),
    ),
    Mutant(
        "explain-unsafe-unpinned",
        "explain makes an unsafe fix though the error is about several arguments",
        "semfix/explain/blame.py",
        "pinned = len(arguments) == 1 and unread is None",
        "pinned = unread is None",
        ("tests/test_explain.py",),
    ),
    Mutant(
        "explain-one-caller-proves",
        "explain makes an unsafe fix of a parameter's Ref that one caller's log cannot prove for the others",
        "semfix/explain/blame.py",
        '            shared = None if finding.safety == "safe" else _shared_parameter(scopes, _base(finding), scope)\n',
        "            shared = None\n",
        ("tests/test_explain_proof.py", "tests/test_explain.py"),
    ),
    Mutant(
        "explain-rank-doubt-ignored",
        "explain makes an unsafe fix whose rank is in doubt: the view it writes may be a row",
        "semfix/explain/blame.py",
        '            if shared is None and finding.fix is not None and finding.fix.doubt == "rank":\n',
        "            if False:\n",
        ("tests/test_explain.py::test_an_unranked_view_is_not_fixed_where_the_error_names_the_semaphore_alone",),
    ),
    Mutant(
        "comment-cut",
        "brackets are cut with the comment inside them",
        "semfix/analysis/context.py",
        '        if gap is None or any(gap.start("after") <= c < end for c in self.comments(call)):\n',
        "        if gap is None:\n",
        ("tests/test_fixtures.py",),
    ),
    Mutant(
        "suppressions-ignored",
        "`# noqa` and `# semfix: ignore` comments silence nothing",
        "semfix/analysis/context.py",
        "        return code not in self.settings.enabled or self.suppressions.silence(code, lines)\n",
        "        return code not in self.settings.enabled\n",
        ("tests/test_fixtures.py", "tests/test_cli.py"),
    ),
    Mutant(
        "exclude-ignored",
        "`--exclude` and `extend-exclude` globs never exclude a file of a folder",
        "semfix/files.py",
        "        if any(_skipped_folder(part) for part in relative.parts[:-1]) or excludes(path):\n",
        "        if any(_skipped_folder(part) for part in relative.parts[:-1]):\n",
        ("tests/test_repository.py",),
    ),
    Mutant(
        "write-not-atomic",
        "every fix is written in place, never through a temporary file renamed over it",
        "semfix/files.py",
        "        if status.st_nlink > 1:\n",
        "        if True:\n",
        ("tests/test_files.py", "tests/test_writes.py"),
    ),
    Mutant(
        "mode-lost",
        "a rewritten file gets the temporary file's permission bits",
        "semfix/files.py",
        "        os.chmod(temporary, mode)\n",
        "",
        ("tests/test_files.py", "tests/test_writes.py", "tests/test_cli.py"),
    ),
    Mutant(
        "cache-key-without-settings",
        "the cache's key leaves the settings out: another selection reads the old findings",
        "semfix/cache.py",
        "        digest.update(repr((kind, apply_fixes, _canonical(settings))).encode())\n",
        "        digest.update(repr((kind, apply_fixes)).encode())\n",
        ("tests/test_cache.py",),
    ),
    Mutant(
        "encoding-not-round-tripped",
        "a file whose bytes do not decode and encode back the same is rewritten anyway",
        "semfix/engine/run.py",
        "    round_trips = isinstance(source, str) or not apply_fixes or text.encode(encoding) == source\n",
        "    round_trips = True\n",
        ("tests/test_unsure.py", "tests/test_api.py"),
    ),
)


@dataclass
class Outcome:
    mutant: Mutant
    killer: str | None  # the test id that failed, "TIMEOUT", or None: survived
    seconds: float


def rotten(mutants: tuple[Mutant, ...]) -> list[str]:
    """Why each mutant whose snippet is not found exactly once in today's code cannot be planted,
    or whose test files are gone."""
    why = []
    for m in mutants:
        count = (ROOT / m.path).read_text(encoding="utf-8").count(m.original)
        if count != 1:
            why.append(f"{m.name}: its snippet is found {count} times in {m.path}")
        why += [f"{m.name}: no test file {f}" for t in m.tests if not (ROOT / (f := t.partition("::")[0])).is_file()]
    return why


def copy_repository(into: Path) -> None:
    """The tracked and untracked (not ignored) files, as they are now; JAX's environments linked."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() or source.is_symlink():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name, follow_symlinks=False)
    for entry in ROOT.iterdir():
        if REUSED.fullmatch(entry.name) and entry.exists():
            (into / entry.name).symlink_to(entry.resolve())


def pytest(copy: Path, targets: list[str], timeout: float) -> tuple[str | None, float]:
    """Run pytest in the copy; the first failing test's id (or "TIMEOUT"), None if all passed."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, *PYTEST, *targets],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its kernels' workers too are ended on a timeout
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "TIMEOUT", time.monotonic() - started
    elapsed = time.monotonic() - started
    if process.returncode == 0:
        return None, elapsed
    summary = output.rpartition("short test summary info")[2]  # not a captured line that starts so
    failed = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", summary, re.MULTILINE)
    if failed is None:  # no test failed, yet pytest did: no tests collected, a usage error
        tail = "\n".join(output.splitlines()[-15:])
        raise SystemExit(f"pytest exited {process.returncode} without a failing test:\n{tail}")
    return failed.group(1), elapsed


def rest_of_suite(targets: tuple[str, ...]) -> list[str]:
    """The whole suite but the files already run."""
    return ["tests", *(f"--ignore={t}" for t in targets if "::" not in t)]


class Copy:
    """The repository's copy the mutants are planted in, one at a time, and what its unmutated
    tests answer: a test failing there too (an environment it lacks) kills nothing, and is left
    out of the runs that follow, so that it hides no test after it."""

    def __init__(self, root: Path, timeout: float) -> None:
        self.root, self.timeout = root, timeout
        self.broken: list[str] = []  # the tests that fail unmutated: left out
        self._clean: dict[str, bool] = {}  # by test id: passes unmutated

    def killer(self, mutant: Mutant, targets: list[str]) -> tuple[str | None, float]:
        """The test that kills the mutant among `targets` (or "TIMEOUT"), None if none does."""
        target = self.root / mutant.path
        original = target.read_text(encoding="utf-8")
        spent = 0.0
        while True:
            target.write_text(original.replace(mutant.original, mutant.replacement, 1), encoding="utf-8")
            try:
                left_out = [f"--deselect={t}" if "::" in t else f"--ignore={t}" for t in self.broken]
                killer, seconds = pytest(self.root, [*targets, *left_out], self.timeout)
            finally:
                target.write_text(original, encoding="utf-8")
            spent += seconds
            if killer in (None, "TIMEOUT") or self.passes(killer):
                return killer, spent
            if killer in self.broken:
                raise SystemExit(f"{killer} fails unmutated, and cannot be left out")
            print(f"  {killer} fails unmutated too: left out", flush=True)
            self.broken.append(killer)

    def passes(self, test: str) -> bool:
        if test not in self._clean:
            self._clean[test] = pytest(self.root, [test], self.timeout)[0] is None
        return self._clean[test]


def run(mutants: tuple[Mutant, ...], full: bool, timeout: float) -> list[Outcome]:
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="semfix-mutants-") as folder:
        copy = Copy(Path(folder), timeout)
        copy_repository(copy.root)
        for mutant in mutants:
            killer, seconds = copy.killer(mutant, list(mutant.tests))
            if killer is None and full:
                killer, more = copy.killer(mutant, rest_of_suite(mutant.tests))
                seconds += more
            outcomes.append(Outcome(mutant, killer, seconds))
            print(f"{mutant.name}: {killer or 'SURVIVED'} ({seconds:.0f} s)", flush=True)
        if copy.broken:
            print(f"left out, failing unmutated: {', '.join(copy.broken)}")
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    rows = [("mutant", "killed by", "seconds")]
    rows += [(o.mutant.name, o.killer or "SURVIVED", f"{o.seconds:.0f}") for o in outcomes]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:>7}" for a, b, c in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="a mutant its own tests miss meets the rest of the suite")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these mutants alone")
    parser.add_argument("--list", action="store_true", help="list the mutants and check their snippets; run nothing")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run (a hang is a kill)")
    args = parser.parse_args()
    names = {m.name for m in MUTANTS}
    if len(names) != len(MUTANTS) or not set(args.only or ()) <= names:
        parser.error(f"unknown or repeated mutant names; known: {', '.join(sorted(names))}")
    chosen = tuple(m for m in MUTANTS if not args.only or m.name in args.only)
    problems = rotten(chosen)
    if args.list or problems:
        for m in chosen:
            print(f"{m.name:<28} {m.path}: {m.description}")
        print("\n".join(problems), file=sys.stderr)
        return 1 if problems else 0
    outcomes = run(chosen, args.full, args.timeout)
    print(table(outcomes))
    survived = [o.mutant.name for o in outcomes if o.killer is None]
    print(
        f"{len(outcomes) - len(survived)} of {len(outcomes)} killed"
        + (f"; survived: {', '.join(survived)}" * bool(survived))
    )
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
