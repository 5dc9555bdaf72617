"""Every file the package's docstrings and the project's Markdown name exists: a reader who
follows a reference lands somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A repository path as prose names it: ``docs/permissions.md``, ``tests/hostile/``…
NAMED = re.compile(
    r"(?<![\w/.-])((?:docs|benchmarks|notebooks|tests|scripts|acp_notebook|labextension)"
    r"/[\w./-]*\w\.(?:md|py|pyi|ipynb|ts|json|png|csv|toml))"
)
#: A relative Markdown link target, without its #fragment.
LINKED = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def sources() -> list[Path]:
    return sorted(
        [
            *ROOT.glob("acp_notebook/**/*.py"),
            *ROOT.glob("*.md"),
            *ROOT.glob("docs/*.md"),
            *ROOT.glob("benchmarks/*.md"),
        ]
    )


def missing(source: Path) -> list[str]:
    text = source.read_text(encoding="utf-8")
    found = [
        name
        for name in NAMED.findall(text)
        if not (ROOT / name).exists() and not (source.parent / name).exists()
    ]
    if source.suffix == ".md":
        found += [
            f"link {target}"
            for target in LINKED.findall(text)
            if not target.startswith(("http:", "https:", "mailto:"))
            and not (source.parent / target).exists()
        ]
    return found


def test_every_file_the_docs_and_docstrings_name_exists() -> None:
    broken = {
        str(source.relative_to(ROOT)): names for source in sources() if (names := missing(source))
    }
    assert not broken, broken


def test_a_missing_file_is_found() -> None:
    # The check itself: a docstring naming a file that is not there is reported.
    assert NAMED.findall("see docs/no-such-page.md and acp_notebook/lab/explain.py") == [
        "docs/no-such-page.md",
        "acp_notebook/lab/explain.py",
    ]
    assert not (ROOT / "docs/no-such-page.md").exists()


#: A docstring or comment that tells which tracker issue asked for the code (``issue 15``)
#: narrates history: what the code holds to is said instead.
HISTORY = re.compile(r"\b[Ii]ssue \d+")


def test_no_docstring_or_comment_cites_an_issue_number() -> None:
    cited = {
        str(path.relative_to(ROOT)): HISTORY.findall(path.read_text(encoding="utf-8"))
        for path in ROOT.glob("acp_notebook/**/*.py")
    }
    assert not {path: found for path, found in cited.items() if found}
    assert HISTORY.findall("a typed answer (issue 11: a '1' typed) approved") == ["issue 11"]
