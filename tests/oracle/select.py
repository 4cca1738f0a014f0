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

from .grammar import Case, generate
from .judge import mutation_class

Chosen = list[tuple[Case, list[tuple[int, str, str]]]]  # each case with the mutants judged


def choose(seeds: range, per_class: int = 2, per_case: int = 4) -> Chosen:
    """Cases of `seeds`, in order, each taken for a class that still lacks mutants (at most
    `per_case` of its mutants) or a feature no case taken has yet."""
    wanted: Counter[str] = Counter()
    features: set[str] = set()
    chosen: Chosen = []
    for seed in seeds:
        case = generate(seed)
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
