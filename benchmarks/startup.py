"""Start-up, side by side in one run: a one-file check against `python -c "import click"` and
ruff, the server's time to answer `initialize`, and (--real) whole Pallas-dense trees against ruff.

    python benchmarks/startup.py [--venv DIR] [--repeat 40] [--real] [--work DIR]

What a start-up costs depends on how semfix is installed, so every figure is taken from a
regular install (`pip install '.[server]'`, not editable) in the virtual environment --venv,
made there on first use with ruff beside it and reused after. The machine may be shared and
noisy: the commands are run interleaved, round after round, and compared by their medians'
ratio, so that a busy moment slows them alike.

  one file: `semfix check FILE` on a small Pallas kernel and on a file with no Pallas code
    (which needs no rule loaded), `python -c "import click"` (the
    floor of any click program in that environment) and `ruff check --select UP FILE`.
    Target (issues 32 and 47): the check at most 1.5x the click import. Wall time on a loaded
    machine swings; CPU instructions do not (`valgrind --tool=cachegrind` of both commands).
  server: `semfix server` spawned, `initialize` written to its stdin, the time until its
    answer is read, beside the floor of any pygls server here (`import lsprotocol.types,
    pygls.lsp.server` in a bare interpreter). Target: under 300 ms.
  real (--real): `semfix check` (and with every rule, `--select SEM`, as a migration runs)
    beside `ruff check --no-cache --select UP` on tpu-inference 0.32.0 and tokamax 0.0.17, each
    wheel's Python files (tests too) fetched with `pip download --no-deps` and unpacked, or
    taken from --trees (a folder holding one unpacked tree per folder: no network needed).
    Each is run on 1, 2, 4 and all cores (--cores; `taskset -c 0-N`), and beside --baseline,
    another checkout of semfix installed in a venv of its own (today's, to compare with).
    Targets (issues 38 and 47): with all cores, at most 3x ruff on both; every rule at most 1.3x
    the default rules; a warm run (the cache filled by the run before) at most ruff's time.
    Every semfix figure but `warm` is cold (SEMFIX_NO_CACHE=1). --wheels installs from a folder
    of wheels alone, on a machine without the package index.

    python benchmarks/startup.py --real --trees DIR --baseline /path/to/main --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
REAL_TREES = ("tpu-inference==0.32.0", "tokamax==0.0.17")
NEWER_PYTHON = ("--python-version", "3.12", "--only-binary=:all:")  # tokamax 0.0.17 requires 3.12

#: A small kernel with two semaphore reads passed where the Ref belongs: the check finds both.
KERNEL = """from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ring_step(x_hbm, o_hbm, scratch, copy_sem, ready_sems):
    step = pl.program_id(0)
    copy = pltpu.make_async_copy(x_hbm.at[step], scratch, copy_sem[...])
    copy.start()
    pltpu.semaphore_signal(ready_sems.at[0][...], 1)
    copy.wait()
    o_hbm[step] = scratch[...] * 2
"""
#: A file with no Pallas code, as most of a pre-commit batch: the byte scan clears it.
PLAIN = """import os


def here() -> str:
    return os.getcwd()
"""


def install(venv: Path, checkout: Path = HERE.parent, wheels: Path | None = None) -> Path:
    """The venv's bin folder, holding a regular install of `checkout` and ruff (from the
    folder `wheels` alone where given: a machine without the package index)."""
    bin_folder = venv / "bin"
    if not (bin_folder / "semfix").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(bin_folder / "python"), "-m", "pip", "install", "--quiet"]
        offline = ["--no-index", "--find-links", str(wheels)] if wheels else []
        subprocess.run([*pip, *offline, f"{checkout}[server]", "ruff"], check=True)
    return bin_folder


def cores_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def real_trees(args: argparse.Namespace, work: Path) -> list[tuple[str, Path]]:
    """(name, folder) of each real tree: --trees' folders, else the wheels fetched into `work`."""
    if args.trees:
        return [(tree.name, tree) for tree in sorted(args.trees.iterdir()) if tree.is_dir()]
    sys.path.insert(0, str(HERE))
    from real import fetch

    return [(r, fetch(work / r.split("==")[0], (r,), NEWER_PYTHON)) for r in REAL_TREES]


