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
    const track = (panel: NotebookPanel) => {
      if (links.has(panel)) {
        return;
      }
      const link = new LiveLink(panel, app.name, sessions =>
        showAgents(panel, sessions)
      );
      links.set(panel, link);
      panel.disposed.connect(() => {
        link.dispose();
        links.delete(panel);
      });
    };
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    // Leaving the page: tell the kernels (their pending calls fail at once, not on timeout).
    window.addEventListener('pagehide', () =>
      links.forEach(link => link.dispose())
    );
  }
};

export default plugin;
