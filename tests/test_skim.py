"""The skim may clear a file (skip parsing it) only if the engine finds nothing there."""

from __future__ import annotations

from conftest import fixture_cases
from hypothesis import given
from hypothesis import strategies as st

from semfix.api import fix_source
from semfix.engine.run import analyse
from semfix.engine.skim import _ALIASABLE, _Skim, clears, clears_for
from semfix.selection import build_settings

NO_MIGRATIONS = build_settings(select=["SEM0"], unsafe_fixes=True)

HEADERS = [
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n",
    "import jax.experimental.pallas as pl\nimport jax.experimental.pallas.tpu as pltpu\n",
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
    "from jax.experimental.pallas.tpu import (\n    make_async_copy as mac,  # note\n    semaphore_wait as sw,\n)\n",
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
    "from jax.experimental.pallas.tpu import SemaphoreType as ST\n",
    "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
    "WAIT = (  # an alias\n    pl.semaphore_wait)\n",
]
ENTRIES = [
    "pltpu.VMEM((8,), jnp.float32)",
    "pltpu.SemaphoreType.DMA",
    "pltpu.SemaphoreType.DMA((2,))",
    "pltpu.SemaphoreType.REGULAR",
    "pltpu.SemaphoreType.REGULAR(shape=(3,))",
    "(pltpu.SemaphoreType.DMA,) * 2",
    "ST.DMA((2,))",
    "pltpu.SemaphoreType.DMA(())",
    "pltpu.SemaphoreType.BARRIER",
    "ST.REGULAR((2,))",
]
ARGUMENTS = [
    "sem",
    "sems",
    "buf",
    "sem[...]",
    "sem[()]",
    "sems[0]",
    "sems.at[0]",
    "sems.at[0:1]",
    "sems.at[0][...]",
    "(sem)",
    "(sems[1])",
    "v",
    "w",
    "sems.at[pl.ds(0, 1)]",
    "sems.at[idx[0]]",
    "sems[:]",
    "sem  # a note\n",
    "sems.at['k']",
    "sems[i, j]",
    "sems\n    [0]",
]
CALLS = [
    "pltpu.semaphore_wait({a}, 1)",
    "pl.semaphore_signal({a}, 1, device_id=(0,))",
    "pl.semaphore_read({a})",
    "pltpu.make_async_copy(x_ref, buf, {a}).start()",
    "pltpu.make_async_copy(x_ref, buf, sem={a}).wait()",
    "pltpu.make_async_remote_copy(x_ref, buf, {a}, {b}, device_id=(0,)).start()",
    "(pltpu.semaphore_wait)({a})",
    "pltpu.semaphore_wait(  # why\n        {a}, 1)",
    "pltpu.semaphore_wait(*rest, {a})",
    "pltpu.semaphore_wait(value=1, sem_or_view={a})",
    'pltpu.semaphore_wait({a}, f"{{1}}")',
    "sw({a}, 1)",
    "mac(x_ref, buf, {a}).start()",
    "pltpu.core_barrier({a}, core_axis_name='core')",
    "pl.semaphore_signal({a}, pl.semaphore_read({b}))",
    "pltpu.make_async_copy(x_ref.at[pl.ds(0, 1)], buf, {a}).start(priority=pl.semaphore_read({b}))",
    "pltpu.make_async_copy({a}, {b}, sem).start()",
    "pltpu.sync_copy({a}, dst_ref={b})",
    "functools.partial(pltpu.semaphore_wait, {a})()",
    "functools.partial((sw), sem_or_view={a}, value=1)()",
    "functools.partial(pltpu.make_async_copy, {b}, buf, {a})().start()",
    "WAIT({a}, 1)",
    "signal({a}, 1)",
]
LOCALS = [
    "",
    "signal = pltpu.semaphore_signal",
    "v = sem[...]",
    "w = sems[0]",
    "v = sems.at[0]",
    "(v  # note\n    ) = sem[()]",
    "x = 1 if v == w else 2",
]


ALLOCATIONS = [
    "pl.pallas_call(kernel, out_shape=x, scratch_shapes=[{entries}])(x)",
    "pl.pallas_call(functools.partial(kernel, k=1), out_shape=x, scratch_shapes=({entries},))(x)",
    "pl.pallas_call(kernel=kernel, out_shape=x, "
    "grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=0, scratch_shapes=[{entries}]))(x)",
    "pl.pallas_call(kernel, out_shape=x, scratch_shapes=SHAPES)(x)",
    "pl.run_scoped(kernel, {entries})",
    "pl.run_scoped(kernel, sems={first})",
    "pl.run_scoped(kernel, *[{entries}])",
]


