/**
 * The board of every notebook's sessions, the sidebar that lists them and one click to
 * the waiting card, and the badge on the tab and the title (agents.ts, sidebar.ts, badge.ts).
 */

import { Title, Widget } from '@lumino/widgets';

import {
  AgentBoard,
  badgedTitle,
  IAgentSession,
  parseAgents,
  permissionsWaiting
} from '../agents';
import { WaitingBadge, WAITING_CLASS } from '../badge';
import { AgentSidebar } from '../sidebar';

function session(fields: Partial<IAgentSession>): IAgentSession {
  return {
    agent: 'demo',
    session: 'default',
    state: 'idle',
    cell_id: null,
    title: null,
    waiting: 0,
    ...fields
  };
}

describe('the agents message', () => {
  it('refuses an unknown state and a session without a name', () => {
    expect(() =>
      parseAgents({ sessions: [{ agent: 'a', session: 's', state: 'asleep' }] })
    ).toThrow('state asleep is unknown');
    expect(() =>
      parseAgents({ sessions: [{ agent: 'a', state: 'idle' }] })
    ).toThrow('session must be a string');
  });
});

describe('the badge', () => {
  it('counts the waiting permissions in front of the title, and goes with them', () => {
    const sessions = [
      session({ state: 'waiting_permission', waiting: 2 }),
      session({ session: 'b', state: 'waiting_login' }),
      session({ session: 'c', state: 'running' })
    ];
    expect(permissionsWaiting(sessions)).toBe(2);
    expect(badgedTitle('tour.ipynb - JupyterLab', 2)).toBe(
      '(2) ⏳ tour.ipynb - JupyterLab'
    );
    expect(badgedTitle('(2) ⏳ tour.ipynb - JupyterLab', 1)).toBe(
      '(1) ⏳ tour.ipynb - JupyterLab'
    );
    expect(badgedTitle('(1) ⏳ tour.ipynb - JupyterLab', 0)).toBe(
      'tour.ipynb - JupyterLab'
    );
  });
});

describe('the sidebar', () => {
  const revealed: Array<[string, string | null]> = [];
  const board = new AgentBoard<string>();
  const sidebar = new AgentSidebar(board, notebook => ({
    label: notebook,
    reveal: cellId => revealed.push([notebook, cellId])
  }));

  it('lists each notebook with its sessions and their state', () => {
    board.set('a.ipynb', [session({ state: 'running', cell_id: 'c-1' })]);
    board.set('b.ipynb', [
      session({
        agent: 'claude',
        state: 'waiting_permission',
        waiting: 1,
        cell_id: 'c-9',
        title: '<img src=x onerror=alert(1)>'
      }),
      session({ agent: 'claude', session: 'notes' })
    ]);
    const rows = Array.from(sidebar.node.querySelectorAll('li')).map(
      li => li.textContent
    );
    expect(rows).toEqual([
      'demo · defaultrunningShow the cell',
      'claude · defaultwaiting for permission<img src=x onerror=alert(1)>Show the card',
      'claude · notesidle'
    ]);
    expect(sidebar.node.querySelector('img')).toBeNull(); // the agent's title is text
    expect(sidebar.title.label).toBe('Agents (1)');
  });

  it('brings the waiting card forward in one click', () => {
    const waiting = sidebar.node.querySelector(
      'li[data-state="waiting_permission"] button'
    ) as HTMLButtonElement;
    waiting.click();
    expect(revealed).toEqual([['b.ipynb', 'c-9']]);
  });

  it('forgets a notebook whose kernel went', () => {
    board.set('b.ipynb', []);
    expect(board.notebooks()).toEqual(['a.ipynb']);
    expect(sidebar.title.label).toBe('Agents');
    expect(sidebar.node.querySelectorAll('li')).toHaveLength(1);
  });
});

describe('the waiting badge', () => {
  it('marks the tab and counts in the title until the permission is answered', async () => {
    document.head.innerHTML = '<title>tour.ipynb - JupyterLab</title>';
    const board = new AgentBoard<string>();
    const tab = new Title<Widget>({
      owner: new Widget(),
      className: 'jp-mod-dirty'
    });
    new WaitingBadge(board, () => tab);

    board.set('tour.ipynb', [session({ state: 'waiting_permission' })]);
    expect(tab.className).toBe(`jp-mod-dirty ${WAITING_CLASS}`);
    expect(document.title).toBe('(1) ⏳ tour.ipynb - JupyterLab');
    // The application sets the title again (another notebook came forward).
    document.title = 'other.ipynb - JupyterLab';
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(document.title).toBe('(1) ⏳ other.ipynb - JupyterLab');

    board.set('tour.ipynb', [session({ state: 'idle' })]);
    expect(tab.className).toBe('jp-mod-dirty');
    expect(document.title).toBe('other.ipynb - JupyterLab');
  });
});
