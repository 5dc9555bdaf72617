"""The live-notebook comm protocol, version 2, between this kernel and the ``acp-notebook``
JupyterLab / Notebook 7 extension (``labextension/src/protocol.ts`` is its other half).

Connecting, whichever side starts first:

* The kernel registers the comm target ``acp_notebook.live`` when ``%load_ext
  acp_notebook`` runs, and opens one comm to the frontend target
  ``acp_notebook.live.announce`` that it keeps open (the *beacon*).
* The extension registers ``acp_notebook.live.announce`` on every kernel of a notebook
  panel. When the beacon arrives, or when a ``comm_info_request`` for that target finds it
  (the notebook was opened, the page reloaded or the kernel restarted after the extension
  loaded), the extension opens its own comm to ``acp_notebook.live``, one per notebook
  document, with ``hello`` as the open data. The kernel answers ``welcome``.
* Either side closing the comm ends the connection; a kernel restart ends it too, and the
  extension then withdraws every proposal it shows.

Every message is a JSON object with ``"v": 2`` and ``"type"``. Requests carry an integer
``id`` that their reply repeats.

=================  ==========  ==========================================================
message            direction   fields
=================  ==========  ==========================================================
``announce``       k → f       beacon open data: ``version`` (acp_notebook's)
``hello``          f → k       live comm open data: ``path`` (server-relative),
                               ``extension_version``, ``app`` ("JupyterLab", "Notebook")
``welcome``        k → f       ``version``; the connection is up
``unsupported``    k → f       ``message``; the kernel then closes the comm
``path``           f → k       ``path``: the notebook was renamed
``list_cells``     k → f       ``id``, ``max_output_chars`` → ``{cells: [cell]}``
``read_cell``      k → f       ``id``, ``cell_id``, ``max_output_chars`` → ``{cell}``
``propose``        k → f       ``id``, ``change``, ``label``: shown in the cell until the user
                               clicks → ``{status: accepted|rejected|stale, cell}``
``apply``          k → f       ``id``, ``change``: applied without asking
                               → ``{status: applied|stale, cell}``
``run_cell``       k → f       ``id``, ``cell_id``, ``source`` (the approved code),
                               ``wait``, ``max_output_chars``
                               → ``{status: ok|error|aborted|started|stale, cell}``
``cancel``         k → f       ``id``: the caller stopped waiting; a proposal is withdrawn
``reply``          f → k       ``id`` and ``result`` (above), or ``error``:
                               ``{code: not_found|invalid|failed, message}``
``review``         k → f       a turn's changes, drawn as a bar in cell ``cell_id`` (the
                               ``%acp`` cell; null: redraw the bar of ``review``):
                               ``review`` (its id), ``changes``, ``revert_all``,
                               ``message`` (what the last Revert did, or null)
``revert``         f → k       a Revert click: ``review``, ``change`` (index; null: Revert
                               all), ``hunk`` (index; null: the whole change),
                               ``revision``; answered by a ``review`` for the same id
``agents``         k → f       ``sessions``: each session of the notebook's agents,
                               ``{agent, session, state: running|waiting_permission|
                               waiting_login|idle, cell_id (its running turn's cell, or
                               null), title, waiting (permission requests)}``; sent when
                               they change and to a page that connects
``ask``            f → k       not on the comm: in the execute request's metadata, under
                               ``acp_notebook``, of a ``%acp`` cell the page wrote below a
                               cell and ran (Fix, Ask about this cell): that cell's
                               ``cell_id``, ``index``, ``execution_count``, ``source``,
                               ``lines`` (``[first, last]``, 1-based, the selected lines;
                               null: the whole cell) and ``error`` (for Fix, the error
                               output as text; else null)
=================  ==========  ==========================================================

``change`` is ``{op: "edit", cell_id, source, expected_source}``,
``{op: "insert", after_id (null: at the top), source, cell_type}`` or
``{op: "delete", cell_id, expected_source}``. ``cell`` is ``{id, index, cell_type, source,
execution_count, outputs_text, truncated}`` (the cell after an accepted edit or insert;
the cell as it is now when stale; null after a delete or a rejection).

A review's ``changes`` are ``{label, target: file|cell, status: changed|new|deleted|
reverted|unavailable, added, removed, revertible, whole, revision, hunks}``; a hunk is
``{header, lines: [{kind: added|removed|context|fold, text, count}]}``. ``revision`` names
the change's current text: a ``revert`` whose revision is not the change's any more (it
was reverted meanwhile) reverts nothing and redraws the bar. Version 2 added ``review``
and ``revert``; ``agents`` came later within version 2 (an extension that does not know a
message type ignores it); ``ask`` needs no new version (a kernel that does not know it
ignores the metadata, and the ``%acp`` line still runs).

Staleness: an edit or a delete carries the source the agent read. If the cell's source
differs when it is proposed, while it is shown, or when Accept is clicked, the answer is
``stale`` and nothing changes — never a merge. A ``run_cell`` carries the source the user
approved; if the cell holds anything else when the page would run it, nothing runs and the
answer is ``stale`` (an agent's edit while the approval waited cannot run unseen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .wire import FRONTEND_TARGET as FRONTEND_TARGET
from .wire import KERNEL_TARGET as KERNEL_TARGET
from .wire import PROTOCOL_VERSION as PROTOCOL_VERSION
from .wire import message as message

CellType = Literal["code", "markdown", "raw"]


class _Reply(BaseModel):
    # Lenient in: a newer extension may add fields. Validators built on first use (a
    # frontend's first message), not when the module is imported.
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class LiveCell(_Reply):
    """A cell of the live document (unsaved edits included), outputs as bounded text."""

    id: str
    index: int
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs_text: str = ""
    #: The outputs were longer than ``max_output_chars`` and were cut.
    truncated: bool = False


class EditOutcome(_Reply):
    """What became of a proposed or applied change."""

    status: Literal["accepted", "rejected", "stale", "applied"]
    #: The cell after the change (edit, insert); as it is now when stale; else None.
    cell: LiveCell | None = None


class RunOutcome(_Reply):
    #: ``stale``: the cell no longer held the approved source, and nothing ran.
    status: Literal["ok", "error", "aborted", "started", "stale"]
    cell: LiveCell


class CellList(_Reply):
    cells: list[LiveCell]


class CellRead(_Reply):
    cell: LiveCell


class Hello(_Reply):
    v: int
    path: str
    extension_version: str = "unknown"
    app: str = "unknown"


class Ask(_Reply):
    """The cell a ``%acp`` cell written by the page asks about (Fix, Ask about this cell)."""

    v: int
    type: Literal["ask"]
    cell_id: str
    index: int
    execution_count: int | None = None
    source: str
    #: The selected lines, first and last, 1-based; None: the whole cell.
    lines: tuple[int, int] | None = None
    #: The error output the Fix button was on, as text (its traceback); None: not a Fix.
    error: str | None = None

    @property
    def label(self) -> str:
        """How the turn names the cell: "cell [4]" (its execution count), else "cell 3"
        (its place)."""
        if self.execution_count is not None:
            return f"cell [{self.execution_count}]"
        return f"cell {self.index + 1}"

    def selected(self) -> str | None:
        """The selected lines' text (None: the whole cell is asked about)."""
        if self.lines is None:
            return None
        first, last = self.lines
        return "\n".join(self.source.split("\n")[first - 1 : last])


