"""Every kind of transcript entry has a row in every output form: Markdown and streamed
text (``client/``), the saved turn's HTML and the live widgets (``ui/``)."""

from __future__ import annotations

import inspect

from acp_notebook.client import entries
from acp_notebook.client.entry_forms import ENTRY_TYPES, EntryForm
from acp_notebook.client.render import MARKDOWN
from acp_notebook.client.text_stream import TEXT
from acp_notebook.ui.entry_views import WIDGETS
from acp_notebook.ui.transcript_html import HTML


def test_every_entry_type_has_a_row_in_every_output_form() -> None:
    forms = {form.name: form for form in (MARKDOWN, TEXT, HTML, WIDGETS)}
    assert set(EntryForm.forms) == set(forms)  # no form outside this test's sight
    assert {name: form.missing for name, form in forms.items()} == {name: [] for name in forms}
    # And no row for something that is no entry (a kind removed, its rows left behind).
    assert all(set(form.rows) <= set(ENTRY_TYPES) for form in forms.values())


def test_every_entry_class_of_the_transcript_is_an_entry_type() -> None:
    # A kind added to entries.py but not to its ``Entry`` union would escape the check above.
    named = {
        cls
        for name, cls in inspect.getmembers(entries, inspect.isclass)
        if cls.__module__ == entries.__name__ and name.endswith(("Entry", "View"))
    }
    assert named == set(ENTRY_TYPES)
