"""Generated projects that use the migration's names (issue 36): a module, or a small package.

Each project is a kernel that signals, reads and waits a REGULAR semaphore, with the names
semfix's migration rules rename or drop (SEM101's `MOVED_TO_PALLAS` and `TPUMemorySpace`,
SEM102's `dec=`, SEM103's `device_id_type=...MESH`), each spelled in one import style:
from-imports, aliases, star imports, `pl.tpu` chains, the whole dotted path, a module-level
alias, and, in a package (with `__init__.py`, or a namespace package), a sibling's import read
by name, through the module (`compat.pltpu.X`) or re-exported by `__init__.py`. Each project
declares a floor (floors.py) and uses only what runs on the JAX that floor admits, so the
project runs there before the migration; `expected()` is written from the same plan.

Memory-space values (`ANY`, `HOST`, `TPUMemorySpace.VMEM`) are bound to module constants that
the judge holds to the object the old spelling gives on the floor's JAX: a rename to a name
that is another object there runs, but changes meaning, and is a wrong migration too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from semfix.catalog import WAIT_VALUE_KEYWORD_FROM
from semfix.jax_versions import parse

from .floors import FLOOR_ENVS, Declaration, choose, declare, widen

PACKAGE = "ringlib"
SINGLE = "ring_kernel"
#: What a kernel may do, and the TPU name each needs.
USES = {
    "signal": "semaphore_signal",
    "wait": "semaphore_wait",
    "read": "semaphore_read",
    "dtype": "semaphore",
    "mesh": "DeviceIdType",
    "any": "ANY",
    "host": "HOST",
    "vmem": "TPUMemorySpace",
    "remote": "DeviceIdType",  # a remote copy from the other device, its MESH by position or keyword
}
OPTIONAL = ("read", "dtype", "mesh", "any", "host", "vmem", "remote")
#: The local name each TPU name is imported or assigned as, in the styles that rename it.
ALIASES = {
    "semaphore_signal": "sig",
    "semaphore_wait": "wait_on",
    "semaphore_read": "read_sem",
    "semaphore": "sem_dtype",
    "DeviceIdType": "Ids",
    "ANY": "TPU_ANY",
    "HOST": "TPU_HOST",
    "TPUMemorySpace": "Spaces",
}
#: `pl` holds these under the same name on every JAX the oracle runs (0.6.0 on).
ON_PL = ("semaphore_signal", "semaphore_wait", "semaphore_read", "semaphore", "DeviceIdType")
STYLES = ("attr", "attr", "from", "from-as", "star", "chain", "full", "assigned", "pl", "getattr", "local")
#: Compatibility code that runs on every JAX (issue 45 section 3), for the names `pl` holds:
#: `getattr(pl, X, None) or pltpu.X`, `try: pl.X / except AttributeError: pltpu.X`, and a compat
#: module importing X from pallas first, from the TPU module under `except ImportError:`.
COMPAT_STYLES = ("compat-getattr", "compat-try", "compat-module")
SIBLING_STYLES = ("sibling-from", "sibling-attr", "sibling-name", "init", "sibling-star")
#: The names read only inside functions: these may be imported there too ("local").
IN_FUNCTIONS = ("semaphore_signal", "semaphore_wait", "semaphore_read", "semaphore", "DeviceIdType")
TPU_IMPORTS = {
    "from-as": ("from jax.experimental.pallas import tpu as pltpu", "pltpu"),
    "import-as": ("import jax.experimental.pallas.tpu as pltpu", "pltpu"),
    "from": ("from jax.experimental.pallas import tpu", "tpu"),
    "other-alias": ("from jax.experimental.pallas import tpu as tpu_ops", "tpu_ops"),
}
TPU_PATH = "jax.experimental.pallas.tpu"


@dataclass(frozen=True)
class Plan:
    """The choices a project is rendered from; the shrinker makes them plainer one at a time."""

    seed: int
    declaration: Declaration
    layout: str  # "module", "package" (with __init__.py) or "namespace"
    uses: tuple[str, ...]
    styles: tuple[tuple[str, str], ...]  # TPU name -> import style
    inc: str  # the signal's amount: "position", "keyword" or "default" (1)
    amount: str  # the wait's: "position", "dec", "value" or "default"
    tpu_import: str  # how each module imports the TPU module (TPU_IMPORTS)
    launch: str  # "pl": pl.pallas_call; "from": pallas_call and BlockSpec imported by name
    relative: bool  # a package's modules import each other relatively
    helper: bool  # a package's signal, read and wait are in a helper module, sync.py
    layout_call: str  # the signal call: "line", "lines", "lines-comment" (a comment after the keyword)
    mesh_const: bool  # `device_id_type=MESH`, with MESH a module constant
    remote_form: str = "position"  # the remote copy's MESH: "position", "keyword" or "none"
    member: str = ""  # a monorepo: the project is this folder, below a root declaring a higher floor
    root_floor: str = "0.12.1"  # what that root declares

    def style(self, name: str) -> str:
        return dict(self.styles).get(name, "attr")


@dataclass
class Module:
    """One module of a project: its dotted name, text, project modules it imports, and the
    memory-space constants the judge holds to the old spelling's object: (attribute, old path)."""

    name: str
    path: str
    text: str
    deps: set[str] = field(default_factory=set)
    checks: list[tuple[str, str]] = field(default_factory=list)
    kernel: bool = False  # it has run() and expected()


