"""One place for every agent: a permission waiting in a notebook in the background shows
in the agents sidebar, on the notebook's tab and in the page's title, and one click on the
sidebar brings the notebook forward with its card in view (JupyterLab); Notebook 7 shows
the title's count."""

from __future__ import annotations

import re

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

#: Cells after the waiting one: enough to scroll its card far out of view.
FILLER = ["# a later cell\n" + "\n".join(f"x{i} = {i}" for i in range(12))] * 12
WAITING = "waiting.ipynb"
TITLE_COUNT = re.compile(r"^\(1\) ⏳ ")


def ask_for_permission(notebook: NotebookPage) -> None:
    """Open the notebook WAITING and run its ``%acp /edit`` until its card waits."""
    (notebook.dir / "utils.py").write_text("def add(a, b):\n    return a + b\n")
    notebook.write(["%load_ext acp_notebook", "%acp /edit utils.py", *FILLER], name=WAITING)
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)
    notebook.run_cell(1)
    card = notebook.output(1).locator(".acp-permission-card")
    expect(card).to_be_visible(timeout=TURN_TIMEOUT_MS)


def test_a_permission_waiting_in_a_background_notebook_is_one_click_away(
    notebook: NotebookPage,
) -> None:
    page = notebook.page
    notebook.write(["print('another notebook')"], name="other.ipynb")
    ask_for_permission(notebook)
    notebook.cell(len(FILLER) + 1).scroll_into_view_if_needed()  # the card out of view
    # Another notebook comes forward: the waiting one is a tab in the background.
    page.locator(".jp-DirListing-item", has_text="other.ipynb").dblclick()
    expect(page.locator(".lm-TabBar-tab.lm-mod-current", has_text="other.ipynb")).to_be_visible()

    tab = page.locator(".lm-TabBar-tab", has_text=WAITING)
    expect(tab).to_have_class(re.compile(r"\bacp-notebook-waiting\b"))
    expect(page).to_have_title(TITLE_COUNT)
    page.locator('.jp-SideBar.jp-mod-right .lm-TabBar-tab[title="Agents (acp_notebook)"]').click()
    sidebar = page.locator("#acp-notebook-agents")
    row = sidebar.locator('li[data-state="waiting_permission"]')
    expect(row).to_contain_text("demo · default")
    expect(row).to_contain_text("waiting for permission")
    expect(sidebar).to_contain_text(WAITING)
    notebook.shot("sidebar-and-badge")

    row.get_by_role("button", name="Show the card").click()
    expect(page.locator(".lm-TabBar-tab.lm-mod-current", has_text=WAITING)).to_be_visible()
    card = notebook.output(1).locator(".acp-permission-card")
    expect(card.get_by_role("button", name="Allow once", exact=True)).to_be_in_viewport()
    notebook.shot("card-brought-into-view")

    card.get_by_role("button", name="Allow once", exact=True).click()
    expect(sidebar.locator('li[data-state="idle"]')).to_contain_text(
        "demo · default", timeout=TURN_TIMEOUT_MS
    )
    expect(tab).not_to_have_class(re.compile(r"\bacp-notebook-waiting\b"))
    expect(page).not_to_have_title(TITLE_COUNT)


def test_notebook_7_counts_the_waiting_permission_in_the_title(notebook: NotebookPage) -> None:
    (notebook.dir / "utils.py").write_text("def add(a, b):\n    return a + b\n")
    notebook.write(["%load_ext acp_notebook", "%acp /edit utils.py"], name=WAITING)
    page = notebook.page
    page.goto(notebook.lab.url(f"/notebooks/{notebook.rel}"))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    notebook.wait_kernel_idle()
    notebook.run_cell(0)
    notebook.wait_done(0)
    notebook.run_cell(1)
    card = notebook.output(1).locator(".acp-permission-card")
    expect(card).to_be_visible(timeout=TURN_TIMEOUT_MS)

    expect(page).to_have_title(TITLE_COUNT)
    notebook.shot("notebook7-title")
    card.get_by_role("button", name="Allow once", exact=True).click()
    notebook.wait_done(1)
    expect(page).not_to_have_title(TITLE_COUNT)
