"""What a ``%acp`` prompt carries besides its words: the notebook as context.

    prompt = notebook_prompt(shell, "refactor this function", cells=True)
    blocks = prompt.blocks(agent_capabilities.prompt_capabilities)

An :class:`Attachment` is one thing sent with the words: the code above the ``%acp``
line, the most recently executed code cell (``cells.py``), the last error (``--fix``),
each live value a ``{name}`` names (``{df}``, ``{df.col}``, ``{d['key']}``,
``{In[3]}``, ``{Out[3]}``; summarised for its type by ``summaries``), and the cell the
extension's Fix button or Ask about this cell is about (its selected lines marked). The
open notebook's path goes as a ``resource_link`` (as text to an agent without
``embeddedContext``).

Blocks follow the agent's ``promptCapabilities``: an embedded resource where
``embeddedContext`` is accepted, the same text inline otherwise; a picture as an image
block only where ``image`` is. Each attachment's first block carries its label and notes
in ``_meta["acpNotebook"]``, from which the turn's view and its transcript list what was
sent ("Sent: cell [4] (5 lines) · `df` DataFrame 3×2", ``client/render.py``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...client.sent import ATTACHMENT_META
from ...protocol import models as m
from ..summaries import NOT_FOUND, Summary, resolve, summarise
from ..summaries.model import count, cut_head, cut_text, fence
from . import cells

if TYPE_CHECKING:
    from ..frontend.protocol import Ask
    from .cell_log import CellLog

#: ``{{``, ``}}`` (literal braces), or ``{expression}`` without braces inside it.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}\n]+)\}")
#: The prompt ``--fix`` sends when given none.
FIX_PROMPT = "Explain this error and fix it."


def all_accepted() -> m.PromptCapabilities:
    """What ``--dry-run`` assumes when the agent has not started yet. Built when asked:
    a model built at import builds its validator (and pays pydantic's plugin scan) while
    the first ``%acp`` imports the notebook layer, which a prompt turn does not need."""
    return m.PromptCapabilities(embedded_context=True, image=True)


@dataclass(frozen=True)
class Attachment:
    """One thing sent with the prompt's words: where it comes from and what it says."""

    #: ``notebook://cells/4``, ``notebook://variables/df``, ``notebook://error``.
    uri: str
    #: Its text, label ("cell [4] (5 lines)", "DataFrame 3×2"), picture and notes; named
    #: (``df``) for a variable.
    summary: Summary

    def blocks(self, accepts: m.PromptCapabilities) -> list[m.ContentBlock]:
        """Its blocks for an agent that accepts ``accepts``; the first carries the meta."""
        summary = self.summary
        notes = list(summary.notes)
        image: list[m.ContentBlock] = []
        if summary.png is not None:
            if accepts.image:
                data = base64.b64encode(summary.png).decode("ascii")
                image.append(m.ImageContentBlock(data=data, mime_type="image/png"))
            else:
                notes.append("its picture was left out: the agent does not accept images")
        meta = {ATTACHMENT_META: {"label": summary.label, "name": summary.name, "notes": notes}}
        first: m.ContentBlock
        if accepts.embedded_context:
            resource = m.TextResourceContents(
                uri=self.uri, mime_type=summary.mime_type, text=summary.text
            )
            first = m.EmbeddedResourceContentBlock(resource=resource, field_meta=meta)
        else:
            first = m.TextContentBlock(text=self.inline_text(notes), field_meta=meta)
        return [first, *image]

    def inline_text(self, notes: list[str]) -> str:
        """The same text for an agent without ``embeddedContext``."""
        summary = self.summary
        what = f"`{summary.name}` ({summary.label})" if summary.name else summary.label
        said = "".join(f"\n(note: {note})" for note in notes)
        if summary.mime_type in ("text/markdown", "text/plain"):
            return f"Attached {what} [{self.uri}]:{said}\n\n{summary.text}"
        return f"Attached {what} [{self.uri}]:{said}\n{fence(summary.text)}"


@dataclass(frozen=True)
class NotebookPrompt:
    """A prompt's words, its attachments and the open notebook's path."""

    text: str
    attachments: tuple[Attachment, ...] = ()
    #: The open notebook (absolute), sent as a ``resource_link`` or a line of text.
    notebook: str | None = None
    #: Names the prompt mentioned that name nothing (left as typed).
    unknown: tuple[str, ...] = field(default=())
    #: Why no notebook is sent although a server started the kernel (``located.py``).
    unseen: str | None = None

    @property
    def unknown_note(self) -> str | None:
        """The sentence that tells the user which ``{names}`` named nothing, so nothing
        was attached for them (None when every one named a value). They stay in the
        words as typed, braces and all: the agent reads what the user wrote, and may ask."""
        if not self.unknown:
            return None
        names = [f"{{{name}}}" for name in self.unknown]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        verb, them = ("names", "it") if len(names) == 1 else ("name", "them")
        return (
            f"{listed} {verb} no value in this kernel, so no value was sent for {them}; "
            f"the prompt keeps {them} as typed, braces included (define the value and run "
            "the line again, or double the braces, {{…}}, to mean them literally)."
        )

    def blocks(self, accepts: m.PromptCapabilities) -> list[m.ContentBlock]:
        out: list[m.ContentBlock] = [m.TextContentBlock(text=self.text)]
        for attachment in self.attachments:
            out.extend(attachment.blocks(accepts))
        if self.notebook is not None:
            out.append(self.notebook_block(self.notebook, accepts))
        return out

    @staticmethod
    def notebook_block(notebook: str, accepts: m.PromptCapabilities) -> m.ContentBlock:
        """The open notebook: a ``resource_link`` without a MIME type where the agent
        accepts embedded context, a line of text otherwise. Agents turn a typed link
        into a file part of that type, which their model's provider may refuse
        (opencode's refuses ``application/x-ipynb+json``, failing the whole prompt);
        untyped, each agent reads the path as it reads any file."""
        path = Path(notebook)
        title = "The open notebook (edit it with the notebook tools, not by writing the file)"
        # Its name alone ("notebook.ipynb"), never "notebook notebook.ipynb".
        meta = {ATTACHMENT_META: {"label": f"link to {path.name}"}}
        if not accepts.embedded_context:
            return m.TextContentBlock(text=f"{title}: {path}", field_meta=meta)
        return m.ResourceLinkContentBlock(
            uri=path.as_uri(), name=path.name, title=title, field_meta=meta
        )


def _variable(summary: Summary) -> Attachment:
    return Attachment(f"notebook://variables/{summary.name}", summary)


def _text(uri: str, label: str, text: str, notes: tuple[str, ...] = ()) -> Attachment:
    """A cell or an error: Markdown with no name."""
    return Attachment(uri, Summary(None, label, text, "text/markdown", notes=notes))


def attach_variables(
    prompt: str, namespace: Mapping[str, Any]
) -> tuple[str, list[Attachment], list[str]]:
    """Replace each ``{expression}`` that names a value by `` `expression` `` and
    summarise the value; the rest stays as typed. The prompt's text, the attachments,
    and the expressions that named nothing."""
    text, attached, unknown = _attach_variables(prompt, namespace)
    return text, [attachment for attachment, _ in attached], unknown


def _attach_variables(
    prompt: str, namespace: Mapping[str, Any]
) -> tuple[str, list[tuple[Attachment, object]], list[str]]:
    """:func:`attach_variables`, each attachment with the value it summarises."""
    found: dict[str, tuple[Attachment, object]] = {}
    unknown: list[str] = []

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        expression = match.group(1).strip()
        if expression not in found:
            value = resolve(expression, namespace)
            if value is NOT_FOUND:
                unknown.append(expression)
                return token
            found[expression] = (_variable(summarise(value, expression)), value)
        return f"`{expression}`"

    return _PLACEHOLDER.sub(replace, prompt), list(found.values()), unknown


def _cell_attachment(cell: cells.CellText, uri: str, label: str | None = None) -> Attachment:
    return _text(uri, label or cells.cell_label(cell), cell.text, cell.notes)


def _asked_error(about: Ask, error: str) -> Attachment:
    """Fix: the error output the button was on, with the code of its cell."""
    text, cut = cut_head(error.rstrip(), cells.TRACEBACK_CHARS)
    code, cut_code = cut_text(about.source.rstrip(), cells.CELL_CHARS)
    body = cells.error_text(text, about.label, code) + _cell_id_line(about)
    notes = [f"the traceback was cut to its {cut}"] if cut else []
    notes += [f"the cell was cut to its {cut_code}"] if cut_code else []
    last = error.strip().splitlines()[-1] if error.strip() else ""
    name = last.split(":", 1)[0].strip()
    what = f"error {name}" if name.isidentifier() else "the error"
    return _text("notebook://error", f"{what} in {about.label}", body, tuple(notes))


def _asked_cell(about: Ask) -> Attachment:
    """Ask about this cell: the cell, or its selected lines marked as such (with the
    whole cell after them, for context)."""
    code, cut = cut_text(about.source.rstrip(), cells.CELL_CHARS)
    notes = (f"the cell was cut to its {cut}",) if cut else ()
    selected = about.selected()
    uri = f"notebook://cells/{about.cell_id}"
    if selected is None or about.lines is None:
        body = f"Asked about {about.label}:\n{fence(code, 'python')}" + _cell_id_line(about)
        label = f"{about.label} ({count(len(about.source.splitlines()), 'line')})"
        return _text(uri, label, body, notes)
    first, last = about.lines
    where = f"line {first}" if first == last else f"lines {first}–{last}"
    body = (
        f"Asked about {where} of {about.label}, selected:\n{fence(selected, 'python')}\n\n"
        f"The whole cell:\n{fence(code, 'python')}" + _cell_id_line(about)
    )
    return _text(uri, f"{where} of {about.label} (selected)", body, notes)


def _cell_id_line(about: Ask) -> str:
    return f"\n\nIts id for the notebook tools is `{about.cell_id}`."


class NoError(Exception):
    """``--fix`` with no error to fix; the message is one sentence for the user."""


def notebook_prompt(
    log: CellLog | None,
    text: str,
    *,
    cells_too: bool = True,
    fix: bool = False,
    about: Ask | None = None,
) -> NotebookPrompt:
    """The prompt ``text`` with its context from the kernel whose cells ``log`` follows:
    the variables it names, and (``cells_too``) the code above it, the last code cell and
    the notebook's path; ``fix`` adds the last error and its cell (raises
    :class:`NoError` without one). ``about``: the cell the page asks about (its Fix
    button, Ask about this cell), sent in place of the last code cell and, for a Fix,
    with the error the button was on in place of the last error."""
    if fix and not text.strip():
        text = FIX_PROMPT
    if log is None:
        return NotebookPrompt(text)
    shell = log.shell
    attachments: list[Attachment] = []
    if about is not None:
        fixing = fix and about.error is not None
        asked = _asked_error(about, about.error or "") if fixing else _asked_cell(about)
        attachments.append(asked)
        fix = fix and not fixing
    if fix:
        error = cells.last_error(log)
        if error is None:
            raise NoError("No cell has raised an error yet, so --fix has nothing to send.")
        where = f" in cell [{error.number}]" if error.number is not None else ""
        attachments.append(
            _cell_attachment(error, "notebook://error", f"error {error.error}{where}")
        )
    words, named, unknown = _attach_variables(text, shell.user_ns)
    variables = [attachment for attachment, _ in named]
    # A value both named and shown as the last cell's result is sent once, as named.
    named_values = {id(value): attachment.summary.name or "" for attachment, value in named}
    located = None
    if cells_too:
        above = cells.code_above(log.running)
        if above is not None:
            label = cells.cell_label(above, "code above")
            attachments.append(_cell_attachment(above, "notebook://cells/current", label))
        last = cells.last_code_cell(log, named_values) if about is None else None
        if last is not None and not (fix and log.last_code is log.raised):  # sent already
            label = cells.cell_label(last) + (f", raised {last.error}" if last.error else "")
            where = str(last.number) if last.number is not None else "last"
            attachments.append(_cell_attachment(last, f"notebook://cells/{where}", label))
        located = cells.notebook_located(shell)
    return NotebookPrompt(
        words,
        (*attachments, *variables),
        located.file if located else None,
        tuple(unknown),
        located.unseen if located else None,
    )