@dataclass(frozen=True)
class CellEdit:
    """Replace a cell's source; ``expected_source`` is the source the agent read."""

    cell_id: str
    source: str
    expected_source: str

    def wire(self) -> dict[str, Any]:
        return {
            "op": "edit",
            "cell_id": self.cell_id,
            "source": self.source,
            "expected_source": self.expected_source,
        }


@dataclass(frozen=True)
class CellInsert:
    """A new cell below ``after_id`` (None: at the top)."""

    after_id: str | None
    source: str
    cell_type: CellType = "code"

    def wire(self) -> dict[str, Any]:
        return {
            "op": "insert",
            "after_id": self.after_id,
            "source": self.source,
            "cell_type": self.cell_type,
        }


@dataclass(frozen=True)
class CellDelete:
    cell_id: str
    expected_source: str

    def wire(self) -> dict[str, Any]:
        return {"op": "delete", "cell_id": self.cell_id, "expected_source": self.expected_source}


CellChange = CellEdit | CellInsert | CellDelete


class LiveNotebookError(RuntimeError):
    """A live-notebook call failed; the message is one sentence for the user or agent."""


class NotebookDisconnected(LiveNotebookError):
    """The notebook's comm closed (page closed, kernel restarted, extension unloaded)."""


class LiveTimeout(LiveNotebookError):
    """The notebook did not answer in time."""


class CellNotFound(LiveNotebookError):
    """No cell with that id in the live document."""


def reply_error(data: dict[str, Any], path: str) -> LiveNotebookError:
    """The exception for a ``reply`` carrying ``error``."""
    error = data.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    text = text if isinstance(text, str) and text else "the notebook could not do it"
    if code == "not_found":
        return CellNotFound(text)
    return LiveNotebookError(f"{path}: {text}")


Reply = TypeVar("Reply", bound=_Reply)


def parse(model: type[Reply], result: Any, path: str) -> Reply:
    """``result`` validated as ``model``; a malformed reply is one clear error."""
    try:
        return model.model_validate(result)
    except ValidationError as exc:
        raise LiveNotebookError(
            f"The notebook {path} sent a malformed reply ({exc.error_count()} problems); "
            "update the acp-notebook extension and reload the page."
        ) from None