@dataclass
class Project:
    plan: Plan
    modules: list[Module]  # in import order: a module after those it imports

    @property
    def seed(self) -> int:
        return self.plan.seed

    @property
    def declaration(self) -> Declaration:
        return self.plan.declaration

    @property
    def import_root(self) -> str:
        """The folder, relative to the project's, that its modules are imported from."""
        return self.plan.member

    def files(self) -> dict[str, str]:
        """Every file of the project: its declaration's and its modules', and in a monorepo
        the root's, which declares a higher floor than the member (issue 36 item 4)."""
        prefix = f"{self.plan.member}/" if self.plan.member else ""
        files = {f"{prefix}{path}": text for path, text in self.declaration.files}
        if self.plan.member:  # a uv workspace: the member's own `jax`, bounded or not, is its floor
            app = f'[project]\nname = "app"\nversion = "1.0"\ndependencies = ["jax[tpu]>={self.plan.root_floor}"]\n'
            app += f'\n[tool.uv.workspace]\nmembers = ["{self.plan.member}"]\n'
            files["pyproject.toml"] = app
        return {**files, **{m.path: m.text for m in self.modules}}

    def closure(self, name: str) -> set[str]:
        """`name` and every project module it imports, directly or not (a package's
        `__init__` is imported with each of its modules)."""
        by_name = {m.name: m for m in self.modules}
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in by_name:
                continue
            seen.add(current)
            todo += by_name[current].deps
            if "." in current:
                todo.append(current.rpartition(".")[0])
        return seen


