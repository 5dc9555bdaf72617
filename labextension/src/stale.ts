/**
 * What is left of a proposal the user's own typing made stale: in the cell, where the
 * proposal was, a note saying why it went (the agent's edit was made against the text
 * it read, which is no longer there) and "Ask again". Nothing of it is saved.
 */

import { Cell } from '@jupyterlab/cells';
import { PanelLayout, Widget } from '@lumino/widgets';

import { button, element } from './view';

/** Why the proposal went, in one sentence. */
export function staleSentence(label: string): string {
  const what = label.trim() === '' ? 'edit' : `edit (${label.trim()})`;
  return (
    `The agent's proposed ${what} was withdrawn: you changed this cell while it ` +
    'waited, and it was made against the text the agent had read.'
  );
}

export class StaleNote extends Widget {
  constructor(label: string, onAskAgain: () => void) {
    super();
    this.addClass('acp-live-stale');
    const said = element('span', 'acp-live-stale-text', staleSentence(label));
    said.setAttribute('role', 'status');
    const again = button(
      'Ask again',
      'acp-live-ask-again',
      'Ask the agent again about this cell as it is now'
    );
    again.addEventListener('click', () => {
      this.dispose();
      onAskAgain();
    });
    const dismiss = button('Dismiss', 'acp-live-dismiss', 'Hide this note');
    dismiss.addEventListener('click', () => this.dispose());
    this.node.append(said, element('span', 'acp-live-spacer'), again, dismiss);
  }

  /** Under the cell's input, where the proposal was; one note per cell. */
  showIn(cell: Cell): void {
    const layout = cell.layout as PanelLayout;
    layout.widgets
      .filter(widget => widget instanceof StaleNote)
      .forEach(widget => widget.dispose());
    const index = layout.widgets.indexOf(cell.inputArea?.parent as Widget) + 1;
    layout.insertWidget(Math.max(index, 0), this);
  }
}
