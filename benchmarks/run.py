"""semfix against its peers, side by side in one run: wall time, peak memory, ratios.

    python benchmarks/run.py [--scales 1,4,16] [--jobs 2] [--repeat 3]

Builds two generated corpora in a temporary folder:
  large: ~4,000 files, ~2 million lines, 7% of them Pallas kernels, all correct code;
  dense: 80 kernel files, ~70,000 lines, ~500 planted `[...]` reads.
Each is also copied 4x and 16x (the large one by hard links) to show how time grows.
Workloads: `semfix check` on the large tree against `ast-grep scan` (one-pattern rule) and
`ruff check --select UP`; `semfix fix` on the dense tree against `ast-grep scan -U` and a
plain libcst codemod run through `python -m libcst.tool codemod -j N`. Peers must be on PATH
or in this Python's environment: `pip install ast-grep-cli ruff`. Timings are medians of
--repeat runs, the tools interleaved, so a noisy machine hurts them alike.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import Module, kernel_module, plain_module  # noqa: E402

HERE = Path(__file__).parent
_LAUNCHER = (
    "import json, resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "seconds = time.perf_counter() - start\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'seconds': seconds, 'peak_kb': peak, 'code': done.returncode}))\n"
)


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    peak_kb: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


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


def build_large(root: Path, files: int, kernel_share: float, rng: random.Random) -> int:
    lines = 0
    for index in range(files):
        folder = root / f"pkg{index // 100:03}"
        folder.mkdir(parents=True, exist_ok=True)
        if rng.random() < kernel_share:
            text = kernel_module(rng, 500, 0.0).clean
        else:
            text = plain_module(rng, 500)
        (folder / f"mod{index:05}.py").write_text(text)
        lines += text.count("\n")
    return lines


def build_dense(files: int, bugs: int, rng: random.Random) -> list[Module]:
    rate = bugs / (files * 200)  # about 200 plantable arguments in an 875-line module
    return [kernel_module(rng, 875, rate) for _ in range(files)]


def link_copies(base: Path, target: Path, copies: int) -> None:
    for copy in range(copies):
        for source in base.rglob("*.py"):
            destination = target / f"copy{copy:02}" / source.relative_to(base)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, destination)


def write_dense(target: Path, modules: list[Module], copies: int) -> None:
    if target.exists():
        shutil.rmtree(target)
    for copy in range(copies):
        folder = target / f"copy{copy:02}"
        folder.mkdir(parents=True)
        for index, module in enumerate(modules):
            (folder / f"kernel{index:03}.py").write_text(module.planted)


def fixed_count(target: Path, modules: list[Module], copies: int) -> tuple[int, int]:
    """(files now equal to the clean version, files in all)."""
    good = sum(
        (target / f"copy{copy:02}" / f"kernel{index:03}.py").read_text() == module.clean
        for copy in range(copies)
        for index, module in enumerate(modules)
    )
    return good, copies * len(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-files", type=int, default=4000)
    parser.add_argument("--dense-files", type=int, default=80)
    parser.add_argument("--bugs", type=int, default=500)
    parser.add_argument("--libcst-scales", default="1,4", help="scales at which to run the slow libcst codemod peer")
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpora (default: a temporary one)")
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="semfix-bench-"))
    rng = random.Random(20261203)
    semfix = [sys.executable, "-m", "semfix"]
    # pip compiles an installed package's bytecode; an editable install under
    # PYTHONDONTWRITEBYTECODE would recompile semfix's modules on every run instead.
    import semfix as package

    compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    ast_grep, ruff = tool("ast-grep"), tool("ruff")
    libcst_env = {**os.environ, "PYTHONPATH": str(HERE)}
    jobs = str(args.jobs)
    print(f"semfix benchmark: {args.jobs} jobs, median of {args.repeat}, work folder {work}")
    print(f"peers: ast-grep={ast_grep or 'missing'} ruff={ruff or 'missing'} libcst codemod=python -m libcst.tool\n")

    base = work / "large-base"
    large_lines = build_large(base, args.large_files, 0.07, rng)
    modules = build_dense(args.dense_files, args.bugs, rng)
    dense_lines = sum(m.planted.count("\n") for m in modules)
    planted = sum(m.bugs for m in modules)
    rows = []
    for scale in scales:
        large = work / f"large-{scale}x"
        link_copies(base, large, scale)
        samples = {name: Sample() for name in ("semfix check", "ast-grep scan", "ruff check --select UP")}
        for _ in range(args.repeat):
            for name, command in (
                ("semfix check", [*semfix, "check", "-q", "-j", jobs, str(large)]),
                ("ast-grep scan", [ast_grep, "scan", "--threads", jobs, "--rule", str(HERE / "semaphore_read.yml"), str(large)] if ast_grep else None),
                ("ruff check --select UP", [ruff, "check", "--select", "UP", "--no-cache", "--quiet", str(large)] if ruff else None),
            ):
                if command is None:
                    continue
                seconds, peak, _ = measure(command, work)
                samples[name].seconds.append(seconds)
                samples[name].peak_kb = max(samples[name].peak_kb, peak)
        rows.append(("large check", scale, args.large_files * scale, large_lines * scale, samples, "ast-grep scan", None))

        dense = work / f"dense-{scale}x"
        samples = {name: Sample() for name in ("semfix fix", "ast-grep scan -U", "libcst codemod")}
        correct: dict[str, tuple[int, int]] = {}
        for attempt in range(args.repeat):
            runs = [
                ("semfix fix", [*semfix, "fix", "-q", "--allow-dirty", "-j", jobs, str(dense)], None),
                ("ast-grep scan -U", [ast_grep, "scan", "--threads", jobs, "-U", "--rule", str(HERE / "semaphore_read.yml"), str(dense)] if ast_grep else None, None),
            ]
            if attempt == 0 and str(scale) in args.libcst_scales.split(","):  # two orders slower: one run
                runs.append(
                    ("libcst codemod", [sys.executable, "-m", "libcst.tool", "codemod", "-x", "plain_codemod.PlainSemaphoreRead", "--no-format", "-j", jobs, str(dense)], libcst_env)
                )
            for name, command, env in runs:
                if command is None:
                    continue
                write_dense(dense, modules, scale)
                seconds, peak, _ = measure(command, work, env)
                samples[name].seconds.append(seconds)
                samples[name].peak_kb = max(samples[name].peak_kb, peak)
                correct[name] = fixed_count(dense, modules, scale)
        rows.append(("dense fix", scale, args.dense_files * scale, dense_lines * scale, samples, "ast-grep scan -U", correct))
        if scale != scales[0]:
            shutil.rmtree(large)

    print(f"large tree: {args.large_files} files, {large_lines:,} lines per copy; dense tree: {args.dense_files} files, {dense_lines:,} lines, {planted} planted bugs per copy\n")
    print(f"{'workload':<12} {'copies':>6} {'files':>7} {'lines':>11}  {'tool':<24} {'median s':>9} {'files/s':>9} {'peak MB':>8} {'vs ast-grep':>11}  fixed files")
    for workload, scale, files, lines, samples, baseline, correct in rows:
        reference = samples[baseline].median if samples[baseline].seconds else None
        for name, sample in samples.items():
            if not sample.seconds:
                continue
            ratio = f"{sample.median / reference:.2f}x" if reference else "-"
            fixed = f"{correct[name][0]}/{correct[name][1]}" if correct and name in correct else ""
            print(
                f"{workload:<12} {scale:>6} {files:>7} {lines:>11,}  {name:<24} {sample.median:>9.3f} "
                f"{files / sample.median:>9.0f} {sample.peak_kb / 1024:>8.0f} {ratio:>11}  {fixed}"
            )
    print("\ntargets (1x):")
    for workload, scale, _, _, samples, baseline, _ in rows:
        if scale != scales[0]:
            continue
        mine = samples["semfix check" if workload == "large check" else "semfix fix"].median
        if samples[baseline].seconds:
            limit = 0.25 if workload == "large check" else 2.0
            ratio = mine / samples[baseline].median
            print(f"  {workload}: semfix / {baseline} = {ratio:.2f} (target <= {limit}) {'met' if ratio <= limit else 'NOT met'}")
        if workload == "large check" and samples["ruff check --select UP"].seconds:
            ratio = mine / samples["ruff check --select UP"].median
            print(f"  {workload}: semfix / ruff check --select UP = {ratio:.2f} (target <= 1) {'met' if ratio <= 1 else 'NOT met'}")
        if workload == "dense fix" and samples["libcst codemod"].seconds:
            speedup = samples["libcst codemod"].median / mine
            print(f"  {workload}: libcst codemod / semfix = {speedup:.1f}x faster (target >= 10x) {'met' if speedup >= 10 else 'NOT met'}")
    if args.work is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
