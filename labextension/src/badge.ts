/**
 * The badge of a waiting permission: the notebook's tab carries a mark (a class the
 * stylesheet draws) and the document's title a count ("(1) ⏳ …") while a permission
 * waits in any open notebook. The application sets the document's title itself (on
 * every change of the current widget), so the count is put back whenever it is taken off.
 */

import { Title, Widget } from '@lumino/widgets';

import { AgentBoard, badgedTitle, permissionsWaiting } from './agents';

export const WAITING_CLASS = 'acp-notebook-waiting';

export class WaitingBadge<K> {
  private _count = 0;
  private _observer: MutationObserver | null = null;

  constructor(
    private readonly _board: AgentBoard<K>,
    private readonly _title: (notebook: K) => Title<Widget> | null
  ) {
    _board.onChange(notebook => this._update(notebook));
  }

  private _update(notebook: K): void {
    const title = this._title(notebook);
    if (title !== null) {
      const waiting = permissionsWaiting(this._board.get(notebook)) > 0;
      const classes = title.className
        .split(/\s+/)
        .filter(name => name && name !== WAITING_CLASS);
      title.className = [...classes, ...(waiting ? [WAITING_CLASS] : [])].join(
        ' '
      );
    }
    this._count = this._board.permissionsWaiting();
    this._retitle();
    this._watch();
  }

  private _retitle(): void {
    const wanted = badgedTitle(document.title, this._count);
    if (document.title !== wanted) {
      document.title = wanted;
    }
  }

  /** Keep the count while it is not zero, whatever sets the title. */
  private _watch(): void {
    const head = document.querySelector('title');
    if (this._observer === null && head !== null) {
      this._observer = new MutationObserver(() => this._retitle());
      this._observer.observe(head, {
        childList: true,
        characterData: true,
        subtree: true
      });
    }
  }
}
