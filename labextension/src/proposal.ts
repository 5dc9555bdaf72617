/**
 * A proposed change shown in the notebook: what would change, as a diff with added and
 * removed lines tinted, and Accept / Reject. It only shows and reports clicks; the
 * connection decides what a click does. Everything the agent sent is set as text.
 */

import { Cell } from '@jupyterlab/cells';
import { PanelLayout, Widget } from '@lumino/widgets';

import { diffLines, fold, stats } from './diff';
import { Change } from './protocol';
import { button, counts, element, renderLine } from './view';

export type Decision = 'accept' | 'reject';

const TITLES = {
  edit: 'Proposed edit',
  insert: 'Proposed new cell below',
  delete: 'Proposed deletion of this cell'
};

/** The cell class that marks a cell proposed for deletion. */
const DELETE_TARGET = 'acp-live-delete-target';

export class Proposal extends Widget {
  /** Settles with the user's click. */
  readonly decision: Promise<Decision>;

  constructor(
    readonly change: Change,
    label: string,
    before: string
  ) {
    super();
    this.addClass('acp-live-proposal');
    this.node.dataset.op = change.op;
    const after = change.op === 'delete' ? '' : change.source;
    const lines = diffLines(before, after);
    const changed = stats(lines);

    const header = element('div', 'acp-live-proposal-header');
    header.append(
      element('span', 'acp-live-proposal-title', TITLES[change.op]),
      element('span', 'acp-live-proposal-label', label),
      ...counts(changed.added, changed.removed),
      element('span', 'acp-live-spacer')
    );
    const accept = button(
      'Accept',
      'jp-mod-accept acp-live-accept',
      'Apply this change to the notebook (Ctrl+Z undoes it)'
    );
    const reject = button(
      'Reject',
      'jp-mod-reject acp-live-reject',
      'Leave the cell as it is'
    );
    header.append(accept, reject);

    const body = element('div', 'acp-live-diff-lines');
    body.append(...fold(lines).map(renderLine));
    const diff = element('pre', 'acp-live-diff');
    diff.append(body);
    this.node.append(header, diff);

    this.decision = new Promise<Decision>(resolve => {
      const decide = (choice: Decision) => () => {
        accept.setAttribute('disabled', '');
        reject.setAttribute('disabled', '');
        resolve(choice);
      };
      accept.addEventListener('click', decide('accept'));
      reject.addEventListener('click', decide('reject'));
    });
  }

  /** Show it in `cell`: an edit or a deletion under the cell's input, a new cell at
   * the bottom of the cell it would follow (at the top of the first cell when it
   * would be the new first cell). */
  showIn(cell: Cell): void {
    const layout = cell.layout as PanelLayout;
    let index = layout.widgets.length - 1; // before the footer
    if (this.change.op === 'insert' && this.change.after_id === null) {
      index = 0;
    } else if (this.change.op !== 'insert') {
      index = layout.widgets.indexOf(cell.inputArea?.parent as Widget) + 1;
    }
    layout.insertWidget(Math.max(index, 0), this);
    if (this.change.op === 'delete') {
      cell.addClass(DELETE_TARGET);
      this.disposed.connect(() => cell.removeClass(DELETE_TARGET));
    }
  }
}
