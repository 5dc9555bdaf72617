/**
 * What the Fix button and "Ask about this cell" send: a `%acp` cell written below the
 * cell they are about and run, its execute request carrying an `ask` (the cell, the
 * selected lines, the error) in its metadata. The `%acp` line is what the user would
 * have typed, so the turn, its transcript and its review are a `%acp` cell's like any
 * other; the kernel's half is `Frontends.asked` (acp_notebook/notebook/frontend).
 */

import * as nbformat from '@jupyterlab/nbformat';
import { JSONObject } from '@lumino/coreutils';

import { outputText } from './cells';
import { message } from './protocol';

/** The metadata key of an `ask` in the execute request (the kernel's ASK_METADATA). */
export const ASK_METADATA = 'acp_notebook';

/** The cell a `%acp` cell written by the page asks about. */
export interface IAsk {
  cell_id: string;
  index: number;
  execution_count: number | null;
  source: string;
  /** The selected lines, first and last, 1-based; null: the whole cell. */
  lines: [number, number] | null;
  /** For a Fix, the error output as text; else null. */
  error: string | null;
}

/** The `ask` message, as the kernel reads it from the execute request's metadata. */
export function askMessage(ask: IAsk): JSONObject {
  return message('ask', ask);
}

/** The source of a Fix's `%acp` cell (its prompt is the default: explain and fix). */
export const FIX_SOURCE = '%acp --fix';

/** The source of an Ask's `%acp` cell: `%acp PROMPT` for one line, a `%%acp` cell for
 * more. */
export function acpSource(prompt: string): string {
  const words = prompt.trim();
  return words.includes('\n') ? `%%acp\n${words}` : `%acp ${words}`;
}

/** A position in an editor: 0-based line and column. */
export interface IPosition {
  line: number;
  column: number;
}

/** The lines a selection covers, 1-based (null: nothing is selected). A selection that
 * ends at the start of a line does not cover that line. */
export function selectedLines(
  start: IPosition,
  end: IPosition
): [number, number] | null {
  const [from, to] =
    start.line < end.line ||
    (start.line === end.line && start.column <= end.column)
      ? [start, end]
      : [end, start];
  if (from.line === to.line && from.column === to.column) {
    return null;
  }
  const last = to.column === 0 && to.line > from.line ? to.line - 1 : to.line;
  return [from.line + 1, last + 1];
}

/** How the page names the cell: "cell [4]" (its execution count), else "cell 3". */
export function cellLabel(
  ask: Pick<IAsk, 'index' | 'execution_count'>
): string {
  return ask.execution_count !== null
    ? `cell [${ask.execution_count}]`
    : `cell ${ask.index + 1}`;
}

/** "lines 2–3 of cell [4]", "line 2 of cell [4]", "cell [4]". */
export function askedLabel(
  ask: Pick<IAsk, 'index' | 'execution_count' | 'lines'>
): string {
  if (ask.lines === null) {
    return cellLabel(ask);
  }
  const [first, last] = ask.lines;
  const where = first === last ? `line ${first}` : `lines ${first}–${last}`;
  return `${where} of ${cellLabel(ask)}`;
}

/** Whether a cell's error is one to fix with the agent: not the error of a `%acp` cell
 * itself (a bad option, a turn's own failure), which the agent did not write. */
export function fixable(source: string): boolean {
  return !/^\s*%%?acp(\s|$)/.test(source);
}

/** The first error among a cell's outputs, as text (its traceback), or null. */
export function errorOf(outputs: nbformat.IOutput[]): string | null {
  const error = outputs.find(output => nbformat.isError(output));
  return error === undefined ? null : outputText(error);
}