@st.composite
def kernels(draw: st.DrawFn) -> str:
    """A kernel module that mixes every shape the skim reasons about, bugs and decoys alike."""
    params = draw(st.permutations(["x_ref", "buf", "sem", "sems"]))
    entries = draw(st.lists(st.sampled_from(ENTRIES), min_size=1, max_size=3))
    local = draw(st.sampled_from(LOCALS))
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        a, b = draw(st.sampled_from(ARGUMENTS)), draw(st.sampled_from(ARGUMENTS))
        calls.append("    " + draw(st.sampled_from(CALLS)).format(a=a, b=b))
    body = "\n".join(["    " + line for line in local.splitlines()] + calls)
    signature = ", ".join(params)
    if draw(st.booleans()):
        signature += ", *, k=0"
    allocation = draw(st.sampled_from(ALLOCATIONS)).format(entries=", ".join(entries), first=entries[0])
    header = draw(st.sampled_from(HEADERS)) + "import functools\nimport jax.numpy as jnp\n"
    shapes = f"SHAPES = [{', '.join(entries)}]\n" if draw(st.booleans()) else ""
    decoy = draw(
        st.sampled_from(
            ["", "\n\ndef kernel(a, b):\n    return a\n", "\n\ndef other(sem):\n    global pl\n    pl = None\n"]
        )
    )
    return f"{header}{shapes}\n\ndef kernel({signature}):\n{body}\n{decoy}\n\ndef run(x):\n    return {allocation}\n"


def _sound(source: str) -> bool:
    if not clears(source.encode()):
        return True
    try:
        findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
    except Exception:  # noqa: BLE001 - a file semfix cannot read has no findings either
        return True
    return findings == ()


@given(kernels())
def test_skim_never_clears_a_generated_kernel_with_findings(source: str) -> None:
    assert _sound(source), source


def test_skim_never_clears_a_fixture_with_findings() -> None:
    cleared = flagged = 0
    for case in fixture_cases():
        for source in (case.before, case.after):
            text = source.decode("utf-8", "surrogateescape")
            findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
            if clears(source):
                cleared += 1
                assert findings == (), (case.name, text)
            flagged += bool(findings)
    assert flagged > 20 and cleared >= 10  # it is tested on real findings, and it does clear files


EVERY_RULE = build_settings(select=["ALL"], unsafe_fixes=True, target_jax="0.10.2")


def test_skim_with_every_rule_never_clears_a_fixture_with_findings() -> None:
    """With the migrations on, a file is cleared only if it also lacks the spelling each
    migration needs; the engine itself, run without the skim, must then find nothing."""
    cleared = 0
    for case in fixture_cases():
        for source in (case.before, case.after):
            findings = analyse(source, EVERY_RULE, apply_fixes=False).findings
            if clears_for(source, EVERY_RULE.enabled):
                cleared += 1
                assert findings == (), case.name
    assert cleared >= 5


ALIASED = [
    f"{HEADERS[0]}WAIT = pl.semaphore_wait\n\n\ndef kernel(sem):\n    WAIT(sem[...], 1)\n",
    (
        f"{HEADERS[0]}\n\ndef kernel(sem):\n    signal = \\\n        pltpu.semaphore_signal  # note\n"
        "    v = sem[...]\n    signal(v, 1)\n"
    ),
    f"{HEADERS[0]}import functools\n\n\ndef kernel(sem):\n    functools.partial(pl.semaphore_wait, sem[...])(1)\n",
    (
        f"{HEADERS[2]}from functools import partial as bind\n\n\ndef kernel(x, buf, sem):\n"
        "    bind((mac), x[...], buf, sem)()\n"
    ),
    f"{HEADERS[0]}a = b = pl.semaphore_wait\n\n\ndef kernel(sem):\n    a(sem[...])\n",
    f"{HEADERS[0]}(w) = pl.semaphore_wait\n\n\ndef kernel(sem):\n    w(sem[...])\n",
    f"{HEADERS[0]}wäit = pl.semaphore_wait\n\n\ndef kernel(sem):\n    wäit(sem[...])\n",
]


def test_skim_never_clears_a_kernel_calling_a_catalog_function_by_an_alias_or_a_partial() -> None:
    for source in ALIASED:
        assert analyse(source, NO_MIGRATIONS, apply_fixes=False).findings, source
        assert not clears(source.encode()), source


DMA_ONLY = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_hbm, sems):
    copy = pltpu.make_async_copy(x_hbm, o_hbm, sems.at[0])
    copy.start()
    copy.wait()


def run(x):
    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((1,))])(x)
