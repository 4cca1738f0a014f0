"""semfix against its peers and the parse floor, side by side in one run: wall time, memory, ratios.

    python benchmarks/run.py [--corpus generated,real] [--scales 1,4,16] [--jobs 2] [--repeat 3]

Two corpora, each built in a temporary folder:
  generated (benchmarks/corpus.py): large, ~4,000 files and ~2M lines, 7% kernels, all correct;
    dense, 80 kernel files with ~500 planted `[...]` reads.
  real (benchmarks/real.py): pinned public wheels fetched with `pip download --no-deps`
    (jax, tokamax, tpu-inference, sglang-jax, helion, sympy). large: every file; dense: the 80
    kernel files with the most semaphore/DMA sites, ~500 reads planted; pallas: every file
    that spells `pallas`, for every rule (`--select SEM`) against the default rules.
Each tree is also copied 4x and 16x (--scales) to show how time grows.
Workloads: `semfix check` on the large tree against `ast-grep scan` (one-pattern rule) and
`ruff check --select UP`; `semfix fix` on the dense tree against `ast-grep scan -U` and a
plain libcst codemod run through `python -m libcst.tool codemod -j N`. Every workload also
times the parse floor (benchmarks/parse_floor.py: read and `ast.parse` each file, same
process count), and the dense fix also the proof floor (read, `ast.parse` and `compile` each
file: what a fix that compiles what it writes pays at least). Peers must be on PATH or in
this Python's environment: `pip install ast-grep-cli ruff`. Timings are medians of --repeat
runs, the tools interleaved, so a noisy machine hurts them alike. Last, each real Pallas file
is timed in this process under every rule against its own `ast.parse`: no file should cost
more than a few times its parse.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import real
from corpus import kernel_module, plain_module
from real import Planted

HERE = Path(__file__).parent
_LAUNCHER = (
    "import json, resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "seconds = time.perf_counter() - start\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'seconds': seconds, 'peak_kb': peak, 'code': done.returncode}))\n"
)
PARSE_FLOOR = "parse floor"
PROOF_FLOOR = "proof floor"  # read, parse and compile: what a proven fix pays at least
FEW_TIMES_PARSE = 5.0  # "a few times its parse", for the per-file check


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    peak_kb: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Workload:
    """One tree, the tools run over it, and the tool the others are divided by."""

    name: str
    copies: int
    files: int
    lines: int
    tools: dict[str, list[str]]  # peers that are missing are left out
    baseline: str
    once: set[str] = field(default_factory=set)  # too slow to repeat: one run
    env: dict[str, dict[str, str]] = field(default_factory=dict)
    reset: Callable[[], None] | None = None  # puts planted bugs back before each run
    restored: Callable[[], str] | None = None  # after a run: "files back/all (bugs)"
    samples: dict[str, Sample] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)

    def run(self, work: Path, repeat: int) -> None:
        for attempt in range(repeat):
            for name, command in self.tools.items():
                if attempt and name in self.once:
                    continue
                if self.reset:
                    self.reset()
                seconds, peak, _ = measure(command, work, self.env.get(name))
                sample = self.samples.setdefault(name, Sample())
                sample.seconds.append(seconds)
                sample.peak_kb = max(sample.peak_kb, peak)
                if self.restored and name != PARSE_FLOOR:
                    self.fixed[name] = self.restored()

    def ratio(self, tool: str, over: str) -> float | None:
        if tool in self.samples and over in self.samples:
            return self.samples[tool].median / self.samples[over].median
        return None


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Wall seconds and peak RSS (largest process of the tree, KB) of one run, via a launcher."""
    out = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *command], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    return data["seconds"], data["peak_kb"], data["code"]


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def generated_large(root: Path, files: int, kernel_share: float, rng: random.Random) -> None:
    for index in range(files):
        folder = root / f"pkg{index // 100:03}"
        folder.mkdir(parents=True, exist_ok=True)
        if rng.random() < kernel_share:
            text = kernel_module(rng, 500, 0.0).clean
        else:
            text = plain_module(rng, 500)
        (folder / f"mod{index:05}.py").write_text(text)


