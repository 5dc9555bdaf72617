/**
 * One notebook panel's connection to its kernel's acp_notebook (protocol in
 * ./protocol.ts). The kernel side may start first or last: we register the announce
 * target on every kernel the panel gets and open our comm when the kernel's beacon
 * arrives, or when a comm_info_request finds it (page opened after `%load_ext`, kernel
 * restarted with a kernelspec that loads the extension).
 */

import { Notification } from '@jupyterlab/apputils';
import { Cell, CodeCell, MarkdownCell } from '@jupyterlab/cells';
import { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { IAgentSession, parseAgents } from './agents';
import { cellIndex, findCell, liveCell } from './cells';
import { apply, currentCell, isStale, target } from './changes';
import {
  Change,
  errorReply,
  FRONTEND_TARGET,
  hello,
  IEditOutcome,
  ILiveCell,
  IRunCellRequest,
  IRunOutcome,
  KERNEL_TARGET,
  parseRequest,
  parseReview,
  pathChanged,
  reply,
  RequestError,
  RequestResult,
  requestId,
  revert,
  staleRun
} from './protocol';
import { Proposal } from './proposal';
import { ReviewBar } from './review';
import { EXTENSION_VERSION } from './version';

/** Kernel states after which the kernel has forgotten every comm. */
const GONE: ReadonlyArray<Kernel.Status> = [
  'restarting',
  'autorestarting',
  'dead',
  'terminating'
];

/** A request we answer nothing to (the kernel withdrew it, or the comm is gone). */
const NO_REPLY = Symbol('no reply');

type Result = RequestResult | typeof NO_REPLY;

export class LiveLink {
  private _kernel: Kernel.IKernelConnection | null = null;
  private _comm: Kernel.IComm | null = null;
  private _proposals = new Map<number, Proposal>();
  private _withdrawn = new Set<number>();
  private _reviews = new Map<string, ReviewBar>();
  private _probeWhenIdle = false;
  private _disposed = false;

  /** `onStale`: a proposal shown in `cell` went stale as the cell changed under it. */
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _appName: string,
    /** Told the kernel's sessions of this notebook (none once disconnected). */
    private readonly _onAgents: (sessions: IAgentSession[]) => void = () =>
      undefined,
    private readonly _onStale?: (cell: Cell, label: string) => void
  ) {
    const session = _panel.sessionContext;
    session.kernelChanged.connect(this._onKernelChanged, this);
    session.statusChanged.connect(this._onStatus, this);
    session.connectionStatusChanged.connect(this._onConnection, this);
    _panel.context.pathChanged.connect(this._onPath, this);
    void session.ready.then(() =>
      this._useKernel(session.session?.kernel ?? null)
    );
  }

  /** Close our comm (the kernel's pending calls fail) and stop listening. */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._useKernel(null);
    const session = this._panel.sessionContext;
    session.kernelChanged.disconnect(this._onKernelChanged, this);
    session.statusChanged.disconnect(this._onStatus, this);
    session.connectionStatusChanged.disconnect(this._onConnection, this);
    this._panel.context.pathChanged.disconnect(this._onPath, this);
  }

  // ---------------------------------------------------------------- connecting

  private _onKernelChanged(): void {
    this._useKernel(this._panel.sessionContext.session?.kernel ?? null);
  }

  private _useKernel(kernel: Kernel.IKernelConnection | null): void {
    if (kernel === this._kernel || (this._disposed && kernel !== null)) {
      return;
    }
    if (this._kernel !== null) {
      this._kernel.removeCommTarget(FRONTEND_TARGET, this._onAnnounce);
      this._disconnect();
    }
    this._kernel = kernel;
    if (kernel !== null) {
      kernel.registerCommTarget(FRONTEND_TARGET, this._onAnnounce);
      void this._probe();
    }
  }

  private _onStatus(_: unknown, status: Kernel.Status): void {
    if (GONE.includes(status)) {
      this._disconnect();
      this._probeWhenIdle = status !== 'dead';
    } else if (status === 'idle' && this._probeWhenIdle) {
      this._probeWhenIdle = false;
      void this._probe();
    }
  }

  private _onConnection(_: unknown, status: Kernel.ConnectionStatus): void {
    if (status === 'connected') {
      void this._probe();
    }
  }

  /** Is the kernel's beacon open? Then acp_notebook is loaded there: connect. */
  private async _probe(): Promise<void> {
    const kernel = this._kernel;
    if (kernel === null || this._comm !== null) {
      return;
    }
    let reply: KernelMessage.ICommInfoReplyMsg;
    try {
      reply = await kernel.requestCommInfo({ target_name: FRONTEND_TARGET });
    } catch {
      return; // the kernel restarted or went away; the next status change probes again
    }
    const content = reply.content;
    if (kernel === this._kernel && content.status === 'ok') {
      if (Object.keys(content.comms).length > 0) {
        this._connect();
      }
    }
  }

  /** The beacon: a kernel just loaded acp_notebook. It stays open (closing it would
   * hide it from pages opened later). */
  private _onAnnounce = (): void => {
    this._connect();
  };

  private _connect(): void {
    const kernel = this._kernel;
    if (kernel === null || this._comm !== null) {
      return;
    }
    const comm = kernel.createComm(KERNEL_TARGET);
    this._comm = comm;
    comm.onMsg = msg => this._onMessage(comm, msg);
    comm.onClose = () => {
      if (this._comm === comm) {
        this._disconnect();
      }
    };
    comm.open(
      hello(this._panel.context.localPath, EXTENSION_VERSION, this._appName)
    );
  }

  /** Forget the comm (closing it if it is still open) and withdraw every proposal. */
  private _disconnect(): void {
    const comm = this._comm;
    this._comm = null;
    delete this._panel.node.dataset.acpLive;
    this._onAgents([]);
    for (const [id, proposal] of this._proposals) {
      this._withdrawn.add(id);
      proposal.dispose();
    }
    // Their Revert would reach no kernel (or one that forgot the turn).
    this._reviews.forEach(bar => bar.dispose());
    if (comm !== null && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // The kernel connection is already gone.
      }
    }
  }

  private _onPath(): void {
    this._comm?.send(pathChanged(this._panel.context.localPath));
  }

  // ---------------------------------------------------------------- messages

  private _onMessage(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    const data = msg.content.data as Record<string, unknown>;
    switch (data.type) {
      case 'welcome':
        this._panel.node.dataset.acpLive = 'connected';
        break;
      case 'unsupported':
        Notification.warning(String(data.message), { autoClose: false });
        break;
      case 'review':
        this._review(data);
        break;
      case 'agents':
        try {
          this._onAgents(parseAgents(data));
        } catch (error) {
          console.warn('acp-notebook: a malformed agents message', error);
        }
        break;
      case 'cancel': {
        const id = requestId(data);
        if (id !== null) {
          this._withdrawn.add(id);
          this._proposals.get(id)?.dispose();
        }
        break;
      }
      default: {
        const id = requestId(data);
        if (id !== null) {
          void this._serve(comm, id, data);
        }
      }
    }
  }

  /** Draw a turn's changes in its `%acp` cell, or redraw them after a revert. */
  private _review(data: Record<string, unknown>): void {
    let review;
    try {
      review = parseReview(data);
    } catch (error) {
      console.warn('acp-notebook: a malformed review message', error);
      return;
    }
    let bar = this._reviews.get(review.review);
    if (bar === undefined && review.cell_id !== null) {
      const model = this._panel.content.model;
      const index = model === null ? -1 : cellIndex(model, review.cell_id);
      const cell = this._panel.content.widgets[index] as Cell | undefined;
      if (cell === undefined) {
        return; // not a cell of this notebook (another page of the same kernel)
      }
      // One bar per cell: the cell's newer turn replaces it.
      this._reviews.forEach(other => {
        if (other.parent === cell) {
          other.dispose();
        }
      });
      const id = review.review;
      const created = new ReviewBar(id, (change, hunk, revision) =>
        this._comm?.send(revert(id, change, hunk, revision))
      );
      created.disposed.connect(() => this._reviews.delete(id));
      this._reviews.set(id, created);
      created.showIn(cell);
      bar = created;
    }
    bar?.draw(review);
  }

  private async _serve(
    comm: Kernel.IComm,
    id: number,
    data: Record<string, unknown>
  ): Promise<void> {
    let answer;
    try {
      const result = await this._handle(id, data);
      if (result === NO_REPLY) {
        return;
      }
      answer = reply(id, result);
    } catch (error) {
      answer = errorReply(
        id,
        error instanceof RequestError ? error.code : 'failed',
        error instanceof Error ? error.message : String(error)
      );
    } finally {
      this._withdrawn.delete(id);
    }
    if (!comm.isDisposed && this._comm === comm) {
      comm.send(answer);
    }
  }

  private async _handle(
    id: number,
    data: Record<string, unknown>
  ): Promise<Result> {
    const model = this._panel.content.model;
    if (model === null) {
      throw new RequestError('failed', 'The notebook is not loaded yet.');
    }
    const request = parseRequest(data);
    const max = request.max_output_chars;
    switch (request.type) {
      case 'list_cells': {
        const cells: ILiveCell[] = [];
        for (let i = 0; i < model.cells.length; i++) {
          cells.push(liveCell(model.cells.get(i), i, max));
        }
        return { cells };
      }
      case 'read_cell': {
        const { cell, index } = findCell(model, request.cell_id);
        return { cell: liveCell(cell, index, max) };
      }
      case 'propose':
        return this._propose(id, model, request.change, request.label, max);
      case 'apply':
        // An unknown cell id is an error, not a stale change.
        target(model, request.change);
        return this._outcome(model, request.change, 'applied', max);
      case 'run_cell':
        return this._run(model, request, max);
    }
  }

  /** Apply a change unless it went stale; `status` says how it was decided. */
  private _outcome(
    model: INotebookModel,
    change: Change,
    status: 'accepted' | 'applied',
    max: number
  ): IEditOutcome {
    if (isStale(model, change)) {
      return { status: 'stale', cell: currentCell(model, change, max) };
    }
    return { status, cell: apply(model, change, max) };
  }

  private async _propose(
    id: number,
    model: INotebookModel,
    change: Change,
    label: string,
    max: number
  ): Promise<Result> {
    const index = target(model, change);
    if (isStale(model, change)) {
      return { status: 'stale', cell: currentCell(model, change, max) };
    }
    // An insert shows in the cell it would follow (or the first cell, for the top).
    const anchorIndex = change.op === 'insert' ? Math.max(index - 1, 0) : index;
    const anchor = this._panel.content.widgets[anchorIndex] as Cell | undefined;
    if (anchor === undefined) {
      throw new RequestError(
        'failed',
        'The notebook has no cell to show the proposal in.'
      );
    }
    const before =
      change.op === 'insert'
        ? ''
        : model.cells.get(index).sharedModel.getSource();
    const proposal = new Proposal(change, label, before);
    proposal.showIn(anchor);
    this._proposals.set(id, proposal);
    // Bring it into view (with windowing, the cell may not be in the DOM yet), without
    // selecting or focusing anything: the user may be typing elsewhere.
    void this._panel.content
      .scrollToItem(anchorIndex, 'smart')
      .then(() => proposal.node.scrollIntoView({ block: 'nearest' }))
      .catch(() => undefined);

    const decided = new Promise<Result>(resolve => {
      let settled = false;
      // The first of: a click, a stale source, the proposal going away. Applying an
      // accepted change changes the document too, so the recheck must be off by then.
      const settle = (result: () => Result) => {
        if (!settled) {
          settled = true;
          model.contentChanged.disconnect(recheck);
          resolve(result());
        }
      };
      // spec: a proposal against a cell that changed since the agent read it is stale.
      const recheck = () => {
        if (isStale(model, change)) {
          const cell = currentCell(model, change, max);
          settle(() => ({ status: 'stale', cell }));
          if (cell !== null && change.op !== 'insert') {
            this._onStale?.(anchor, label); // it does not vanish without a word
          }
        }
      };
      model.contentChanged.connect(recheck);
      // Withdrawn by the kernel or a disconnect: no answer. Disposed with its cell: the
      // cell is gone, so the change is stale.
      proposal.disposed.connect(() =>
        settle(() =>
          this._withdrawn.has(id)
            ? NO_REPLY
            : { status: 'stale', cell: currentCell(model, change, max) }
        )
      );
      void proposal.decision.then(choice =>
        settle(() =>
          choice === 'reject'
            ? { status: 'rejected', cell: null }
            : this._outcome(model, change, 'accepted', max)
        )
      );
    });
    try {
      return await decided;
    } finally {
      this._proposals.delete(id);
      proposal.dispose();
    }
  }

  private async _run(
    model: INotebookModel,
    request: IRunCellRequest,
    max: number
  ): Promise<IRunOutcome> {
    const cellId = request.cell_id;
    const found = findCell(model, cellId);
    const widget = this._panel.content.widgets[found.index];
    const now = () => {
      const index =
        model.cells.length > found.index &&
        model.cells.get(found.index) === found.cell
          ? found.index
          : findCell(model, cellId).index;
      return liveCell(found.cell, index, max);
    };
    if (widget instanceof MarkdownCell) {
      widget.rendered = true;
      return { status: 'ok', cell: now() };
    }
    if (!(widget instanceof CodeCell)) {
      return { status: 'ok', cell: now() };
    }
    // spec: the approved source runs, or nothing (checked in the tick that runs it).
    if (staleRun(found.cell.sharedModel.getSource(), request)) {
      return { status: 'stale', cell: now() };
    }
    const execution = CodeCell.execute(widget, this._panel.sessionContext);
    if (!request.wait) {
      execution.catch(() => undefined);
      return { status: 'started', cell: now() };
    }
    const reply = await execution;
    const status = reply ? reply.content.status : 'aborted';
    return {
      status: status === 'ok' || status === 'error' ? status : 'aborted',
      cell: now()
    };
  }
}
