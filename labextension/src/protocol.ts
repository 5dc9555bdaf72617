/**
 * The live-notebook comm protocol, version 2: this extension's half. The kernel's half,
 * with the message table, is acp_notebook/notebook/frontend/protocol.py.
 */

import { JSONObject } from '@lumino/coreutils';

export const PROTOCOL_VERSION = 2;
/** Registered by the kernel (`%load_ext acp_notebook`); we open one comm per notebook. */
export const KERNEL_TARGET = 'acp_notebook.live';
/** Registered by us on every notebook kernel; the kernel's beacon comm opens here. */
export const FRONTEND_TARGET = 'acp_notebook.live.announce';

export type CellType = 'code' | 'markdown' | 'raw';

export interface ILiveCell {
  id: string;
  index: number;
  cell_type: CellType;
  source: string;
  execution_count: number | null;
  outputs_text: string;
  truncated: boolean;
}

export interface IEditChange {
  op: 'edit';
  cell_id: string;
  source: string;
  expected_source: string;
}

export interface IInsertChange {
  op: 'insert';
  after_id: string | null;
  source: string;
  cell_type: CellType;
}

export interface IDeleteChange {
  op: 'delete';
  cell_id: string;
  expected_source: string;
}

export type Change = IEditChange | IInsertChange | IDeleteChange;

export type EditStatus = 'accepted' | 'rejected' | 'stale' | 'applied';

export interface IEditOutcome {
  status: EditStatus;
  cell: ILiveCell | null;
}

export type ErrorCode = 'not_found' | 'invalid' | 'failed';

/** A request we cannot serve; its code and sentence go back in the reply. */
export class RequestError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string
  ) {
    super(message);
  }
}

/** Every message carries the protocol version and its type. Its fields are plain data
 * (strings, numbers, cells), which is what a comm can carry. */
export function message(type: string, fields: object = {}): JSONObject {
  return { v: PROTOCOL_VERSION, type, ...fields } as JSONObject;
}

/** The comm's open data: which notebook this is, and who opens it. */
export function hello(
  path: string,
  extensionVersion: string,
  app: string
): JSONObject {
  return message('hello', { path, extension_version: extensionVersion, app });
}

/** The notebook was renamed. */
export function pathChanged(path: string): JSONObject {
  return message('path', { path });
}

/** A Revert click: `change` null is Revert all; `hunk` null, the whole change. */
export function revert(
  review: string,
  change: number | null,
  hunk: number | null,
  revision: string
): JSONObject {
  return message('revert', { review, change, hunk, revision });
}

/** The cells of `list_cells`. */
export interface ICellList {
  cells: ILiveCell[];
}

/** The cell of `read_cell`. */
export interface ICellRead {
  cell: ILiveCell;
}

/** `stale`: the cell no longer held the approved source, and nothing ran. */
export type RunStatus = 'ok' | 'error' | 'aborted' | 'started' | 'stale';

/** What became of `run_cell`, and the cell as it is then. */
export interface IRunOutcome {
  status: RunStatus;
  cell: ILiveCell;
}

export type RequestResult = ICellList | ICellRead | IEditOutcome | IRunOutcome;

/** The answer to request `id`. */
export function reply(id: number, result: RequestResult): JSONObject {
  return message('reply', { id, result });
}

/** Request `id` could not be served: what went wrong, in one sentence. */
export function errorReply(
  id: number,
  code: ErrorCode,
  text: string
): JSONObject {
  return message('reply', { id, error: { code, message: text } });
}

/** The `id` of a request or a `cancel` (null: none, or not an integer). */
export function requestId(data: Record<string, unknown>): number | null {
  return typeof data.id === 'number' ? data.id : null;
}

const CELL_TYPES: ReadonlyArray<string> = ['code', 'markdown', 'raw'];

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') {
    throw new RequestError('invalid', `${field} must be a string`);
  }
  return value;
}

/** A `change` from the kernel, checked field by field. */
export function parseChange(raw: unknown): Change {
  const change = (raw ?? {}) as Record<string, unknown>;
  switch (change.op) {
    case 'edit':
      return {
        op: 'edit',
        cell_id: text(change.cell_id, 'cell_id'),
        source: text(change.source, 'source'),
        expected_source: text(change.expected_source, 'expected_source')
      };
    case 'insert': {
      const cellType = change.cell_type ?? 'code';
      if (typeof cellType !== 'string' || !CELL_TYPES.includes(cellType)) {
        throw new RequestError(
          'invalid',
          `cell_type must be code, markdown or raw, not ${String(cellType)}`
        );
      }
      return {
        op: 'insert',
        after_id:
          change.after_id === null || change.after_id === undefined
            ? null
            : text(change.after_id, 'after_id'),
        source: text(change.source, 'source'),
        cell_type: cellType as CellType
      };
    }
    case 'delete':
      return {
        op: 'delete',
        cell_id: text(change.cell_id, 'cell_id'),
        expected_source: text(change.expected_source, 'expected_source')
      };
    default:
      throw new RequestError(
        'invalid',
        `change.op must be edit, insert or delete, not ${String(change.op)}`
      );
  }
}

export function cellIdOf(raw: unknown): string {
  return text(raw, 'cell_id');
}

/** Whether a cell holding `current` must not run for `request`: only the code that was
 * approved runs, never what an edit made of the cell while the approval waited. */
