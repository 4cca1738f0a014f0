"""The real-code corpus: pinned public wheels, fetched at run time, nothing committed.

Generated kernels are what semfix was tuned on; these trees hold it to code people wrote.
`pip download --no-deps` fetches each wheel into the work folder and its `.py` files are
unpacked there. From them:
  large:  every file of every wheel (sympy is the big non-Pallas part);
  pallas: every file that spells `pallas`;
  dense:  the kernel files with the most semaphore/DMA call sites, with `[...]` reads planted
          on Ref arguments (`sem` -> `sem[...]`, `sems.at[i]` -> `sems.at[i][...]`), which
          SEM001's fix must take back out, byte for byte.
The planter finds call sites on its own (imports resolved by hand, positions from the
catalog): it does not ask semfix where its fix would work, so the benchmark can catch a miss.
"""

from __future__ import annotations

import ast
import random
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from semfix.catalog import lookup

# Versions that exist on PyPI as of 2026-12; bump together, the figures change with them.
WHEELS = (
    "jax==0.10.2",
    "tokamax==0.0.12",
    "tpu-inference==0.32.0",
    "sglang-jax==0.0.1.post1",
    "helion==1.5.1",
    "sympy==1.14.0",
)


@dataclass
class Planted:
    """One dense-tree file: its real text, the text with bugs planted, and how many."""

    name: str
    clean: bytes
    planted: bytes
    bugs: int


def fetch(work: Path, requirements: tuple[str, ...] = WHEELS, pip_options: tuple[str, ...] = ()) -> Path:
    """Download the pinned wheels and unpack their Python files under work/src/<wheel>/.
    `pip_options` such as `--python-version 3.12 --only-binary=:all:` fetch a wheel that
    requires a newer Python than this one: only its files are read."""
    wheels, source = work / "wheels", work / "src"
    for requirement in requirements:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                *pip_options,
                "-d",
                str(wheels),
                requirement,
            ],
            check=True,
        )
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py"):
                    archive.extract(member, source / wheel.name.split("-")[0])
    return source


def pallas_tree(source: Path, target: Path) -> list[Path]:
    """Hard-link every file that spells `pallas` into target; return the links."""
    if target.exists():  # a --work folder from an earlier run
        shutil.rmtree(target)
    files = []
    for path in sorted(source.rglob("*.py")):
        if b"pallas" in path.read_bytes():
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.hardlink_to(path)
            files.append(link)
    return files


def dense_corpus(source: Path, files: int, bugs: int, rng: random.Random) -> list[Planted]:
    """The `files` kernel files with the most plantable sites, about `bugs` bugs among them."""
    sites = {}
    for path in sorted(source.rglob("*.py")):
        data = path.read_bytes()
        if b"pallas" in data and (found := plantable(data)):
            sites[path] = (data, found)
    chosen = sorted(sites, key=lambda p: (-len(sites[p][1]), str(p)))[:files]
    rate = min(1.0, bugs / max(1, sum(len(sites[p][1]) for p in chosen)))
    corpus = []
    for path in sorted(chosen):
        data, offsets = sites[path]
        picked = [offset for offset in offsets if rng.random() < rate] or [rng.choice(offsets)]
        corpus.append(Planted(str(path.relative_to(source)), data, _insert(data, picked, b"[...]"), len(picked)))
    return corpus


def plantable(data: bytes) -> list[int]:
    """Byte offsets just after each Ref passed to a catalog call's semaphore parameter.

    A Ref here is a name, an attribute or a `.at[...]` view: appending `[...]` to one makes
    exactly the value read SEM001 rewrites back. Calls inside f-strings are left alone.
    """
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    aliases = _aliases(tree)
    in_fstrings = {id(node) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for node in ast.walk(f)}
    starts = _line_starts(data)
    offsets = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or id(call) in in_fstrings:
            continue
        operation = lookup(_qualified(call.func, aliases) or "")
        if operation is None or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        for param in operation.sem_params:
            argument = next((k.value for k in call.keywords if k.arg == param.name), None)
            if argument is None and param.position is not None and param.position < len(call.args):
                argument = call.args[param.position]
            if argument is not None and _is_ref(argument):
                offsets.append(starts[argument.end_lineno - 1] + argument.end_col_offset)  # type: ignore[operator]
    return sorted(set(offsets))


def _is_ref(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):  # only a view: `x.at[i]`
        return isinstance(node.value, ast.Attribute) and node.value.attr == "at"
    return isinstance(node, (ast.Name, ast.Attribute))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified name, from every import in the file (scopes ignored)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _qualified(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _insert(data: bytes, offsets: list[int], text: bytes) -> bytes:
    pieces, last = [], 0
    for offset in sorted(offsets):
        pieces += [data[last:offset], text]
        last = offset
    return b"".join(pieces) + data[last:]
