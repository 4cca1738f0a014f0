"""Regular expressions compiled where first used, not at import.

Compiling every module-level pattern at import cost a one-file check about a fifth of semfix's
start-up (issue 47), though most of them serve only some files: the skim's on a kernel that
passes its gates, a migration's under `--select`. `compiled(source)` stands for
`re.compile(source)`: its first method call compiles the pattern and keeps the compiled
pattern's methods on the object, so every call after is the compiled pattern's own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, AnyStr, Generic

_KEPT = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern", "flags", "groups")


class _Pattern(Generic[AnyStr]):
    def __init__(self, source: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what the object lacks: the first use
        if name.startswith("_"):
            raise AttributeError(name)
        pattern = re.compile(self._source, self._flags)
        for kept in _KEPT:
            setattr(self, kept, getattr(pattern, kept))
        return getattr(pattern, name)


if TYPE_CHECKING:

    def compiled(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]: ...

else:
    compiled = _Pattern
