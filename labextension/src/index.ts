/**
 * acp-notebook: connects every notebook to its kernel's acp_notebook, so the agent can
 * read the live document's cells and propose edits that the user reviews in the cell.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

// link.ts needs only modules the application has loaded already: loading it lazily
// would save nothing and delay the link of a notebook restored at start.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { LiveLink } from './link';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { agentBoard } from './board';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CellActions } from './ask';

/** Ask about this cell (or its selected lines): the command, its key and menu item. */
const ASK_COMMAND = 'acp-notebook:ask-about-cell';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'acp-notebook:live',
  description:
    "Connects each notebook to its kernel's acp_notebook: live cells for the agent, and its edits reviewed in the cell.",
  autoStart: true,
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (tracker === null) {
      return; // a page without notebooks (Notebook 7's file browser)
    }
    const links = new Map<NotebookPanel, LiveLink>();
    const showAgents = agentBoard(app);
    const actions = new Map<NotebookPanel, CellActions>();
    const track = (panel: NotebookPanel) => {
      if (links.has(panel)) {
        return;
      }
      const acts = new CellActions(panel);
      const link = new LiveLink(
        panel,
        app.name,
        sessions => showAgents(panel, sessions),
        (cell, label) => acts.showStale(cell, label)
      );
      links.set(panel, link);
      actions.set(panel, acts);
      panel.disposed.connect(() => {
        link.dispose();
        acts.dispose();
        links.delete(panel);
        actions.delete(panel);
      });
    };
    // The extension ships no translations (every string of it is English).
    /* eslint-disable jupyter/no-untranslated-string */
    app.commands.addCommand(ASK_COMMAND, {
      label: 'Ask the agent about this cell',
      caption:
        'Ask the agent about this cell, or its selected lines; its edits are proposed in the cell',
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => {
        const panel = tracker.currentWidget;
        const acts = panel === null ? undefined : actions.get(panel);
        return acts?.ask();
      }
    });
    /* eslint-enable jupyter/no-untranslated-string */
    app.commands.addKeyBinding({
      command: ASK_COMMAND,
      keys: ['Accel K'],
      selector: '.jp-Notebook'
    });
    app.contextMenu.addItem({
      command: ASK_COMMAND,
      selector: '.jp-Notebook .jp-Cell',
      rank: 0
    });
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    // Leaving the page: tell the kernels (their pending calls fail at once, not on timeout).
    window.addEventListener('pagehide', () =>
      links.forEach(link => link.dispose())
    );
  }
};

export default plugin;
