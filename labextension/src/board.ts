/**
 * One place for every agent: the board of every open notebook's sessions (fed by each
 * notebook's live link), the sidebar that lists them and the badge of what waits.
 * JupyterLab puts the sidebar in the right area; Notebook 7 too, where the page has
 * one (its notebook page), and shows the title badge in any case.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import { AgentBoard, IAgentSession } from './agents';
import { WaitingBadge } from './badge';
import { cellIndex } from './cells';
import { AgentSidebar } from './sidebar';

/** The class of a pending permission card (acp_notebook/ui/attention.py). */
const CARD = '.acp-permission-card';

/** Set up the board, its sidebar and badge; returns what a link calls with its sessions. */
export function agentBoard(
  app: JupyterFrontEnd
): (panel: NotebookPanel, sessions: IAgentSession[]) => void {
  const board = new AgentBoard<NotebookPanel>();
  const sidebar = new AgentSidebar(board, panel => ({
    label: panel.context.localPath,
    reveal: cellId => void reveal(app, panel, cellId)
  }));
  try {
    app.shell.add(sidebar, 'right', { rank: 650 });
  } catch {
    // A shell without a right area: the title badge still shows what waits.
  }
  new WaitingBadge(board, panel => (panel.isDisposed ? null : panel.title));
  const watched = new WeakSet<NotebookPanel>();
  return (panel, sessions) => {
    board.set(panel, sessions);
    if (sessions.length > 0 && !watched.has(panel)) {
      watched.add(panel);
      panel.disposed.connect(() => board.set(panel, []));
    }
  };
}

/** Bring `panel` forward and the card waiting in cell `cellId` (null: the first card
 * the notebook shows) into view, focused, so its keys answer at once. */
export async function reveal(
  app: JupyterFrontEnd,
  panel: NotebookPanel,
  cellId: string | null
): Promise<void> {
  app.shell.activateById(panel.id);
  const notebook = panel.content;
  const model = notebook.model;
  const index =
    model !== null && cellId !== null ? cellIndex(model, cellId) : -1;
  if (index >= 0) {
    notebook.activeCellIndex = index;
    // With windowing, the cell may not be in the DOM until it is scrolled to.
    await notebook.scrollToItem(index, 'center').catch(() => undefined);
  }
  const cell = notebook.widgets[index] as Cell | undefined;
  const card =
    cell?.node.querySelector<HTMLElement>(CARD) ??
    notebook.node.querySelector<HTMLElement>(CARD);
  const target = card ?? cell?.node ?? null;
  target?.scrollIntoView({ block: 'center' });
  card?.focus({ preventScroll: true });
}
