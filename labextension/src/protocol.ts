/**
 * The live-notebook comm protocol, version 1: this extension's half. The kernel's half,
 * with the message table, is acp_notebook/notebook/frontend/protocol.py.
 */

import { JSONObject } from '@lumino/coreutils';

export const PROTOCOL_VERSION = 1;
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

/** A positive bound on output characters (the kernel's, or a default). */
export function maxChars(raw: unknown): number {
  return typeof raw === 'number' && raw > 0 ? Math.floor(raw) : 4000;
}