export function staleRun(current: string, request: IRunCellRequest): boolean {
  return current !== request.source;
}

/** A positive bound on output characters (the kernel's, or a default). */
export function maxChars(raw: unknown): number {
  return typeof raw === 'number' && raw > 0 ? Math.floor(raw) : 4000;
}

/** A request of the kernel's, its fields checked (its `id` is read by `requestId`). */
export type KernelRequest =
  | { type: 'list_cells'; max_output_chars: number }
  | { type: 'read_cell'; cell_id: string; max_output_chars: number }
  | {
      type: 'propose';
      change: Change;
      label: string;
      max_output_chars: number;
    }
  | { type: 'apply'; change: Change; max_output_chars: number }
  | IRunCellRequest;

/** A `run_cell` request: the cell, and the source the user approved running. */
export interface IRunCellRequest {
  type: 'run_cell';
  cell_id: string;
  source: string;
  wait: boolean;
  max_output_chars: number;
}

/** A request from the kernel, checked field by field; an unknown one is `invalid`. */
export function parseRequest(data: Record<string, unknown>): KernelRequest {
  const max = maxChars(data.max_output_chars);
  switch (data.type) {
    case 'list_cells':
      return { type: 'list_cells', max_output_chars: max };
    case 'read_cell':
      return {
        type: 'read_cell',
        cell_id: cellIdOf(data.cell_id),
        max_output_chars: max
      };
    case 'propose':
      return {
        type: 'propose',
        label: typeof data.label === 'string' ? data.label : '',
        change: parseChange(data.change),
        max_output_chars: max
      };
    case 'apply':
      return {
        type: 'apply',
        change: parseChange(data.change),
        max_output_chars: max
      };
    case 'run_cell':
      // Without the approved source the page could not tell what was approved.
      return {
        type: 'run_cell',
        cell_id: cellIdOf(data.cell_id),
        source: text(data.source, 'source'),
        wait: data.wait !== false,
        max_output_chars: max
      };
    default:
      throw new RequestError(
        'invalid',
        `Unknown request ${String(data.type)}.`
      );
  }
}

/** A line of a reviewed hunk (a fold: `count` lines not sent). */
export interface IReviewLine {
  kind: 'added' | 'removed' | 'context' | 'fold';
  text: string;
  count: number;
}

export interface IReviewHunk {
  header: string;
  lines: IReviewLine[];
}

export type ChangeStatus =
  'changed' | 'new' | 'deleted' | 'reverted' | 'unavailable';

/** A file or cell a turn changed, as the kernel's record has it now. */
export interface IReviewChange {
  label: string;
  target: 'file' | 'cell';
  status: ChangeStatus;
  added: number;
  removed: number;
  revertible: boolean;
  /** Created or deleted: reverted whole, not per hunk. */
  whole: boolean;
  revision: string;
  hunks: IReviewHunk[];
}

/** A `review` message: a turn's changes, drawn in cell `cell_id` (null: redraw). */
export interface IReview {
  review: string;
  cell_id: string | null;
  changes: IReviewChange[];
  revert_all: boolean;
  forgotten: boolean;
  message: string | null;
}

const LINE_KINDS: ReadonlyArray<string> = [
  'added',
  'removed',
  'context',
  'fold'
];
const STATUSES: ReadonlyArray<string> = [
  'changed',
  'new',
  'deleted',
  'reverted',
  'unavailable'
];

function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) {
    throw new RequestError('invalid', `${field} must be a list`);
  }
  return value;
}

function count(value: unknown): number {
  return typeof value === 'number' && value > 0 ? Math.floor(value) : 0;
}

function parseLine(raw: unknown): IReviewLine {
  const line = (raw ?? {}) as Record<string, unknown>;
  const kind = String(line.kind);
  if (!LINE_KINDS.includes(kind)) {
    throw new RequestError('invalid', `line kind ${kind} is unknown`);
  }
  return {
    kind: kind as IReviewLine['kind'],
    text: typeof line.text === 'string' ? line.text : '',
    count: count(line.count)
  };
}

function parseReviewChange(raw: unknown): IReviewChange {
  const change = (raw ?? {}) as Record<string, unknown>;
  const status = String(change.status);
  return {
    label: text(change.label, 'label'),
    target: change.target === 'cell' ? 'cell' : 'file',
    status: (STATUSES.includes(status) ? status : 'changed') as ChangeStatus,
    added: count(change.added),
    removed: count(change.removed),
    revertible: change.revertible === true,
    whole: change.whole === true,
    revision: text(change.revision, 'revision'),
    hunks: list(change.hunks ?? [], 'hunks').map(rawHunk => {
      const hunk = (rawHunk ?? {}) as Record<string, unknown>;
      return {
        header: text(hunk.header, 'header'),
        lines: list(hunk.lines, 'lines').map(parseLine)
      };
    })
  };
}

/** A `review` from the kernel, checked field by field. */
export function parseReview(data: Record<string, unknown>): IReview {
  return {
    review: text(data.review, 'review'),
    cell_id:
      data.cell_id === null || data.cell_id === undefined
        ? null
        : text(data.cell_id, 'cell_id'),
    changes: list(data.changes, 'changes').map(parseReviewChange),
    revert_all: data.revert_all === true,
    forgotten: data.forgotten === true,
    message: typeof data.message === 'string' ? data.message : null
  };
}