"""


def test_with_every_rule_a_kernel_no_migration_can_touch_is_not_parsed() -> None:
    result = fix_source(DMA_ONLY, settings=EVERY_RULE)
    assert not result.parsed and result.findings == ()
    migrated = DMA_ONLY.replace("    copy.wait()\n", "    copy.wait()\n    pltpu.semaphore_signal(sems.at[0], 1)\n")
    result = fix_source(migrated, settings=EVERY_RULE)
    assert result.parsed and [f.rule for f in result.findings] == ["SEM101", "SEM006"]  # it signals a DMA semaphore
    assert "pl.semaphore_signal(sems.at[0], 1)" in result.source


CORRECT = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_ref, buf, sems, ready_sem):
    slot = pl.program_id(0) % 2
    copy = pltpu.make_async_copy(x_hbm.at[pl.ds(slot * 8, 8)], buf.at[slot], sems.at[slot])  # a comment
    copy.start()
    copy.wait()
    pl.semaphore_signal(ready_sem, 1, device_id=(0,), device_id_type=pl.DeviceIdType.MESH)
    pl.semaphore_wait(ready_sem, 1)
    o_ref[...] = buf[slot]


def wait_kernel(x_hbm, o_hbm, sem):
    pltpu.async_copy(x_hbm, o_hbm, sem).wait()


def run(x):
    def body(sem, flags):
        pltpu.async_copy(x, x, sem).wait()
        pl.semaphore_signal(flags.at[0], 2)

    pl.run_scoped(body, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR((2,)))
    return pl.pallas_call(
        kernel,
        out_shape=x,
        scratch_shapes=[pltpu.VMEM((2, 8), x.dtype), pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.REGULAR],
        name="ring",
    )(x)
"""


def test_a_correct_kernel_is_cleared_without_parsing() -> None:
    assert clears(CORRECT.encode())
    result = fix_source(CORRECT.encode())
    assert not result.parsed and result.findings == ()


def _mutated(old: str, new: str) -> str:
    assert old in CORRECT
    return CORRECT.replace(old, new, 1)


def test_each_way_a_correct_kernel_goes_wrong_stops_the_skim() -> None:
    mutations = {
        "a read": ("sems.at[slot])  #", "sems.at[slot][...])  #"),
        "an element": ("sems.at[slot])  #", "sems[slot])  #"),
        "a slice": ("flags.at[0], 2", "flags.at[0:1], 2"),
        "a carried value": (
            "    pl.semaphore_wait(ready_sem, 1)",
            "    v = ready_sem[...]\n    pl.semaphore_wait(v, 1)",
        ),
        "a whole array, bare": ("flags.at[0], 2", "flags, 2"),
        "a whole scratch array": ("pl.semaphore_wait(ready_sem, 1)", "pl.semaphore_wait(sems, 1)"),
        "a whole scratch array, named": ("pl.semaphore_wait(ready_sem, 1)", "pl.semaphore_wait(w := sems, 1)"),
        "an element, named": ("sems.at[slot])  #", "(s := sems[slot]))  #"),
        "a parenthesized callee": ("pl.semaphore_wait(ready_sem, 1)", "(pl.semaphore_wait)(ready_sem[...], 1)"),
        "a comment before the parenthesis": (
            "pl.semaphore_wait(ready_sem, 1)",
            "_ = (pl.semaphore_wait  # c\n        (ready_sem[...], 1))",
        ),
        "a keyword": ("pl.semaphore_wait(ready_sem, 1)", "pl.semaphore_wait(value=1, sem_or_view=ready_sem[...])"),
        "a DMA semaphore signalled": ("pl.semaphore_wait(ready_sem, 1)", "pl.semaphore_wait(sems.at[0], 1)"),
        "a regular semaphore to a DMA": ("async_copy(x, x, sem)", "async_copy(x, x, flags.at[1])"),
        "a row of a 2-D array": ("pltpu.SemaphoreType.DMA((2,))", "pltpu.SemaphoreType.DMA((2, 2))"),
        "a slice by pl.ds": ("flags.at[0], 2", "flags.at[pl.ds(0, 1)], 2"),
        "an element through a helper": (
            "    pl.semaphore_wait(ready_sem, 1)",
            "    def wait_on(one):\n        pl.semaphore_wait(one, 1)\n\n    wait_on(sems[slot])",
        ),
        "a whole array pl.kernel allocates": (
            "    return pl.pallas_call(",
            "    pl.kernel(wait_kernel, x, mesh=x, scratch_types=[pltpu.SemaphoreType.DMA((1,))])(x)\n"
            "    return pl.pallas_call(",
        ),
        "an element in a conditional expression": ("sems.at[slot])  #", "sems[slot] if x else sems.at[0])  #"),
        "a loop target": (
            "    pl.semaphore_wait(ready_sem, 1)",
            "    for v in (sems[0], sems[1]):\n        pl.semaphore_wait(v, 1)",
        ),
        "an unpacked name": (
            "    pl.semaphore_wait(ready_sem, 1)",
            "    v, w = sems[0], 1\n    pl.semaphore_wait(v, w)",
        ),
        "a call inside another": (
            "pl.semaphore_wait(ready_sem, 1)",
            "pl.semaphore_wait(ready_sem, pl.semaphore_read(sems[1]))",
        ),
    }
    for label, (old, new) in mutations.items():
        source = _mutated(old, new)
        findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
        assert findings, label  # the mutation really is a bug
        assert not clears(source.encode()), label


