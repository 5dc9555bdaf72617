/**
 * The review bar: what a turn changed, drawn at the bottom of its `%acp` cell (outside
 * the notebook model: nothing of it is saved). Each file and cell with its counts, its
 * hunks as tinted diffs, a Revert per hunk (per change for a created or deleted one) and
 * Revert all. A click only reports (change index, hunk index, revision); the kernel
 * reverts and answers with the list as it is now, which `draw` shows.
 */

import { Cell, CodeCell } from '@jupyterlab/cells';
import { PanelLayout, Widget } from '@lumino/widgets';

import { IReview, IReviewChange, IReviewHunk, IReviewLine } from './protocol';
import { button, counts, element, renderLine } from './view';

/** A click: `change` null is Revert all; `hunk` null, the whole change. */
export type RevertRequest = (
  change: number | null,
  hunk: number | null,
  revision: string
) => void;

const STATUS_WORDS: Record<string, string> = {
  new: 'new',
  deleted: 'deleted',
  reverted: 'reverted',
  unavailable: 'kept without its old text'
};

export class ReviewBar extends Widget {
  constructor(
    readonly review: string,
    private readonly _request: RevertRequest
  ) {
    super();
    this.addClass('acp-live-review');
  }

  /** Redraw from the kernel's `review` message. */
  draw(data: IReview): void {
    this.node.replaceChildren();
    this.node.classList.remove('acp-mod-busy');
    const header = element('div', 'acp-live-proposal-header');
    header.append(
      element('span', 'acp-live-proposal-title', 'Changed in this turn'),
      element('span', 'acp-live-spacer')
    );
    if (data.revert_all) {
      header.append(
        this._button(
          'Revert all',
          'acp-live-revert-all',
          'Revert every change of this turn that is left (refused if one was changed since)',
          null,
          null,
          ''
        )
      );
    }
    this.node.append(header);
    if (data.forgotten && data.changes.length > 0) {
      this.node.append(
        element(
          'div',
          'acp-live-review-note',
          'The changes of this turn are no longer kept: it cannot be reverted.'
        )
      );
    }
    data.changes.forEach((change, index) =>
      this.node.append(this._change(change, index))
    );
    if (data.message !== null) {
      const said = element('div', 'acp-live-review-message', data.message);
      said.setAttribute('role', 'status');
      this.node.append(said);
    }
  }

  /** At the bottom of `cell`, under its outputs, until they are cleared (the cell runs
   * again, or the user clears them): the bar belongs to the turn they show. */
  showIn(cell: Cell): void {
    const layout = cell.layout as PanelLayout;
    layout.insertWidget(Math.max(layout.widgets.length - 1, 0), this);
    if (cell instanceof CodeCell) {
      const outputs = cell.model.outputs;
      const cleared = () => {
        if (outputs.length === 0) {
          this.dispose();
        }
      };
      outputs.changed.connect(cleared);
      this.disposed.connect(() => outputs.changed.disconnect(cleared));
    }
  }

  private _change(change: IReviewChange, index: number): HTMLElement {
    const node = element('div', 'acp-live-review-change');
    node.dataset.target = change.target;
    node.dataset.status = change.status;
    const row = element('div', 'acp-live-review-row');
    row.append(
      element(
        'span',
        'acp-live-review-kind',
        change.target === 'cell' ? 'Cell' : 'File'
      ),
      element('span', 'acp-live-review-label', change.label)
    );
    const word = STATUS_WORDS[change.status];
    if (word !== undefined) {
      row.append(element('span', 'acp-live-review-status', word));
    }
    if (change.status !== 'reverted' && change.status !== 'unavailable') {
      row.append(...counts(change.added, change.removed));
    }
    row.append(element('span', 'acp-live-spacer'));
    if (change.revertible && change.whole) {
      row.append(this._revert(change, index, null));
    }
    node.append(row);
    change.hunks.forEach((hunk, at) =>
      node.append(this._hunk(change, index, hunk, at))
    );
    return node;
  }

  private _hunk(
    change: IReviewChange,
    index: number,
    hunk: IReviewHunk,
    at: number
  ): HTMLElement {
    const node = element('div', 'acp-live-review-hunk');
    const row = element('div', 'acp-live-review-hunk-header');
    row.append(
      element('span', 'acp-live-review-hunk-range', hunk.header),
      element('span', 'acp-live-spacer')
    );
    if (change.revertible && !change.whole) {
      row.append(this._revert(change, index, at));
    }
    const body = element('div', 'acp-live-diff-lines');
    body.append(...hunk.lines.map(line));
    const diff = element('pre', 'acp-live-diff');
    diff.append(body);
    node.append(row, diff);
    return node;
  }

  private _revert(
    change: IReviewChange,
    index: number,
    hunk: number | null
  ): HTMLButtonElement {
    const what = hunk === null ? change.label : 'this hunk';
    return this._button(
      'Revert',
      'acp-live-revert',
      `Put back ${what} as it was before the turn (refused if changed since)`,
      index,
      hunk,
      change.revision
    );
  }

  private _button(
    label: string,
    className: string,
    title: string,
    change: number | null,
    hunk: number | null,
    revision: string
  ): HTMLButtonElement {
    const node = button(label, className, title);
    node.addEventListener('click', () => {
      // One revert at a time: every button waits for the kernel's answer (a redraw).
      this.node.classList.add('acp-mod-busy');
      this.node
        .querySelectorAll('button')
        .forEach(other => other.setAttribute('disabled', ''));
      this._request(change, hunk, revision);
    });
    return node;
  }
}

/** A hunk's line; a fold here is the rest of a long hunk, which the kernel did not send. */
function line(shown: IReviewLine): HTMLElement {
  if (shown.kind === 'fold') {
    return element(
      'span',
      'acp-live-line acp-live-line-fold',
      `… ${shown.count} more line${shown.count === 1 ? '' : 's'} not shown`
    );
  }
  return renderLine({ kind: shown.kind, text: shown.text });
}