def on_cores(cores: str) -> list[int]:
    """The core counts to run the real trees on, those this machine has, `all` its number."""
    have = cores_available()
    counts = [have if c == "all" else int(c) for c in cores.split(",")]
    return sorted({c for c in counts if c <= have})


def real_table(args: argparse.Namespace, work: Path, bins: dict[str, Path]) -> None:
    """Every tree on every core count: semfix (each install), semfix --select SEM and ruff,
    interleaved; medians; ratios to ruff and to the baseline, side by side."""
    ruff = str(bins["semfix"] / "ruff")
    taskset = shutil.which("taskset")
    print(f"\nreal trees: medians of {args.real_repeat} interleaved rounds; taskset {taskset or 'missing'}")
    print(
        f"  {'tree':<24} {'cores':>5} {'files':>6} {'semfix':>8} {'SEM':>8} {'baseline':>9} {'ruff UP':>8}"
        f" {'/ruff':>6} {'SEM/def':>7} {'/base':>6} {'warm':>7} {'warm/ruff':>9}"
    )
    for name, tree in real_trees(args, work):
        files = sum(1 for _ in tree.rglob("*.py"))
        for count in on_cores(args.cores):
            pin = [taskset, "-c", f"0-{count - 1}"] if taskset else []
            runs = {
                label: partial(wall, [*pin, str(folder / "semfix"), "check", "-q", "."], tree, COLD)
                for label, folder in bins.items()
            }
            runs["SEM"] = partial(
                wall, [*pin, str(bins["semfix"] / "semfix"), "check", "-q", "--select", "SEM", "."], tree, COLD
            )
            runs["ruff"] = partial(wall, [*pin, ruff, "check", "--select", "UP", "-q", "--no-cache", "."], tree)
            warm = [*pin, str(bins["semfix"] / "semfix"), "check", "-q", "."]
            wall(warm, tree)  # the cache filled once: every round after reads it
            runs["warm"] = partial(wall, warm, tree)
            m = interleaved(runs, args.real_repeat)
            base = f"{m['baseline']:>8.2f}s" if "baseline" in m else f"{'-':>9}"
            versus = f"{m['semfix'] / m['baseline']:>5.2f}x" if "baseline" in m else f"{'-':>6}"
            print(
                f"  {name:<24} {count:>5} {files:>6} {m['semfix']:>7.2f}s {m['SEM']:>7.2f}s {base} "
                f"{m['ruff']:>7.2f}s {m['semfix'] / m['ruff']:>5.2f}x {m['SEM'] / m['semfix']:>6.2f}x {versus}"
                f" {m['warm']:>6.2f}s {m['warm'] / m['ruff']:>8.2f}x"
            )
        ratio = m["semfix"] / m["ruff"]
        print(f"  target ({count} cores): semfix <= 3x ruff UP: {ratio:.2f}x, {'met' if ratio <= 3 else 'NOT met'}")


#: A cold run: every file analysed (a checkout from before the cache ignores it).
COLD = {"SEMFIX_NO_CACHE": "1"}


