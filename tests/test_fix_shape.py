"""One `Fix` on each finding: the new text, its applicability, and every edit of its decision
(a carried read's uses with the removed assignment, a migration's renames with its import
edits), so that whoever applies a finding's fix applies all of what makes it safe."""

from __future__ import annotations

import json

from semfix import fix_source
from semfix.findings import Fix
from semfix.rewrite.text import apply_edits
from semfix.selection import build_settings
from semfix.settings import Settings

CARRIED = """\
from jax.experimental import pallas as pl


def handshake(sems):
    done = sems.at[1][...]
    pl.semaphore_signal(done, 1)
    pl.semaphore_wait(done, 1)
    pl.semaphore_signal(sems.at[0][...], 1)
"""

MIGRATION = """\
from jax.experimental.pallas import tpu as pltpu


def kernel(sem):
    pltpu.semaphore_signal(sem, 1)
    pltpu.semaphore_wait(sem, 1)
"""


def _whole(source: str, fix: Fix) -> str:
    return apply_edits(source, 0, len(source), fix.edits)


def test_a_carried_reads_uses_and_its_removed_assignment_are_one_fix() -> None:
    result = fix_source(CARRIED)
    carried = [f for f in result.findings if f.rule == "SEM003"]
    assert [f.replacement for f in carried] == ["", "sems.at[1]", "sems.at[1]"]
    assert all(f.fix is not None and f.fix.applicability == "safe" for f in carried)
    assert len({f.fix.edits for f in carried}) == 1 and len(carried[0].fix.edits) == 3  # type: ignore[union-attr]
    alone = _whole(CARRIED, carried[0].fix)  # type: ignore[arg-type]
    assert "done" not in alone and "sems.at[0][...]" in alone  # the decision's edits, and no other's
    (direct,) = [f for f in result.findings if f.rule == "SEM001"]
    assert direct.fix is not None and len(direct.fix.edits) == 1 and direct.fix.edits != carried[0].fix.edits  # type: ignore[union-attr]


def test_a_migrations_renames_and_import_edits_are_one_fix() -> None:
    result = fix_source(MIGRATION, settings=Settings(enabled=frozenset({"SEM101"}), target_jax=(0, 10, 2)))
    assert [f.rule for f in result.applied] == ["SEM101", "SEM101"]
    (edits,) = {f.fix.edits for f in result.findings}  # type: ignore[union-attr]
    assert _whole(MIGRATION, result.findings[0].fix) == result.source  # type: ignore[arg-type]
    assert len(edits) > 2  # the renames, and the import's


def test_a_fix_not_made_keeps_its_words_and_no_edits() -> None:
    source = "from jax.experimental import pallas as pl\n\n\ndef k(sems, i):\n    pl.semaphore_wait(sems[i], 1)\n"
    (finding,) = fix_source(source).findings
    assert finding.fix == Fix("sems.at[i]", "unsafe") and not finding.applied
    assert (finding.replacement, finding.safety) == ("sems.at[i]", "unsafe")
    made = fix_source(source, settings=build_settings(unsafe_fixes=True)).findings[0]
    assert made.applied and made.fix is not None and _whole(source, made.fix).endswith("(sems.at[i], 1)\n")


def test_the_fix_is_reported_as_before(tmp_path: object) -> None:
    """Reports keep their fields: `replacement` and `safety` are read from the Fix."""
    finding = fix_source(CARRIED).findings[0]
    fields = {name: getattr(finding, name) for name in ("replacement", "safety")}
    assert json.loads(json.dumps(fields)) == {"replacement": "", "safety": "safe"}
