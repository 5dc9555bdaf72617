/**
 * The notebook's own ways to start a turn about a cell, while the kernel has
 * acp_notebook loaded (the live link is connected): a **Fix** button under an error
 * output, and **Ask about this cell** (context menu, Accel K) with a small prompt box.
 * Both write a `%acp` cell below the cell and run it, the cell (or its selected lines,
 * or the error) going with the execute request (./asking.ts); the agent's edits are
 * then proposed in that cell like any cell edit.
 */

import { InputDialog, Notification } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import {
  acpSource,
  ASK_METADATA,
  askedLabel,
  askMessage,
  errorOf,
  FIX_SOURCE,
  fixable,
  IAsk,
  selectedLines
} from './asking';
import { cellIndex } from './cells';
import { StaleNote } from './stale';
import { button, element } from './view';

const NOT_LOADED =
  "The agent is not loaded in this notebook's kernel: run %load_ext acp_notebook in a cell first.";

const PLACEHOLDER =
  'What should the agent do? (its edits are proposed in the cell)';

export class CellActions {
  private _fixes = new Map<Cell, FixBar>();
  private _watched = new WeakSet<ICellModel>();
  private _observer: MutationObserver;
  private _disposed = false;

  constructor(private readonly _panel: NotebookPanel) {
    // The live link marks the panel while the kernel's acp_notebook is connected.
    this._observer = new MutationObserver(() => this._refresh());
    this._observer.observe(_panel.node, {
      attributes: true,
      attributeFilter: ['data-acp-live']
    });
    _panel.content.modelContentChanged.connect(this._refresh, this);
    this._refresh();
  }

  get connected(): boolean {
    return this._panel.node.dataset.acpLive === 'connected';
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._observer.disconnect();
    this._panel.content.modelContentChanged.disconnect(this._refresh, this);
    this._fixes.forEach(bar => bar.dispose());
  }

  /** Ask about `cell` (default: the active one), or its selected lines: the prompt box,
   * then the `%acp` cell below it. `suggested` fills the box. */
  async ask(cell?: Cell, suggested = ''): Promise<void> {
    const target = cell ?? this._panel.content.activeCell;
    if (target === null || target === undefined) {
      return;
    }
    if (!this.connected) {
      Notification.warning(NOT_LOADED, { autoClose: 8000 });
      return;
    }
    const ask = this._ask(target, null);
    if (ask === null) {
      return;
    }
    const answer = await InputDialog.getText({
      title: `Ask the agent about ${askedLabel(ask)}`,
      placeholder: PLACEHOLDER,
      text: suggested,
      okLabel: 'Ask'
    });
    const prompt = answer.value?.trim() ?? '';
    if (!answer.button.accept || prompt === '') {
      return;
    }
    await this._run(target, acpSource(prompt), ask);
  }

  /** Fix the error `cell` shows: `%acp --fix` below it, about that cell and error. */
  async fix(cell: CodeCell): Promise<void> {
    const error = errorOf(cell.model.outputs.toJSON());
    if (error === null) {
      return;
    }
    if (!this.connected) {
      Notification.warning(NOT_LOADED, { autoClose: 8000 });
      return;
    }
    const ask = this._ask(cell, error);
    if (ask !== null) {
      await this._run(cell, FIX_SOURCE, ask);
    }
  }

  /** A proposal in `cell` went stale because the cell changed while it waited: say so
   * there, with "Ask again" (the box filled with what the agent meant to do). */
  showStale(cell: Cell, label: string): void {
    // Owned by the cell's layout from here: disposed with the cell, or by its buttons.
    // eslint-disable-next-line jupyter/require-disposable-ownership
    const note = new StaleNote(label, () => void this.ask(cell, label));
    note.showIn(cell);
  }

  /** The cell's `ask`: its selected lines (none for a Fix), its source now. */
  private _ask(cell: Cell, error: string | null): IAsk | null {
    const model = this._panel.content.model;
    const index = model === null ? -1 : cellIndex(model, cell.model.id);
    if (index < 0) {
      return null;
    }
    const selection = error === null ? cell.editor?.getSelection() : undefined;
    return {
      cell_id: cell.model.id,
      index,
      execution_count:
        cell instanceof CodeCell ? (cell.model.executionCount ?? null) : null,
      source: cell.model.sharedModel.getSource(),
      lines:
        selection === undefined
          ? null
          : selectedLines(selection.start, selection.end),
      error
    };
  }

  /** Write `source` in a new code cell below `cell` and run it with `ask`. */
  private async _run(cell: Cell, source: string, ask: IAsk): Promise<void> {
    const notebook = this._panel.content;
    const model = notebook.model;
    const index = model === null ? -1 : cellIndex(model, cell.model.id);
    if (model === null || index < 0) {
      return;
    }
    model.sharedModel.insertCell(index + 1, {
      cell_type: 'code',
      source,
      metadata: {}
    });
    const written = notebook.widgets[index + 1];
    if (!(written instanceof CodeCell)) {
      return;
    }
    notebook.activeCellIndex = index + 1;
    await CodeCell.execute(written, this._panel.sessionContext, {
      [ASK_METADATA]: askMessage(ask)
    }).catch(() => undefined); // the turn's cell shows its own errors
  }

  /** Every code cell with an error output has a Fix button while the link is up. */
  private _refresh(): void {
    if (this._disposed) {
      return;
    }
    const seen = new Set<Cell>();
    for (const cell of this._panel.content.widgets) {
      if (!(cell instanceof CodeCell)) {
        continue;
      }
      if (!this._watched.has(cell.model)) {
        this._watched.add(cell.model);
        cell.model.outputs.changed.connect(() => this._refresh());
      }
      const error =
        this.connected && fixable(cell.model.sharedModel.getSource())
          ? errorOf(cell.model.outputs.toJSON())
          : null;
      if (error !== null) {
        seen.add(cell);
        if (!this._fixes.has(cell)) {
          const bar = new FixBar(() => void this.fix(cell));
          bar.disposed.connect(() => this._fixes.delete(cell));
          this._fixes.set(cell, bar);
          bar.showIn(cell);
        }
      }
    }
    this._fixes.forEach((bar, cell) => {
      if (!seen.has(cell)) {
        bar.dispose();
      }
    });
  }
}

/** Under a cell's error output: the Fix button. */
class FixBar extends Widget {
  constructor(onFix: () => void) {
    super();
    this.addClass('acp-live-fix');
    const fix = button(
      'Fix with the agent',
      'acp-live-fix-button',
      'Ask the agent to explain this error and propose a fix in this cell (%acp --fix)'
    );
    fix.addEventListener('click', onFix);
    this.node.append(fix, element('span', 'acp-live-spacer'));
  }

  /** Under the cell's outputs (before its footer). */
  showIn(cell: Cell): void {
    const layout = cell.layout as PanelLayout;
    layout.insertWidget(Math.max(layout.widgets.length - 1, 0), this);
  }
}