class Writer:
    """The imports, constants and spellings of one module, as the plan's styles ask."""

    def __init__(self, plan: Plan, name: str, project: dict[str, Writer]) -> None:
        self.plan, self.name, self.project = plan, name, project
        self.imports: list[str] = []
        self.constants: list[str] = []
        self.deps: set[str] = set()
        self.checks: list[tuple[str, str]] = []
        self.local: list[str] = []  # imports inside the function the module's semaphore calls are in
        self.exported: list[str] = []  # a compat module's __all__, for a sibling's star import

    def need(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)

    def constant(self, line: str) -> None:
        if line not in self.constants:
            self.constants.append(line)

    def tpu(self) -> str:
        line, alias = TPU_IMPORTS[self.plan.tpu_import]
        self.need(line)
        return alias

    def pl(self) -> str:
        self.need("from jax.experimental import pallas as pl")
        return "pl"

    def sibling(self, module: str) -> str:
        """The name this module reads the sibling `module` (compat, sync) through."""
        writer = self.project.setdefault(module, Writer(self.plan, f"{PACKAGE}.{module}", self.project))
        self.deps.add(writer.name)
        if self.plan.relative:
            self.need(f"from . import {module}")
        else:
            self.need(f"from {PACKAGE} import {module}")
        return module

    def from_sibling(self, module: str, name: str) -> None:
        self.deps.add(f"{PACKAGE}.{module}")
        origin = f".{module}" if self.plan.relative else f"{PACKAGE}.{module}"
        self.need(f"from {origin} import {name}")

    def ref(self, name: str, module_level: bool = False) -> str:
        """The expression this module reads TPU name `name` by, its imports added (`module_level`:
        read outside any function, where a function's own import does not reach)."""
        style = self.plan.style(name)
        if style.startswith("sibling") or style == "init":
            if self.plan.layout == "module" or self.name != f"{PACKAGE}.ops":
                style = "attr"  # siblings exist only in a package, and are read by its kernel module
        if style == "local" and (module_level or name not in IN_FUNCTIONS):
            style = "from"
        if style.startswith("compat"):
            return self.compat(name, style)
        if style == "attr":
            return f"{self.tpu()}.{name}"
        if style == "from":
            self.need(f"from {TPU_PATH} import {name}")
            return name
        if style == "from-as":
            self.need(f"from {TPU_PATH} import {name} as {ALIASES[name]}")
            return ALIASES[name]
        if style == "star":
            self.need(f"from {TPU_PATH} import *")
            return name
        if style == "chain":
            self.tpu()  # `pl.tpu` is bound once the submodule is imported
            return f"{self.pl()}.tpu.{name}"
        if style == "full":
            self.need(f"import {TPU_PATH}")
            return f"{TPU_PATH}.{name}"
        if style == "assigned":
            self.constant(f"{ALIASES[name]} = {self.tpu()}.{name}")
            return ALIASES[name]
        if style == "pl":
            return f"{self.pl()}.{name}" if name in ON_PL else f"{self.tpu()}.{name}"
        if style == "getattr":
            return f'getattr({self.tpu()}, "{name}")'
        if style == "local":  # imported in the function that reads it
            line = f"from {TPU_PATH} import {name}"
            if line not in self.local:
                self.local.append(line)
            return name
        compat = self.project.setdefault("compat", Writer(self.plan, f"{PACKAGE}.compat", self.project))
        if style == "sibling-attr":  # compat.pltpu.X: the sibling's module import, read through it
            return f"{self.sibling('compat')}.{compat.tpu()}.{name}"
        compat.need(f"from {TPU_PATH} import {name}")
        if style == "sibling-star":  # `from .compat import *`, which compat's __all__ names
            compat.exported.append(name)
            self.deps.add(compat.name)
            self.need(f"from {'.compat' if self.plan.relative else PACKAGE + '.compat'} import *")
            return name
        if style == "sibling-name":
            return f"{self.sibling('compat')}.{name}"
        if style == "init" and self.plan.layout == "package":
            init = self.project.setdefault("__init__", Writer(self.plan, PACKAGE, self.project))
            init.need(f"from .compat import {name}" if self.plan.relative else f"from {PACKAGE}.compat import {name}")
            init.deps.add(f"{PACKAGE}.compat")
            self.need(f"from {'.' if self.plan.relative else PACKAGE} import {name}")
            return name
        self.from_sibling("compat", name)
        return name

    def compat(self, name: str, style: str) -> str:
        """`name` read through compatibility code (COMPAT_STYLES); a name `pl` lacks, by `attr`."""
        if name not in ON_PL:
            return f"{self.tpu()}.{name}"
        alias = ALIASES[name]
        if style == "compat-getattr":
            self.constant(f'{alias} = getattr({self.pl()}, "{name}", None) or {self.tpu()}.{name}')
        elif style == "compat-try" or self.plan.layout == "module" or self.name != f"{PACKAGE}.ops":
            self.constant(
                f"try:\n    {alias} = {self.pl()}.{name}\nexcept AttributeError:\n    {alias} = {self.tpu()}.{name}"
            )
        else:  # a compat module, its kernel module importing the name from it
            compat = self.project.setdefault("compat", Writer(self.plan, f"{PACKAGE}.compat", self.project))
            fallback = f"except ImportError:\n    from {TPU_PATH} import {name}"
            compat.constant(f"try:\n    from jax.experimental.pallas import {name}\n{fallback}")
            self.from_sibling("compat", name)
            return name
        return alias

    def head(self, doc: str, kernel: bool) -> str:
        top = ["import jax", "import jax.numpy as jnp", "import numpy as np"] if kernel else []
        lines = [f'"""{doc}"""', *top, *self.imports]
        text = "\n".join(lines) + "\n"
        if self.exported:
            text += f"\n__all__ = {sorted(set(self.exported))!r}\n"
        if self.constants:
            text += "\n" + "\n".join(self.constants) + "\n"
        return text