def generated_dense(files: int, bugs: int, rng: random.Random) -> list[Planted]:
    rate = bugs / (files * 200)  # about 200 plantable arguments in an 875-line module
    modules = [kernel_module(rng, 875, rate) for _ in range(files)]
    return [Planted(f"kernel{i:03}.py", m.clean.encode(), m.planted.encode(), m.bugs) for i, m in enumerate(modules)]


def tree_size(root: Path) -> tuple[int, int]:
    """(files, lines) of the .py files under root."""
    files = list(root.rglob("*.py"))
    return len(files), sum(p.read_bytes().count(b"\n") for p in files)


def link_copies(base: Path, target: Path, copies: int) -> None:
    if target.exists():  # a --work folder from an earlier run
        shutil.rmtree(target)
    for copy in range(copies):
        for source in base.rglob("*.py"):
            destination = target / f"copy{copy:02}" / source.relative_to(base)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, destination)


def write_dense(target: Path, corpus: list[Planted], copies: int) -> None:
    if target.exists():
        shutil.rmtree(target)
    for copy in range(copies):
        for item in corpus:
            path = target / f"copy{copy:02}" / item.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(item.planted)


def restored(target: Path, corpus: list[Planted], copies: int) -> str:
    """Files now byte for byte their real text, of all, and the planted bugs in them."""
    back = [
        item
        for copy in range(copies)
        for item in corpus
        if (target / f"copy{copy:02}" / item.name).read_bytes() == item.clean
    ]
    bugs, planted = sum(i.bugs for i in back), copies * sum(i.bugs for i in corpus)
    return f"{len(back)}/{copies * len(corpus)} files ({bugs}/{planted} bugs)"


