"""A layer whose setup broke skips on a developer's machine and fails under ``CI=true``,
so that CI cannot go green with the browser or the real-agent layer missing."""

from __future__ import annotations

import pytest

from .conftest import import_or_skip, skip_or_fail


@pytest.mark.parametrize("ci", ["", "0", "false"])
def test_outside_ci_a_broken_setup_skips_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"):
        skip_or_fail("chromium is not installed")


@pytest.mark.parametrize("ci", ["true", "1", "yes", "TRUE"])
def test_under_ci_a_broken_setup_fails_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match=r"chromium is not installed.*CI=true"):
        skip_or_fail("chromium is not installed")


def test_a_missing_module_is_a_broken_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="playwright is not installed"):
        import_or_skip("acp_notebook_no_such_module", "playwright is not installed")
    monkeypatch.delenv("CI")
    assert import_or_skip("json", "json is missing").dumps([]) == "[]"