def _amounts(plan: Plan) -> tuple[int, str, str]:
    """The signal's amount, and the text of the signal's and the wait's amount arguments."""
    k = 1 if plan.inc == "default" else 2
    inc = {"position": f", {k}", "keyword": f", inc={k}", "default": ""}[plan.inc]
    amount = {"position": f", {k}", "dec": f", dec={k}", "value": f", value={k}", "default": ""}.get(plan.amount, "")
    return k, inc, amount


def sync_lines(plan: Plan, w: Writer, indent: str) -> list[str]:
    """The signal, read and wait: in the kernel, or in a helper's body."""
    k, inc, amount = _amounts(plan)
    signal = w.ref("semaphore_signal")
    args = [f"sem{inc}"]
    comment = ""
    if "mesh" in plan.uses:
        mesh = f"{w.ref('DeviceIdType', module_level=plan.mesh_const)}.MESH"
        if plan.mesh_const:
            w.constant(f"MESH = {mesh}")
            mesh = "MESH"
        args.append(f"device_id=None, device_id_type={mesh}")
        comment = "  # the default: this device" if plan.layout_call == "lines-comment" else ""
    if plan.layout_call == "line" or len(args) == 1:
        lines = [f"{signal}({', '.join(args)}){comment}"]
    else:
        parts = ", ".join(args).split(", ")
        lines = [f"{signal}(", *(f"    {p}," for p in parts[:-1]), f"    {parts[-1]},{comment}", ")"]
    if "read" in plan.uses:
        lines.append(f"count = {w.ref('semaphore_read')}(sem)")
    if plan.amount.startswith("partial"):  # functools.partial(wait, dec=k): SEM102 through a partial
        keyword = plan.amount.partition("-")[2]
        w.need("import functools")
        w.constant(f"wait_{k} = functools.partial({w.ref('semaphore_wait', module_level=True)}, {keyword}={k})")
        lines.append(f"wait_{k}(sem)")
    else:
        lines.append(f"{w.ref('semaphore_wait')}(sem{amount})")
    return [indent + line for line in lines]


def kernel_module(plan: Plan, name: str, project: dict[str, Writer]) -> tuple[Writer, str]:
    """The module with the kernel, run() and expected()."""
    w = project.setdefault("ops", Writer(plan, name, project))
    uses = set(plan.uses)
    remote = "remote" in uses
    params = "x_ref, o_ref, sem" + (", dma" if "any" in uses else "") + (", send, recv" if remote else "")
    body = []
    if "dtype" in uses:
        body.append(f"    assert jnp.issubdtype(sem.dtype, {w.ref('semaphore')})")
    if remote:  # o gets the other device's half of x; MESH by position, by keyword, or not at all
        mesh = f"{w.ref('DeviceIdType')}.MESH"
        tail_arg = {"position": f"peer, {mesh}", "keyword": f"device_id=peer, device_id_type={mesh}"}
        body += [
            '    peer = 1 - jax.lax.axis_index("x")',
            f"    remote = {w.tpu()}.make_async_remote_copy(x_ref, o_ref, send, recv, "
            f"{tail_arg.get(plan.remote_form, 'peer')})",
            "    remote.start()",
            "    remote.wait()",
            "    value = o_ref[...]",
        ]
    elif "any" in uses:
        body += [
            f"    copy = {w.tpu()}.make_async_copy(x_ref, o_ref, dma)",
            "    copy.start()",
            "    copy.wait()",
            "    value = o_ref[...]",
        ]
    else:
        body.append("    value = x_ref[...]")
    if plan.helper and plan.layout != "module":
        w.from_sibling("sync", "handshake")
        body.append("    count = handshake(sem)")
    else:
        body += sync_lines(plan, w, "    ")
    k, _, _ = _amounts(plan)
    counted = "read" in uses
    body.append("    o_ref[...] = -value" + (" + count.astype(jnp.float32)" if counted else ""))
    body = [f"    {line}" for line in w.local] + body  # the imports a "local" style reads
    specs = []
    spec = "BlockSpec"
    if plan.launch == "from":
        w.need("from jax.experimental.pallas import BlockSpec, pallas_call")
        launch = "pallas_call"
    else:
        launch = f"{w.pl()}.pallas_call"
        spec = f"{w.pl()}.BlockSpec"
    if "any" in uses:
        w.constant(f"ANY_SPACE = {w.ref('ANY')}")
        w.checks.append(("ANY_SPACE", "ANY"))
        specs.append(f"        in_specs=[{spec}(memory_space=ANY_SPACE)],")
    if "vmem" in uses:
        w.constant(f"VMEM_SPACE = {w.ref('TPUMemorySpace')}.VMEM")
        w.checks.append(("VMEM_SPACE", "TPUMemorySpace.VMEM"))
        specs.append(f"        out_specs={spec}(memory_space=VMEM_SPACE),")
    if "host" in uses:
        w.constant(f"HOST_SPACE = {w.ref('HOST')}")
        w.constant('SPACES = {"host": HOST_SPACE}')
        w.checks.append(("HOST_SPACE", "HOST"))
    tpu = w.tpu()
    scratch = f"{tpu}.SemaphoreType.REGULAR" + (f", {tpu}.SemaphoreType.DMA" if "any" in uses else "")
    scratch += f", {tpu}.SemaphoreType.DMA, {tpu}.SemaphoreType.DMA" if remote else ""
    added = f" + {k}" if counted else ""
    if remote:
        return w, _remote_tail(params, body, launch, specs, scratch, added)
    tail = [
        "",
        "",
        f"def ring_kernel({params}):",
        *body,
        "",
        "",
        "def run():",
        "    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)",
        f"    return {launch}(",
        "        ring_kernel,",
        "        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),",
        *specs,
        f"        scratch_shapes=[{scratch}],",
        "        interpret=True,",
        "    )(x)",
        "",
        "",
        "def expected():",
        f"    return -np.arange(8 * 128, dtype=np.float32).reshape(8, 128){added}",
    ]
    return w, "\n".join(tail) + "\n"


