"""Which rules run and how far their fixes may go, from CLI options or [tool.semfix]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from semfix.rules import RULES


class SettingsError(ValueError):
    """A rule selector or setting that means nothing; the message says which."""


def expand(selectors: Iterable[str]) -> frozenset[str]:
    """Codes matched by selectors: full codes or prefixes (`SEM0`, `SEM1`, `SEM`, `ALL`)."""
    codes: set[str] = set()
    for raw in selectors:
        for selector in (part.strip().upper() for part in raw.split(",")):
            if not selector:
                continue
            matched = {code for code in RULES if selector == "ALL" or code.startswith(selector)}
            if not matched:
                raise SettingsError(f"unknown rule selector {selector!r} (see `semfix rules`)")
            codes |= matched
    return frozenset(codes)


DEFAULT_CODES = frozenset(code for code, rule in RULES.items() if rule.default)


@dataclass(frozen=True)
class Settings:
    enabled: frozenset[str] = DEFAULT_CODES
    unsafe_fixes: bool = False

    @classmethod
    def build(
        cls,
        *,
        select: Iterable[str] | None = None,
        extend_select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        unsafe_fixes: bool = False,
    ) -> Settings:
        """`select` replaces the default set (as in ruff); the others adjust it."""
        enabled = expand(select) if select is not None else DEFAULT_CODES
        enabled = (enabled | expand(extend_select)) - expand(ignore)
        return cls(enabled, unsafe_fixes)
