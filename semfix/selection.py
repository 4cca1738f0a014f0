"""Which rules run: rule selectors (codes, prefixes, `ALL`) expanded against the rule table,
the rules on by default, and the settings that the command line and `[tool.semfix]` make
together. This is the one place settings meet the rules: semfix.settings, the data, sits
below the rules and knows none of them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from semfix.rules import GATES
from semfix.settings import FileIgnore, Settings, SettingsError, given_floor, jax_floor, label, strings, tool_table

DEFAULT_CODES = frozenset(code for code, gate in GATES.items() if gate.default)
FLOOR_CODES = frozenset(code for code, gate in GATES.items() if gate.reads_floor)


def expand(selectors: Iterable[str]) -> frozenset[str]:
    """Codes matched by selectors: full codes or prefixes (a code, a prefix of codes, `ALL`)."""
    codes: set[str] = set()
    for raw in selectors:
        for selector in (part.strip().upper() for part in raw.split(",")):
            if not selector:
                continue
            matched = {code for code in GATES if selector == "ALL" or code.startswith(selector)}
            if not matched:
                raise SettingsError(f"unknown rule selector {selector!r} (see `semfix rules`)")
            codes |= matched
    return frozenset(codes)


def build_settings(
    *,
    select: Iterable[str] | None = None,
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    unsafe_fixes: bool = False,
    target_jax: str | None = None,
    target_from: str = "--target-jax",
    imported_by_run: Iterable[str] = (),
) -> Settings:
    """`select` replaces the default set (as in ruff); the others adjust it. With nothing
    given, the defaults: what `fix_source` runs without settings. A `target_jax` given here is
    the floor of every file (`target_from` says where it was given)."""
    enabled = expand(select) if select is not None else DEFAULT_CODES
    enabled = (enabled | expand(extend_select)) - expand(ignore)
    settings = Settings(enabled, unsafe_fixes, imported_by_run=frozenset(imported_by_run), floor_rules=FLOOR_CODES)
    if target_jax is None:
        return settings
    floor = jax_floor(target_jax)
    return replace(settings, target_jax=floor, target_declared=True, target_from=target_from, target_given=True)


def load_settings(
    pyproject: Path | None,
    *,
    select: Iterable[str] | None = None,
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    unsafe_fixes: bool | None = None,
    target_jax: str | None = None,
    floor_from_file: bool = False,
) -> Settings:
    """Settings from pyproject.toml (if any), overridden by what the command line says. The
    file's `target-jax` is every file's floor only where the file was named (`--config`,
    `floor_from_file`); else each file takes its nearest project's (`settings.for_file`)."""
    table = tool_table(pyproject)
    in_file = given_floor(pyproject, table)  # checked either way
    file_select, file_extend, file_ignore = (
        _codes(pyproject, table, key) for key in ("select", "extend-select", "ignore")
    )
    file_unsafe = table.get("unsafe-fixes", False)
    if not isinstance(file_unsafe, bool):
        raise SettingsError(f"{label(pyproject)} unsafe-fixes must be true or false")
    # As in ruff, a command-line `--select` starts over: it replaces the file's `select`,
    # `extend-select` and `ignore` alike, so a rule asked for by name runs.
    settings = build_settings(
        select=list(select) if select else file_select,
        extend_select=list(extend_select) if select else [*(file_extend or ()), *extend_select],
        ignore=list(ignore) if select else [*(file_ignore or ()), *ignore],
        unsafe_fixes=file_unsafe if unsafe_fixes is None else unsafe_fixes,
        target_jax=target_jax if target_jax is not None else in_file if floor_from_file else None,
        target_from="--target-jax" if target_jax is not None else f"`target-jax` in {pyproject}",
    )
    return replace(settings, file_ignores=_file_ignores(pyproject, table)) if pyproject else settings


def _file_ignores(pyproject: Path, table: Mapping[str, Any]) -> tuple[FileIgnore, ...]:
    """`per-file-ignores` and `extend-per-file-ignores` (one file, so both simply add up): globs,
    from the file's folder, to the rule selectors they turn off."""
    found = []
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        value = table.get(key, {})
        if not isinstance(value, dict):
            raise SettingsError(f"{label(pyproject)} {key} must be a table of globs to lists of rule codes")
        for glob in value:
            codes = _codes(pyproject, value, glob, where=f"{key}.{glob!r}")
            found.append(FileIgnore(glob, str(pyproject.parent), expand(codes or ())))
    return tuple(found)


def _codes(pyproject: Path | None, table: Mapping[str, Any], key: str, where: str = "") -> list[str] | None:
    """The rule selectors under `key` (`where`: its name in [tool.semfix]), checked here, where
    the file is known (the command line's are checked apart)."""
    value = strings(pyproject, table, key, "rule codes", where=where or key)
    try:
        expand(value or ())
    except SettingsError as error:
        raise SettingsError(f"{label(pyproject)} {where or key}: {error}") from None
    return value
