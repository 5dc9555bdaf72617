/**
 * The sidebar: every open notebook's agents and sessions with their state, and one click
 * to the card that waits (the notebook is brought forward and the card scrolled into
 * view). Every string from the kernel goes in as text: titles come from the agent.
 */

import { Widget } from '@lumino/widgets';

import {
  AgentBoard,
  IAgentSession,
  permissionsWaiting,
  STATE_LABELS,
  waits
} from './agents';
import { element } from './view';

/** How the sidebar names a notebook and brings one of its cells forward. */
export interface INotebookPlace {
  label: string;
  /** Bring the notebook forward and the card of `cellId` (null: any waiting card) into view. */
  reveal(cellId: string | null): void;
}

export class AgentSidebar<K> extends Widget {
  constructor(
    private readonly _board: AgentBoard<K>,
    private readonly _place: (notebook: K) => INotebookPlace
  ) {
    super();
    this.id = 'acp-notebook-agents';
    this.addClass('acp-agents-sidebar');
    this.title.caption = 'Agents (acp_notebook)';
    this.title.label = 'Agents';
    _board.onChange(() => this.render());
    this.render();
  }

  /** Draw the board as it is now. */
  render(): void {
    const node = this.node;
    node.replaceChildren();
    const waiting = this._board.permissionsWaiting();
    this.title.label = waiting > 0 ? `Agents (${waiting})` : 'Agents';
    const notebooks = this._board.notebooks();
    if (notebooks.length === 0) {
      node.append(
        element(
          'p',
          'acp-agents-empty',
          'No agent yet: run %acp in a notebook and its sessions show here.'
        )
      );
      return;
    }
    for (const notebook of notebooks) {
      const place = this._place(notebook);
      const sessions = this._board.get(notebook);
      const section = element('section', 'acp-agents-notebook');
      const heading = element('h3', 'acp-agents-notebook-name', place.label);
      const count = permissionsWaiting(sessions);
      if (count > 0) {
        heading.append(element('span', 'acp-agents-badge', String(count)));
      }
      section.append(heading);
      const list = element('ul', 'acp-agents-sessions');
      sessions.forEach(session => list.append(row(session, place)));
      section.append(list);
      node.append(section);
    }
  }
}

/** One session: agent and name, its title, its state; a waiting one is a button. */
function row(session: IAgentSession, place: INotebookPlace): HTMLElement {
  const item = element('li', `acp-agents-session acp-agents-${session.state}`);
  item.dataset.state = session.state;
  item.dataset.agent = session.agent;
  item.dataset.session = session.session;
  const name = element(
    'span',
    'acp-agents-session-name',
    `${session.agent} · ${session.session}`
  );
  const state = element(
    'span',
    'acp-agents-state',
    session.state === 'waiting_permission' && session.waiting > 1
      ? `${session.waiting} permissions waiting`
      : STATE_LABELS[session.state]
  );
  item.append(name, state);
  if (session.title) {
    item.append(element('span', 'acp-agents-title', session.title));
  }
  if (waits(session) || session.state === 'running') {
    const go = element(
      'button',
      'acp-agents-go jp-mod-styled',
      waits(session) ? 'Show the card' : 'Show the cell'
    ) as HTMLButtonElement;
    go.type = 'button';
    go.title = 'Bring the notebook forward and its card into view';
    go.addEventListener('click', () => place.reveal(session.cell_id));
    item.append(go);
  }
  return item;
}
