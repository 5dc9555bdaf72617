/**
 * The extension's half of the live-notebook protocol against the one fixture both halves
 * are tested with (the kernel's half: tests/notebook/test_frontend_protocol_fixtures.py).
 * Each message the kernel sends is read by the function the extension reads it with, and
 * must come out with the fixture's fields; each message the extension sends is built by
 * its builder from the fixture's values, and must be the fixture's message.
 */

import * as fs from 'fs';
import * as path from 'path';

import { parseAgents } from '../agents';
import { askMessage, IAsk } from '../asking';
import { liveCell } from '../cells';
import {
  errorReply,
  FRONTEND_TARGET,
  hello,
  ILiveCell,
  KERNEL_TARGET,
  parseRequest,
  parseReview,
  pathChanged,
  PROTOCOL_VERSION,
  reply,
  requestId,
  revert
} from '../protocol';
import { notebookOf, specOf } from './notebook';

type Message = Record<string, any>;

const FIXTURE = path.join(
  __dirname,
  '..',
  '..',
  '..',
  'tests',
  'data',
  'live_notebook',
  'messages.json'
);
const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf-8')) as {
  protocol: Record<string, unknown>;
  kernel_to_frontend: Record<string, Message>;
  frontend_to_kernel: Record<string, Message>;
};

/** A message's own fields: without the envelope (`v`, `type`) and the request id. */
function fields(msg: Message): Message {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { v, type, id, ...rest } = msg;
  return rest;
}

/** A request as the extension reads it: its type, its id, and its fields. */
function readsRequest(msg: Message): void {
  expect(requestId(msg)).toBe(msg.id);
  expect(parseRequest(msg)).toMatchObject({ type: msg.type, ...fields(msg) });
}

/** The cell the extension sends for the notebook cell the wire cell describes. */
function sentCell(cell: ILiveCell): ILiveCell {
  const { spec, max } = specOf(cell);
  const model = notebookOf([spec]);
  return liveCell(model.cells.get(0), cell.index, max);
}

/** How the extension reads each message from the kernel. `announce`, `welcome` and
 * `unsupported` are told apart by their type alone. */
const READS: Record<string, (msg: Message) => void> = {
  announce: () => undefined,
  welcome: () => undefined,
  unsupported: msg => expect(typeof msg.message).toBe('string'),
  list_cells: readsRequest,
  read_cell: readsRequest,
  propose_edit: readsRequest,
  propose_insert: readsRequest,
  propose_delete: readsRequest,
  apply: readsRequest,
  run_cell: readsRequest,
  cancel: msg => expect(requestId(msg)).toBe(msg.id),
  review: msg => expect(parseReview(msg)).toMatchObject(fields(msg)),
  review_redraw: msg => expect(parseReview(msg)).toMatchObject(fields(msg)),
  agents: msg => expect(parseAgents(msg)).toEqual(msg.sessions)
};

/** How the extension builds each message it sends, from the fixture's values. */
const SENDS: Record<string, (msg: Message) => Message> = {
  hello: msg => hello(msg.path, msg.extension_version, msg.app),
  path: msg => pathChanged(msg.path),
  reply_list_cells: msg =>
    reply(msg.id, { cells: msg.result.cells.map(sentCell) }),
  reply_read_cell: msg => reply(msg.id, { cell: sentCell(msg.result.cell) }),
  reply_propose_accepted: msg =>
    reply(msg.id, { status: 'accepted', cell: sentCell(msg.result.cell) }),
  reply_propose_rejected: msg =>
    reply(msg.id, { status: 'rejected', cell: null }),
  reply_propose_stale: msg =>
    reply(msg.id, { status: 'stale', cell: sentCell(msg.result.cell) }),
  reply_apply: msg =>
    reply(msg.id, { status: 'applied', cell: sentCell(msg.result.cell) }),
  reply_run_cell: msg =>
    reply(msg.id, { status: 'started', cell: sentCell(msg.result.cell) }),
  reply_run_cell_stale: msg =>
    reply(msg.id, { status: 'stale', cell: sentCell(msg.result.cell) }),
  reply_error: msg => errorReply(msg.id, msg.error.code, msg.error.message),
  revert: msg => revert(msg.review, msg.change, msg.hunk, msg.revision),
  // Not on the comm: the metadata of the execute request of a %acp cell the page wrote.
  ask: msg => askMessage(fields(msg) as IAsk),
  ask_fix: msg => askMessage(fields(msg) as IAsk)
};

describe('the live-notebook messages shared with the kernel', () => {
  it('name the same protocol version and comm targets', () => {
    expect(fixture.protocol).toEqual({
      version: PROTOCOL_VERSION,
      kernel_target: KERNEL_TARGET,
      frontend_target: FRONTEND_TARGET
    });
  });

  it('are each read or built by the extension', () => {
    expect(Object.keys(fixture.kernel_to_frontend).sort()).toEqual(
      Object.keys(READS).sort()
    );
    expect(Object.keys(fixture.frontend_to_kernel).sort()).toEqual(
      Object.keys(SENDS).sort()
    );
  });

  it.each(Object.entries(fixture.kernel_to_frontend))(
    'from the kernel: %s is read with its fields',
    (name, msg) => {
      expect(msg.v).toBe(PROTOCOL_VERSION);
      READS[name](msg);
    }
  );

  it.each(Object.entries(fixture.frontend_to_kernel))(
    'to the kernel: %s is built as the fixture has it',
    (name, msg) => {
      expect(SENDS[name](msg)).toEqual(msg);
    }
  );
});