def test_aliases_are_followed() -> None:
    source = "from jax.experimental.pallas import semaphore_wait as w  # pallas\n\n\ndef k(s):\n    w(s[...])\n"
    assert not clears(source.encode())
    assert clears(source.replace("s[...]", "s").encode())
    far = "from jax.experimental.pallas import (\n    semaphore_wait  # " + "x" * 500 + "\n    as w,\n)\n"
    source = far + "\n\ndef k(s):\n    w(s[...])\n"
    findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
    assert findings and not clears(source.encode())


def test_aliases_after_comments_and_strings_are_followed() -> None:
    """The name before `as` may follow a comment ending in `as` or in a word ending in it, or
    share its line with a `#` in a string."""
    imports = [
        "from jax.experimental.pallas import (semaphore_wait  # two ideas\n    as w)\n",
        "from jax.experimental.pallas import (semaphore_wait  # renamed as\n    as w)\n",
        'x = "#"; from jax.experimental.pallas import semaphore_wait as w\n',
    ]
    for head in imports:
        source = head + "\n\ndef k(s):\n    w(s[...], 1)\n"
        assert analyse(source, NO_MIGRATIONS, apply_fixes=False).findings, head
        assert not clears(source.encode()), head


def test_what_it_does_not_model_is_parsed() -> None:
    header = "from jax.experimental import pallas as pl\n"
    for body in ["pl.semaphore_wait(\\\n  s)", 'pl.semaphore_wait(s, f"{x}")', "pl.semaphore_wait(s, 'open"]:
        assert not clears((header + body + "\n").encode()), body
    assert not clears(("# -*- coding: latin-1 -*-\n" + header + "pl.semaphore_wait(s)\n").encode())
    assert not clears((header + "pl.semaphore_wait(s)\r").encode())


def test_non_ascii_names_are_parsed() -> None:
    header = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
    alias = "from jax.experimental.pallas import semaphore_wait as wäit\n\n\ndef k(s):\n    wäit(s[...])\n"
    kernel = (
        "\n\ndef körnel(x, sems):\n    pl.semaphore_wait(sems, 1)\n\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(körnel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)\n"
    )
    for source in (header + alias, header + kernel):
        findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
        assert findings and not clears(source.encode()), source


def test_a_triple_quoted_string_does_not_shift_positions() -> None:
    body = 'pltpu.make_async_copy("""a", "b""", x_hbm, sems[0])'
    source = CORRECT.replace("pl.semaphore_wait(ready_sem, 1)", body)
    findings = analyse(source, NO_MIGRATIONS, apply_fixes=False).findings
    assert findings and not clears(source.encode())


def test_a_generic_kernel_is_parsed() -> None:
    source = CORRECT.replace("def kernel(", "def kernel[T](").replace(
        "pl.semaphore_wait(ready_sem, 1)", "pl.semaphore_wait(sems, 1)"
    )
    assert not clears(source.encode())


def test_long_runs_of_hashes_and_blanks_do_not_backtrack() -> None:
    # Patterns with overlapping alternatives took exponential time on lines like these.
    header = "from jax.experimental import pallas as pl\n"
    source = header + "#" * 400 + "\nx = 1" + " " * 400 + "\n" + "pl.semaphore_wait(s)  " + "# " * 200 + "\n"
    assert clears(source.encode())


def test_a_name_holding_another_is_found_where_it_is_spelled() -> None:
    """`_Skim._offsets` searches a name holding another (`make_async_copy`) from that one's
    first spelling on: the same offsets as a search of the whole file."""
    data = b"make_async_copy(a) async_copy sync_copy make_async_copymake_async_copy async_copy_smem_to_tmem"
    skim = _Skim(data)
    for name in _ALIASABLE:
        expected = [i for i in range(len(data)) if data.startswith(name.encode(), i)]
        assert skim._offsets(name) == expected, name


def test_a_name_a_value_may_reach_stops_the_skim_at_its_call() -> None:
    """A bare name that may be assigned ends the skim at the call that gives it, before the
    calls after it are read: the same answer as reading them all, since names only accumulate."""
    source = _mutated("    pl.semaphore_wait(ready_sem, 1)", "    v = ready_sem[...]\n    pl.semaphore_wait(v, 1)")
    correct, skim = _Skim(CORRECT.encode()), _Skim(source.encode())
    assert correct.clears() and not skim.clears()
    assert len(skim.calls) < len(correct.calls)
