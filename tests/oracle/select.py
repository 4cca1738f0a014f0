"""The CI's cases, chosen by class rather than by count (issue 43 §4).

Eighty seeds judged four mutants each missed whole classes: no mutant of an allocation whose
rank the file does not show (`SemaphoreType.DMA(shape)`) with an index dropped, so a semfix
that took an unknown rank as known passed. Here every mutation class (where it is planted,
what was planted, and whether the file shows the allocation's rank) gets `per_class` mutants
from distinct seeds, and every feature of the grammar one case, taken in seed order; the
selection is computed from the grammar, so it grows with it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from .grammar import LAYOUTS, Case, build, generate, plan_for
from .judge import mutation_class

Chosen = list[tuple[Case, list[tuple[int, str, str]]]]  # each case with the mutants judged


def choose(seeds: range, per_class: int = 2, per_case: int = 4, per_layout: int = 2) -> Chosen:
    """Cases of `seeds`, in order, each taken for a class that still lacks mutants (at most
    `per_case` of its mutants) or a feature no case taken has yet, laid out as one module;
    then, for each package layout (grammar.LAYOUTS), the first `per_layout` cases so laid out,
    each with `per_case` mutants of its semaphores and views first (where the run's links to
    the launch and to `_compat` decide what semfix may prove)."""
    chosen = _by_class([build(replace(plan_for(seed), layout="module")) for seed in seeds], per_class, per_case)
    for layout in sorted(set(LAYOUTS) - {"module"}):
        laid = [case for seed in seeds if (case := generate(seed)).plan.layout == layout][:per_layout]
        for case in laid:
            mutants = [(n, m, t) for n, site in enumerate(case.sites) for m, t in site.mutants]
            mutants.sort(key=lambda mutant: case.sites[mutant[0]].role not in ("sem", "view"))
            taken: dict[str, tuple[int, str, str]] = {}
            for site, mutation, text in mutants:
                taken.setdefault(mutation_class(case, site, mutation), (site, mutation, text))
            chosen.append((case, list(taken.values())[:per_case]))
    return chosen


def _by_class(cases: list[Case], per_class: int, per_case: int) -> Chosen:
    wanted: Counter[str] = Counter()
    features: set[str] = set()
    chosen: Chosen = []
    for case in cases:
        mutants = sorted(
            ((n, m, t) for n, site in enumerate(case.sites) for m, t in site.mutants),
            key=lambda mutant: wanted[mutation_class(case, mutant[0], mutant[1])],
        )
        taken: list[tuple[int, str, str]] = []
        here: set[str] = set()
        for site, mutation, text in mutants:
            name = mutation_class(case, site, mutation)
            if wanted[name] < per_class and len(taken) < per_case and name not in here:
                here.add(name)
                wanted[name] += 1
                taken.append((site, mutation, text))
        if not taken and case.features - features and mutants:
            taken.append(mutants[0])
        if taken:
            features |= case.features
            chosen.append((case, taken))
    return chosen


def classes(seeds: range) -> set[str]:
    """Every mutation class and feature that cases of `seeds` hold."""
    found: set[str] = set()
    for seed in seeds:
        case = generate(seed)
        found |= case.features
        found |= {mutation_class(case, n, m) for n, site in enumerate(case.sites) for m, _ in site.mutants}
    return found