def _remote_tail(params: str, body: list[str], launch: str, specs: list[str], scratch: str, added: str) -> str:
    """A kernel on two CPU devices (shard_map, feature-tested: `jax.shard_map` from 0.7)."""
    lines = [
        "",
        "",
        f"def ring_kernel({params}):",
        *body,
        "",
        "",
        "def run():",
        "    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)",
        f"    call = {launch}(",
        "        ring_kernel,",
        "        out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),",
        *specs,
        f"        scratch_shapes=[{scratch}],",
        "        interpret=True,",
        "    )",
        '    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))',
        '    specs = jax.sharding.PartitionSpec("x")',
        '    if hasattr(jax, "shard_map"):',
        "        mapped = jax.shard_map(call, mesh=mesh, in_specs=specs, out_specs=specs, check_vma=False)",
        "    else:",
        "        from jax.experimental.shard_map import shard_map",
        "",
        "        mapped = shard_map(call, mesh=mesh, in_specs=specs, out_specs=specs, check_rep=False)",
        "    return jax.jit(mapped)(x)",
        "",
        "",
        "def expected():",
        "    x = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)",
        f"    return -np.concatenate([x[8:], x[:8]]){added}",
    ]
    return "\n".join(lines) + "\n"


def build(plan: Plan) -> Project:
    """Render a plan: the modules of its project, each after those it imports."""
    project: dict[str, Writer] = {}
    single = plan.layout == "module"
    kernel, tail = kernel_module(plan, SINGLE if single else f"{PACKAGE}.ops", project)
    bodies = {"ops": tail}
    if not single and plan.helper:
        sync = project.setdefault("sync", Writer(plan, f"{PACKAGE}.sync", project))
        lines = sync_lines(plan, sync, "    ")
        lines = [f"    {line}" for line in sync.local] + lines
        back = "    return count" if "read" in plan.uses else "    return 0"
        bodies["sync"] = "\n\ndef handshake(sem):\n" + "\n".join(lines) + f"\n{back}\n"
    modules = []
    for key in ("__init__", "compat", "sync", "ops"):
        w = project.get(key)
        if key == "__init__" and plan.layout == "package" and w is None:
            w = Writer(plan, PACKAGE, project)
        if w is None:
            continue
        path = f"{SINGLE}.py" if single else f"{PACKAGE}/{key}.py"
        path = f"{plan.member}/{path}" if plan.member else path
        doc = f"Generated by tests/oracle/migration.py (seed {plan.seed}): {key}."
        text = w.head(doc, key == "ops") + bodies.get(key, "")
        modules.append(Module(w.name, path, text, set(w.deps), list(w.checks), kernel=key == "ops"))
    order = {m.name: n for n, m in enumerate(modules)}
    modules.sort(key=lambda m: (m.name != PACKAGE, m.name == kernel.name, order[m.name]))
    return Project(plan, modules)