def wall(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Seconds from spawn to exit, output discarded; `env` adds to the environment."""
    started = time.perf_counter()
    environment = {**os.environ, **env} if env else None
    subprocess.run(command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def server_ready(semfix: str, root: Path) -> float:
    """Seconds from spawning `semfix server` to reading its answer to `initialize`."""
    initialize = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}
    started = time.perf_counter()
    server = subprocess.Popen([semfix, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
    server.stdin.flush()
    while True:  # header lines, a blank line, the body; notifications may come first
        length = 0
        while (line := server.stdout.readline().strip()) != b"":
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            raise RuntimeError("semfix server closed its output before answering initialize")
        if json.loads(server.stdout.read(length)).get("id") == 1:
            break
    seconds = time.perf_counter() - started
    for message in ({"id": 2, "method": "shutdown"}, {"method": "exit"}):
        server.stdin.write(_frame({"jsonrpc": "2.0", **message}))
    server.stdin.close()
    server.wait(timeout=30)
    return seconds


def interleaved(timings: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """Median seconds of each timing, run in turn, `repeat` rounds."""
    times: dict[str, list[float]] = {name: [] for name in timings}
    for _ in range(repeat):
        for name, timing in timings.items():
            times[name].append(timing())
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def report(title: str, medians: dict[str, float], baseline: str, *targets: tuple[str, float]) -> None:
    print(f"\n{title}")
    for name, seconds in medians.items():
        ratio = seconds / medians[baseline]
        print(f"  {name:<44} {seconds * 1000:>8.1f} ms  {ratio:>5.2f}x {baseline}")
    for name, limit in targets:
        ratio = medians[name] / medians[baseline]
        print(f"  target: {name} <= {limit}x {baseline}: {ratio:.2f}x, {'met' if ratio <= limit else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "semfix-startup-venv")
    parser.add_argument("--repeat", type=int, default=40, help="rounds for the one-file and server figures")
    parser.add_argument("--real", action="store_true", help="also the real trees (downloads two wheels)")
    parser.add_argument("--real-repeat", type=int, default=7)
    parser.add_argument("--work", type=Path, help="keep the downloaded trees here (default: a temporary folder)")
    parser.add_argument("--trees", type=Path, help="unpacked trees, one folder each, instead of downloading them")
    parser.add_argument("--cores", default="1,2,4,all", help="core counts for the real trees (taskset -c)")
    parser.add_argument("--baseline", type=Path, help="another semfix checkout, timed beside this one on the trees")
    parser.add_argument("--real-only", action="store_true", help="skip the one-file and server figures")
    parser.add_argument("--wheels", type=Path, help="install from these wheels alone (no package index)")
    args = parser.parse_args()
    bin_folder = install(args.venv.resolve(), wheels=args.wheels)
    bins = {"semfix": bin_folder}
    if args.baseline:
        baseline_venv = args.venv.resolve().with_name(args.venv.name + "-baseline")
        bins["baseline"] = install(baseline_venv, args.baseline, args.wheels)
    python, semfix, ruff = (str(bin_folder / name) for name in ("python", "semfix", "ruff"))
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        if not args.real_only:
            folder = work / "one"
            folder.mkdir(exist_ok=True)
            (folder / "kernel.py").write_text(KERNEL)
            (folder / "plain.py").write_text(PLAIN)
            one = {
                'python -c "import click"': partial(wall, [python, "-c", "import click"], folder),
                "semfix check kernel.py": partial(wall, [semfix, "check", "kernel.py"], folder, COLD),
                "semfix check plain.py": partial(wall, [semfix, "check", "plain.py"], folder, COLD),
                "ruff check --select UP kernel.py": partial(
                    wall, [ruff, "check", "--select", "UP", "kernel.py"], folder
                ),
                "semfix server: answers initialize": partial(server_ready, semfix, folder),
                # the floor of any pygls server: its protocol types and server, imported and nothing run
                "python -c 'import pygls.lsp.server'": partial(
                    wall, [python, "-c", "import lsprotocol.types, pygls.lsp.server"], folder
                ),
            }
            if "baseline" in bins:  # a one-file check no slower than the baseline's
                for name in ("kernel.py", "plain.py"):
                    baseline = [str(bins["baseline"] / "semfix"), "check", name]
                    one[f"semfix check {name} (baseline)"] = partial(wall, baseline, folder, COLD)
            medians = interleaved(one, args.repeat)
            print(
                f"{sys.platform}, {os.cpu_count()} cores; medians of {args.repeat} interleaved rounds; venv {args.venv}"
            )
            targets = (("semfix check kernel.py", 1.5), ("semfix check plain.py", 1.5))
            report("one file", medians, 'python -c "import click"', *targets)
            ready = medians["semfix server: answers initialize"] * 1000
            floor = medians["python -c 'import pygls.lsp.server'"] * 1000
            print(f"  target: server ready < 300 ms: {ready:.0f} ms, {'met' if ready < 300 else 'NOT met'}")
            print(f"  (importing pygls's server and protocol types alone: {floor:.0f} ms, {ready / floor:.2f}x of it)")
        if args.real or args.real_only:
            real_table(args, work, bins)


if __name__ == "__main__":
    main()
