"""The house's floors (docs/architecture.md, issue 28), checked on the source itself: what
import-linter's contracts in pyproject.toml do not say. No import circle among the product's
modules (imports inside functions count; those under `if TYPE_CHECKING:` do not), no module
over 600 lines, no function over 60, at most five modules loose in `timekeeping/`, every
package on a floor of the contract, and every path and dotted name the docs give exists."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("timekeeping", "calendars", "money", "config")
MODULE_LINES, FUNCTION_LINES, LOOSE = 600, 60, 5


def _modules() -> dict[str, Path]:
    found = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[dotted.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped, found = _type_checking_nodes(tree), set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(_resolve(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package
                for _ in range(node.level - 1):
                    parent = parent.rpartition(".")[0]
                base = f"{parent}.{base}".rstrip(".")
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else _resolve(base))
    return {name for name in found if name and name != module}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, circles, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circle_among_the_products_modules():
    graph = {module: _imports(module, path) for module, path in MODULES.items()}
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_over_600_lines_and_no_function_over_60():
    long = []
    for module, path in MODULES.items():
        text = path.read_text()
        if text.count("\n") > MODULE_LINES:
            long.append(f"{module}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno] + [each.lineno for each in node.decorator_list])
                if node.end_lineno - first + 1 > FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {node.end_lineno - first + 1} lines")
    assert long == []


def test_at_most_five_modules_stay_loose_in_timekeeping():
    loose = sorted(path.name for path in (ROOT / "timekeeping").glob("*.py")
                   if path.name != "__init__.py")
    assert len(loose) <= LOOSE, loose


def _floors() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(contract["layers"] for contract in config["contracts"]
                  if contract["type"] == "layers")
    return [{name.strip() for name in re.split(r"[|:]", layer)} for layer in layers]


def test_every_package_of_the_product_is_on_a_floor():
    named = set().union(*_floors())
    tops = {".".join(module.split(".")[:2]) for module in MODULES
            if module.startswith("timekeeping.")}
    assert sorted(tops - named) == []
    assert {"config", "calendars", "money"} <= named


DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
PATH = re.compile(r"(?<![\w/.-])((?:timekeeping|calendars|money|config|tests|bench|deploy)"
                  r"/[\w/.-]*\w)")
DOTTED = re.compile(r"(?<![\w/.-])((?:timekeeping|calendars|money)(?:\.[A-Za-z_]\w*)+)(?![\w/])")
FILES = (".md", ".py", ".html", ".txt")
CHECK_ID = re.compile(r"timekeeping\.[EW]\d{3}")  # a system check's id (docs/schedules.md)


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_path_a_doc_names_exists(doc):
    missing = sorted({match for match in PATH.findall(doc.read_text())
                      if not (ROOT / match).exists()})
    assert missing == []


def _exists(dotted: str) -> bool:
    """A module, or a name in one; or an operation registered under that name; or a model's
    label (`timekeeping.subject`, a section of a brand's export)."""
    from django.apps import apps

    from timekeeping.timers.delays import get_operation

    try:
        get_operation(dotted)
        return True
    except LookupError:
        pass
    try:
        apps.get_model(dotted)
        return True
    except (LookupError, ValueError):
        pass
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_module_and_function_a_doc_names_exists(doc):
    names = {match for match in DOTTED.findall(doc.read_text())
             if not match.endswith(FILES) and not CHECK_ID.fullmatch(match)}
    assert sorted(name for name in names if not _exists(name)) == []
