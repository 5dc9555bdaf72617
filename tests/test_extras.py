"""`pip install -e ".[test]"` installs everything the tests import.

The `nbconvert` of the undo tests and the `jupyterlab` of the kernelspec tests were once
installed only because `./dev test` asked for more extras than `[test]`: a contributor who
followed pyproject.toml met import errors. This reads every import in ``tests/`` (and the
modules the tests import by name, ``import_or_skip("playwright.sync_api", …)``), finds the
distribution that provides each, and checks that the runtime dependencies and the
``[test]`` extra bring it, directly or through what they require.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
#: This repository's packages (a name under acp_notebook that does not exist is how
#: tests/test_skip_or_fail.py tries a missing module).
OURS = {"acp_notebook", "tests", "benchmarks", "conftest"}
#: Helpers that import a module given by name.
IMPORTERS = {"import_or_skip", "importorskip", "import_module"}

tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> dict[str, str]:
    """Top-level module → the first test file importing it, outside the standard library
    and this repository."""
    found: dict[str, str] = {}
    local = {path.stem for path in (ROOT / "tests").rglob("*.py")}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) in IMPORTERS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if (
                    top in sys.stdlib_module_names
                    or top in OURS
                    or top in local
                    or top.startswith("acp_notebook")
                ):
                    continue
                found.setdefault(top, path.relative_to(ROOT).as_posix())
    return found


def installed_by_test_extra() -> set[str]:
    """Every distribution that installing the package with ``[test]`` brings: its runtime
    dependencies and the extra as pyproject.toml states them, then, through the installed
    distributions' metadata, what each of those requires."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    name = _normal(project["name"])
    wanted: list[Requirement] = [Requirement(r) for r in project["dependencies"]]
    seen_extras: set[str] = set()
    todo = ["test"]
    while todo:
        extra = todo.pop()
        if extra in seen_extras:
            continue
        seen_extras.add(extra)
        for line in extras[extra]:
            requirement = Requirement(line)
            if _normal(requirement.name) == name:
                todo.extend(requirement.extras)
            else:
                wanted.append(requirement)
    brought: set[str] = set()
    while wanted:
        requirement = wanted.pop()
        dist = _normal(requirement.name)
        if dist in brought:
            continue
        brought.add(dist)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            sub = Requirement(line)
            chosen = [{"extra": e} for e in requirement.extras] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(env) for env in chosen):
                wanted.append(sub)
    return brought


def test_every_module_the_tests_import_is_installed_by_the_test_extra() -> None:
    providers = metadata.packages_distributions()
    brought = installed_by_test_extra()
    missing = []
    for module, where in sorted(imported_modules().items()):
        dists = {_normal(d) for d in providers.get(module, [])}
        if not dists & brought:
            missing.append(
                f"{module} (imported in {where}; from {sorted(dists) or 'nothing installed'})"
            )
    assert not missing, "not installed by acp-notebook[test]: " + "; ".join(missing)


def test_the_check_sees_the_imports_it_must_see() -> None:
    # Control: the reader finds third-party imports of every form, so the check above can fail.
    modules = imported_modules()
    assert {"pytest", "nbformat", "hypothesis", "playwright", "nbconvert"} <= set(modules)
    assert "os" not in modules and "acp_notebook" not in modules
