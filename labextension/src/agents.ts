/**
 * What each notebook's agents are doing, as the kernel publishes it (the `agents`
 * message: acp_notebook/notebook/runtime/agent_states.py), and the board that keeps it for every
 * open notebook: the sidebar lists it, the badge counts what waits.
 */

import { RequestError } from './protocol';

export type AgentState =
  'running' | 'waiting_permission' | 'waiting_login' | 'idle';

const STATES: ReadonlyArray<string> = [
  'running',
  'waiting_permission',
  'waiting_login',
  'idle'
];

/** One session of a notebook's agents. */
export interface IAgentSession {
  agent: string;
  session: string;
  state: AgentState;
  /** The `%acp` cell of its running turn, where its card waits (null: none known). */
  cell_id: string | null;
  title: string | null;
  /** Permission requests waiting. */
  waiting: number;
}

/** What the sidebar says for each state. */
export const STATE_LABELS: Record<AgentState, string> = {
  running: 'running',
  waiting_permission: 'waiting for permission',
  waiting_login: 'waiting for login',
  idle: 'idle'
};

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') {
    throw new RequestError('invalid', `${field} must be a string`);
  }
  return value;
}

function orNull(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : text(value, field);
}

/** An `agents` message from the kernel, checked field by field. */
export function parseAgents(data: Record<string, unknown>): IAgentSession[] {
  if (!Array.isArray(data.sessions)) {
    throw new RequestError('invalid', 'sessions must be a list');
  }
  return data.sessions.map(raw => {
    const item = (raw ?? {}) as Record<string, unknown>;
    const state = String(item.state);
    if (!STATES.includes(state)) {
      throw new RequestError('invalid', `state ${state} is unknown`);
    }
    return {
      agent: text(item.agent, 'agent'),
      session: text(item.session, 'session'),
      state: state as AgentState,
      cell_id: orNull(item.cell_id, 'cell_id'),
      title: orNull(item.title, 'title'),
      waiting:
        typeof item.waiting === 'number' && item.waiting > 0
          ? Math.floor(item.waiting)
          : 0
    };
  });
}

/** Whether someone must act: a permission or a login waits. */
export function waits(session: IAgentSession): boolean {
  return (
    session.state === 'waiting_permission' || session.state === 'waiting_login'
  );
}

/** The permission requests waiting among `sessions`. */
export function permissionsWaiting(
  sessions: ReadonlyArray<IAgentSession>
): number {
  return sessions
    .filter(session => session.state === 'waiting_permission')
    .reduce((total, session) => total + Math.max(session.waiting, 1), 0);
}

/** The document title with `count` waiting permissions in front ("(2) ⏳ title"), or
 * as it was without them; a title that already carries a count has it replaced. */
export function badgedTitle(title: string, count: number): string {
  const bare = title.replace(/^\(\d+\) ⏳ /, '');
  return count > 0 ? `(${count}) ⏳ ${bare}` : bare;
}

/** Every open notebook's sessions, keyed by notebook (a panel, in the page). */
export class AgentBoard<K> {
  private _sessions = new Map<K, IAgentSession[]>();
  private _listeners: Array<(notebook: K) => void> = [];

  /** Call `listener(notebook)` when a notebook's sessions change (also when it goes). */
  onChange(listener: (notebook: K) => void): void {
    this._listeners.push(listener);
  }

  set(notebook: K, sessions: IAgentSession[]): void {
    if (sessions.length === 0) {
      if (!this._sessions.delete(notebook)) {
        return;
      }
    } else {
      this._sessions.set(notebook, sessions);
    }
    this._listeners.forEach(listener => listener(notebook));
  }

  get(notebook: K): ReadonlyArray<IAgentSession> {
    return this._sessions.get(notebook) ?? [];
  }

  /** The notebooks with sessions, in the order they first had them. */
  notebooks(): K[] {
    return [...this._sessions.keys()];
  }

  /** Permission requests waiting in every notebook. */
  permissionsWaiting(): number {
    let total = 0;
    this._sessions.forEach(sessions => (total += permissionsWaiting(sessions)));
    return total;
  }
}