class Plan:
    """Builds the workloads of one corpus at one scale; the commands are the same for both corpora."""

    def __init__(self, work: Path, jobs: int, libcst_scales: set[int]) -> None:
        self.work, self.jobs, self.libcst_scales = work, str(jobs), libcst_scales
        self.semfix = [sys.executable, "-m", "semfix"]
        self.ast_grep, self.ruff = tool("ast-grep"), tool("ruff")
        self.rule = str(HERE / "semaphore_read.yml")

    def floor(self, folder: Path, *, proven: bool = False) -> list[str]:
        return [sys.executable, str(HERE / "parse_floor.py"), *["--compile"] * proven, "-j", self.jobs, str(folder)]

    def large(self, corpus: str, base: Path, scale: int) -> Workload:
        folder = self.work / f"{corpus}-large-{scale}x"
        link_copies(base, folder, scale)
        tools = {
            "semfix check": [*self.semfix, "check", "-q", "-j", self.jobs, str(folder)],
            PARSE_FLOOR: self.floor(folder),
        }
        if self.ast_grep:
            tools["ast-grep scan"] = [self.ast_grep, "scan", "--threads", self.jobs, "--rule", self.rule, str(folder)]
        if self.ruff:
            tools["ruff check --select UP"] = [
                self.ruff,
                "check",
                "--select",
                "UP",
                "--no-cache",
                "--quiet",
                str(folder),
            ]
        return Workload(f"{corpus} large check", scale, *tree_size(folder), tools, "ast-grep scan")

    def dense(self, corpus: str, planted: list[Planted], scale: int) -> Workload:
        folder = self.work / f"{corpus}-dense-{scale}x"
        write_dense(folder, planted, scale)
        tools = {
            "semfix fix": [*self.semfix, "fix", "-q", "--allow-dirty", "-j", self.jobs, str(folder)],
            PARSE_FLOOR: self.floor(folder),
            PROOF_FLOOR: self.floor(folder, proven=True),
        }
        if self.ast_grep:
            tools["ast-grep scan -U"] = [
                self.ast_grep,
                "scan",
                "--threads",
                self.jobs,
                "-U",
                "--rule",
                self.rule,
                str(folder),
            ]
        once, env = set(), {}
        if scale in self.libcst_scales:  # two orders slower: one run
            codemod = "plain_codemod.PlainSemaphoreRead"
            tools["libcst codemod"] = [
                sys.executable,
                "-m",
                "libcst.tool",
                "codemod",
                "-x",
                codemod,
                "--no-format",
                "-j",
                self.jobs,
                str(folder),
            ]
            once, env = (
                {"libcst codemod"},
                {
                    "libcst codemod": {
                        **os.environ,
                        "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                    }
                },
            )
        return Workload(
            f"{corpus} dense fix",
            scale,
            *tree_size(folder),
            tools,
            PARSE_FLOOR,
            once,
            env,
            reset=lambda: write_dense(folder, planted, scale),
            restored=lambda: restored(folder, planted, scale),
        )

    def pallas(self, base: Path, scale: int) -> Workload:
        folder = self.work / f"real-pallas-{scale}x"
        link_copies(base, folder, scale)
        check = [*self.semfix, "check", "-q", "-j", self.jobs]
        tools = {
            "semfix check": [*check, str(folder)],
            "semfix check --select SEM": [*check, "--select", "SEM", str(folder)],
            PARSE_FLOOR: self.floor(folder),
        }
        return Workload("real pallas check", scale, *tree_size(folder), tools, "semfix check")


def print_table(workloads: list[Workload]) -> None:
    print(
        f"{'workload':<20} {'copies':>6} {'files':>6} {'lines':>10}  {'tool':<26} "
        f"{'median s':>9} {'files/s':>8} {'peak MB':>7} {'ratio':>7}  {'vs':<14} fixed"
    )
    for w in workloads:
        for name, sample in w.samples.items():
            ratio = w.ratio(name, w.baseline)
            print(
                f"{w.name:<20} {w.copies:>6} {w.files:>6} {w.lines:>10,}  {name:<26} {sample.median:>9.3f} "
                f"{w.files / sample.median:>8.0f} {sample.peak_kb / 1024:>7.0f} "
                f"{f'{ratio:.2f}x' if ratio else '-':>7}  "
                f"{w.baseline:<14} {w.fixed.get(name, '')}"
            )


def print_targets(workloads: list[Workload], scale: int) -> None:
    """The issue's targets, read off the first scale of each workload."""
    print(f"\ntargets ({scale}x):")

    def target(w: Workload, tool: str, over: str, limit: float, what: str) -> None:
        ratio = w.ratio(tool, over)
        if ratio is not None:
            print(f"  {w.name}: {what} = {ratio:.2f} (target <= {limit}) {'met' if ratio <= limit else 'NOT met'}")

    for w in (w for w in workloads if w.copies == scale):
        if w.name.endswith("large check"):
            target(w, "semfix check", "ast-grep scan", 0.25, "semfix check / ast-grep scan")
            target(w, "semfix check", "ruff check --select UP", 1.0, "semfix check / ruff check --select UP")
            ratio = w.ratio("semfix check", PARSE_FLOOR)
            if ratio is not None:
                print(f"  {w.name}: semfix check / parse floor = {ratio:.2f} (no target: most files are never parsed)")
        elif w.name.endswith("dense fix"):
            target(w, "semfix fix", PROOF_FLOOR, 1.3, "semfix fix / proof floor (read, parse, compile)")
            ratio = w.ratio("semfix fix", PARSE_FLOOR)
            if ratio is not None:
                print(f"  {w.name}: semfix fix / parse floor = {ratio:.2f} (no target: a proven fix also compiles)")
            speedup = w.ratio("libcst codemod", "semfix fix")
            if speedup is not None:
                print(
                    f"  {w.name}: libcst codemod / semfix fix = {speedup:.1f}x faster (target >= 20x) "
                    f"{'met' if speedup >= 20 else 'NOT met'}"
                )
            print(f"  {w.name}: semfix fix restored {w.fixed.get('semfix fix')} (target: all)")
        elif w.name.endswith("pallas check"):
            target(w, "semfix check --select SEM", "semfix check", 1.3, "--select SEM / default rules")


def worst_files(base: Path, files: list[Path], show: int = 8) -> None:
    """Each file under every rule, in this process, against its own `ast.parse`: the worst ones."""
    # SEM101's import edits use libcst: imported once here, not inside the first file's time.
    import libcst  # noqa: F401

    from semfix.api import fix_source
    from semfix.selection import build_settings

    every = build_settings(select=["SEM"], target_jax="0.10.2")

    def best(action: Callable[[], object], runs: int) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            try:
                action()
            except Exception:  # noqa: BLE001, S110  an error costs its time too; semfix reports it
                pass
            times.append(time.perf_counter() - start)
        return min(times)

    costs = []
    for path in files:
        data = path.read_bytes()
        try:
            parse = best(lambda data=data: ast.parse(data), 3)
        except SyntaxError:
            parse = None
        costs.append((best(lambda data=data: fix_source(data, settings=every, apply_fixes=False), 1), parse, path))
    costs.sort(key=lambda c: c[0], reverse=True)
    print(f"\nper file, every rule (--select SEM), one process, the {show} slowest of {len(files)} real Pallas files:")
    print(f"  {'semfix s':>9} {'parse s':>8} {'x parse':>8} {'lines':>6}  file")
    for seconds, parse, path in costs[:show]:
        data = path.read_bytes()
        seconds, lines = (
            best(lambda data=data: fix_source(data, settings=every, apply_fixes=False), 3),
            data.count(b"\n"),
        )
        ratio = f"{seconds / parse:.1f}" if parse else "no parse"
        print(f"  {seconds:>9.3f} {parse or 0:>8.4f} {ratio:>8} {lines:>6}  {path.relative_to(base)}")
    over = [c for c in costs if c[1] and c[0] > 0.005 and c[0] / c[1] > FEW_TIMES_PARSE]
    print(
        f"  files over 5 ms costing more than {FEW_TIMES_PARSE:g}x their parse: {len(over)}; "
        f"total {sum(c[0] for c in costs):.2f} s against {sum(c[1] or 0 for c in costs):.2f} s of parsing"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="generated,real", help="generated, real, or both (comma-separated)")
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-files", type=int, default=4000, help="generated large tree")
    parser.add_argument("--dense-files", type=int, default=80)
    parser.add_argument("--bugs", type=int, default=500)
    parser.add_argument("--libcst-scales", default="1,4", help="scales at which to run the slow libcst codemod peer")
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the corpora, kept, so a later run reuses its downloaded wheels (default: a temporary one)",
    )
    args = parser.parse_args()
    corpora = set(args.corpus.split(","))
    scales = [int(s) for s in args.scales.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="semfix-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261203)
    # pip compiles an installed package's bytecode; an editable install under
    # PYTHONDONTWRITEBYTECODE would recompile semfix's modules on every run instead.
    import semfix as package

    compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    plan = Plan(work, args.jobs, {int(s) for s in args.libcst_scales.split(",")})
    print(
        f"semfix benchmark ({package.__file__}, Python {sys.version.split()[0]}): "
        f"{args.jobs} jobs, median of {args.repeat}, work folder {work}"
    )
    print(
        f"peers: ast-grep={plan.ast_grep or 'missing'} ruff={plan.ruff or 'missing'} "
        "libcst codemod=python -m libcst.tool\n"
    )

    bases: dict[str, tuple[Path, list[Planted]]] = {}
    if "generated" in corpora:
        base = work / "generated-src"
        generated_large(base, args.large_files, 0.07, rng)
        bases["generated"] = (base, generated_dense(args.dense_files, args.bugs, rng))
    if "real" in corpora:
        source = real.fetch(work)
        print(f"real corpus: {', '.join(real.WHEELS)}")
        bases["real"] = (source, real.dense_corpus(source, args.dense_files, args.bugs, rng))
        pallas_base = work / "real-pallas-src"
        pallas_files = real.pallas_tree(source, pallas_base)

    workloads: list[Workload] = []
    for scale in scales:
        for corpus, (base, planted) in bases.items():
            batch = [plan.large(corpus, base, scale), plan.dense(corpus, planted, scale)]
            if corpus == "real":
                batch.append(plan.pallas(pallas_base, scale))
            for workload in batch:
                workload.run(work, args.repeat)
            workloads += batch
    for corpus, (_, planted) in bases.items():
        print(f"{corpus} dense tree: {len(planted)} files, {sum(p.bugs for p in planted)} planted bugs per copy")
    print()
    print_table(workloads)
    print_targets(workloads, scales[0])
    if "real" in corpora:
        worst_files(pallas_base, pallas_files)
    if args.work is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
