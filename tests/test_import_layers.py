"""The package's import graph, read from its source with ``ast``: no module imports itself back,
the offline reader and the write path reach each other only through the composition root, the
shared text matchers are a leaf, and storage does not import the write path.

An edge is every ``import`` and ``from … import`` of a ``persona_memory`` module anywhere in a
file (in a function too, and under ``TYPE_CHECKING``): ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``. For cycles, importing ``a.b.c`` is also an
edge to the packages ``a.b`` it runs the ``__init__`` of (not the root package, which is
always already importing, nor the importer's own packages).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import persona_memory

PACKAGE = Path(persona_memory.__file__).parent

# The known remaining violations: storage's query modules and the store import each other (the
# store imports them last, at its end), and storage/writes.py takes the write plan it posts
# from the write path. They are allowed here by name, so that any new edge of either kind
# fails; remove an entry when its edge is gone.
KNOWN_STORAGE_CYCLE_EDGES = frozenset({
    ("persona_memory.storage.store", "persona_memory.storage.humans"),
    ("persona_memory.storage.store", "persona_memory.storage.writes"),
})
KNOWN_STORAGE_TO_WRITE = frozenset({
    ("persona_memory.storage.writes", "persona_memory.write.plan"),
})

FORBIDDEN = (
    # (importer's package, imported package, why)
    ("persona_memory.minds.offline", "persona_memory.write",
     "the offline reader is an adapter: what it shares with the write path lives in persona_memory.text"),
    ("persona_memory.write", "persona_memory.minds.offline",
     "the write path reaches the offline reader through its ports, composed in persona_memory/compose.py"),
    ("persona_memory.storage", "persona_memory.write", "storage stores values; it does not import the write path"),
)

Edges = dict[str, set[str]]


def modules_of(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under ``root`` (a package directory) by dotted name: its file and whether
    it is a package's ``__init__``."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def imports_of(root: Path) -> Edges:
    """The modules each module under ``root`` imports (see the module docstring)."""
    modules = modules_of(root)
    top = root.name
    edges: Edges = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name == top or a.name.startswith(top + "."))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target != top and not target.startswith(top + "."):
                    continue
                for alias in node.names:
                    submodule = f"{target}.{alias.name}"
                    out.add(submodule if submodule in modules else target)
        edges[name] = {m for m in out if m in modules and m != name}
    return edges


def with_packages_run(edges: Mapping[str, set[str]], top: str) -> Edges:
    """``edges`` plus, for each imported module, the packages between it and ``top`` whose
    ``__init__`` the import runs (not the importer's own)."""
    out: Edges = {}
    for name, targets in edges.items():
        more = set(targets)
        for target in targets:
            parts = target.split(".")
            for i in range(2, len(parts)):
                package = ".".join(parts[:i])
                if package in edges and package != name and not name.startswith(package + "."):
                    more.add(package)
        out[name] = more
    return out


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def forbidden_edges(edges: Mapping[str, set[str]], allowed: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Each edge ``FORBIDDEN`` names, not in ``allowed``, as a sentence."""
    allowed = set(allowed)
    found = []
    for name in sorted(edges):
        for target in sorted(edges[name]):
            for source, imported, why in FORBIDDEN:
                if within(name, source) and within(target, imported) and (name, target) not in allowed:
                    found.append(f"{name} imports {target}: {why}")
    return found


def leaf_breaches(edges: Mapping[str, set[str]], leaf: str) -> list[str]:
    """Each import from inside the ``leaf`` package of a module outside it."""
    return [
        f"{name} imports {target}: {leaf} imports nothing of the package outside it"
        for name in sorted(edges) if within(name, leaf)
        for target in sorted(edges[name]) if not within(target, leaf)
    ]


def cycles(edges: Mapping[str, set[str]], allowed: Iterable[tuple[str, str]] = ()) -> list[list[str]]:
    """One cycle (its modules in import order, the first again at the end) through each group
    of modules that import each other, leaving out the ``allowed`` edges."""
    allowed = set(allowed)
    graph = {n: sorted(t for t in ts if (n, t) not in allowed and t in edges) for n, ts in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):  # Tarjan's strongly connected components, without recursion
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    found = []
    for group in groups:
        first = min(group)
        path, seen = [first], {first}
        while True:  # walk inside the group until a module repeats
            step = next(t for t in graph[path[-1]] if t in group)
            if step in seen:
                found.append(path[path.index(step):] + [step])
                break
            path.append(step)
            seen.add(step)
    return sorted(found)


def test_no_module_imports_itself_back() -> None:
    edges = with_packages_run(imports_of(PACKAGE), PACKAGE.name)
    assert [" -> ".join(c) for c in cycles(edges, KNOWN_STORAGE_CYCLE_EDGES)] == []


def test_the_reader_the_write_path_and_storage_import_only_down() -> None:
    assert forbidden_edges(imports_of(PACKAGE), KNOWN_STORAGE_TO_WRITE) == []


def test_the_shared_text_matchers_are_a_leaf() -> None:
    edges = imports_of(PACKAGE)
    assert {"persona_memory.text.folded", "persona_memory.text.secrets"} <= edges.keys()
    assert leaf_breaches(edges, "persona_memory.text") == []


def test_the_walker_sees_the_imports_it_checks() -> None:
    edges = imports_of(PACKAGE)
    assert "persona_memory.write.route_index" in edges["persona_memory.write.routing"]  # from .x import y
    assert "persona_memory.text.folded" in edges["persona_memory.minds.offline.route"]  # from ...x.y import z
    assert "persona_memory.minds.offline.slots" in edges["persona_memory.compose"]
    assert KNOWN_STORAGE_TO_WRITE | KNOWN_STORAGE_CYCLE_EDGES <= {(n, t) for n, ts in edges.items() for t in ts}


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "persona_memory"


def test_a_new_cycle_or_a_forbidden_import_is_reported(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "persona_memory/__init__.py": "",
        "persona_memory/write/__init__.py": "",
        "persona_memory/write/routing.py": "from . import plan\n",
        "persona_memory/write/plan.py": "def f():\n    from .routing import x\n",  # a cycle, inside a function
        "persona_memory/write/guards.py": "from ..minds.offline.sentences import cut\n",
        "persona_memory/minds/__init__.py": "",
        "persona_memory/minds/offline/__init__.py": "from .sentences import cut\n",
        "persona_memory/minds/offline/sentences.py": "import persona_memory.write.guards as g\n",
        "persona_memory/storage/__init__.py": "",
        "persona_memory/storage/writes.py": "from persona_memory.write import plan\n",
        "persona_memory/text/__init__.py": "",
        "persona_memory/text/names.py": "from .. import storage\n",
    })
    edges = imports_of(package)
    assert cycles(with_packages_run(edges, "persona_memory")) == [
        ["persona_memory.minds.offline", "persona_memory.minds.offline.sentences", "persona_memory.write.guards",
         "persona_memory.minds.offline"],
        ["persona_memory.write.plan", "persona_memory.write.routing", "persona_memory.write.plan"],
    ]
    assert forbidden_edges(edges) == [
        "persona_memory.minds.offline.sentences imports persona_memory.write.guards: "
        "the offline reader is an adapter: what it shares with the write path lives in persona_memory.text",
        "persona_memory.storage.writes imports persona_memory.write.plan: "
        "storage stores values; it does not import the write path",
        "persona_memory.write.guards imports persona_memory.minds.offline.sentences: "
        "the write path reaches the offline reader through its ports, composed in persona_memory/compose.py",
    ]
    assert forbidden_edges(edges, {("persona_memory.storage.writes", "persona_memory.write.plan")})[1].startswith(
        "persona_memory.write.guards"
    )
    assert leaf_breaches(edges, "persona_memory.text") == [
        "persona_memory.text.names imports persona_memory.storage: persona_memory.text imports nothing of the "
        "package outside it"
    ]