def plan_for(seed: int) -> Plan:
    """The random choices of project `seed`."""
    rng = random.Random(seed)
    declaration = widen(seed, choose(rng))
    env = declaration.runs_on
    allowed = {"host": env in ("0.7.1", "0.7.2"), "vmem": env != "0.7.2"}
    uses = ("signal", "wait", *(u for u in OPTIONAL if allowed.get(u, True) and rng.random() < 0.4))
    if "remote" in uses and "any" in uses:  # one source of o: the other device's x, or x in ANY
        uses = tuple(u for u in uses if u != "any")
    layout = rng.choice(["module", "package", "package", "namespace"])
    choices = STYLES + (SIBLING_STYLES * 2 if layout != "module" else ())
    styles = tuple(dict((USES[u], rng.choice(choices)) for u in reversed(uses)).items())
    # a star import binds only a module's own names, never a deprecated alias (TPUMemorySpace)
    styles = tuple((n, "attr" if (n, s) == ("TPUMemorySpace", "star") else s) for n, s in styles)
    more = random.Random(f"compat-{seed}")  # a stream of its own: the seed's other draws stand
    styles = tuple(
        (n, more.choice(COMPAT_STYLES) if s == "attr" and n in ON_PL and more.random() < 0.3 else s) for n, s in styles
    )
    inc = rng.choice(["position", "keyword", "default"])
    keyword = "dec" if parse(env) < WAIT_VALUE_KEYWORD_FROM else "value"
    amount = rng.choice(["position", keyword, f"partial-{keyword}"] + (["default"] if inc == "default" else []))
    member, root_floor = "", "0.12.1"
    if declaration.floor is not None and rng.random() < 0.15:  # a monorepo: the floor is the member's
        member = rng.choice(["member", "libs/ring"])
        root_floor = rng.choice([r for r in ("0.7.2", "0.10.2", "0.12.1") if parse(r) > parse(declaration.runs_on)])
    return Plan(
        seed,
        declaration,
        layout,
        uses,
        styles,
        inc,
        amount,
        rng.choice(list(TPU_IMPORTS)),
        rng.choice(["pl", "pl", "from"]),
        rng.random() < 0.5,
        layout != "module" and rng.random() < 0.4,
        rng.choice(["line", "line", "lines", "lines-comment"]),
        rng.random() < 0.2,
        rng.choice(["position", "position", "keyword", "none"]),
        member,
        root_floor,
    )


def generate(seed: int) -> Project:
    """Project `seed`: the same seed gives the same project."""
    return build(plan_for(seed))


def simpler(plan: Plan) -> list[Plan]:
    """Plans one step plainer: a use dropped, a style made `attr`, a plainer layout, call or
    declaration (the shrinker keeps each that still fails the same way)."""
    found = [
        replace(
            plan,
            uses=tuple(u for u in plan.uses if u != use),
            styles=tuple(s for s in plan.styles if s[0] != USES[use]),
        )
        for use in plan.uses
        if use in OPTIONAL
    ]
    found += [
        replace(plan, styles=tuple((n, "attr" if n == name else s) for n, s in plan.styles))
        for name, style in plan.styles
        if style != "attr"
    ]
    plain = {
        "helper": False,
        "layout_call": "line",
        "mesh_const": False,
        "launch": "pl",
        "tpu_import": "from-as",
        "relative": False,
        "inc": "position",
        "remote_form": "position",
        "member": "",
    }
    found += [replace(plan, **{key: value}) for key, value in plain.items() if getattr(plan, key) != value]
    if plan.amount.startswith("partial"):
        found.append(replace(plan, amount=plan.amount.partition("-")[2]))
    elif plan.amount not in ("position", "default"):
        found.append(replace(plan, amount="position"))
    if plan.layout == "namespace" or (plan.layout == "package" and not any(s == "init" for _, s in plan.styles)):
        found.append(replace(plan, layout="module"))
    floor = plan.declaration.floor
    if plan.declaration.form != "project >=" and floor is not None:
        found.append(replace(plan, declaration=declare("project >=", floor, random.Random(0))))
    return found


__all__ = ["FLOOR_ENVS", "Module", "Plan", "Project", "build", "generate", "plan_for", "simpler"]
