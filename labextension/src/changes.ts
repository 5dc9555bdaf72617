/**
 * Changes applied through the notebook's shared model: the same path JupyterLab's own
 * notebook actions take, so they land on the notebook's undo stack and reach every
 * collaborator (with and without jupyter-collaboration).
 */

import { INotebookModel } from '@jupyterlab/notebook';

import { cellIndex, findCell, liveCell } from './cells';
import { Change, ILiveCell } from './protocol';

/** Where a change would land now: the index of its cell (insert: of the new cell). */
export function target(model: INotebookModel, change: Change): number {
  if (change.op === 'insert') {
    return change.after_id === null
      ? 0
      : findCell(model, change.after_id).index + 1;
  }
  return findCell(model, change.cell_id).index;
}

/**
 * Whether the document moved on since the agent read it: its cell (for an insert, the
 * cell to insert after) is gone, or an edited or deleted cell's source differs from the
 * source the agent read. A stale change is answered `stale`, never merged.
 */
export function isStale(model: INotebookModel, change: Change): boolean {
  if (change.op === 'insert') {
    return change.after_id !== null && cellIndex(model, change.after_id) < 0;
  }
  const index = cellIndex(model, change.cell_id);
  return (
    index < 0 ||
    model.cells.get(index).sharedModel.getSource() !== change.expected_source
  );
}

/** The cell a stale change was about, as it is now (null when it is gone). */
export function currentCell(
  model: INotebookModel,
  change: Change,
  max: number
): ILiveCell | null {
  const id = change.op === 'insert' ? change.after_id : change.cell_id;
  const index = id === null ? -1 : cellIndex(model, id);
  return index < 0 ? null : liveCell(model.cells.get(index), index, max);
}

/** Apply a change that is not stale; the cell it produced (null for a delete). */
export function apply(
  model: INotebookModel,
  change: Change,
  max: number
): ILiveCell | null {
  const index = target(model, change);
  switch (change.op) {
    case 'edit': {
      const shared = model.cells.get(index).sharedModel;
      replaceChangedPart(shared, shared.getSource(), change.source);
      return liveCell(model.cells.get(index), index, max);
    }
    case 'insert':
      model.sharedModel.insertCell(index, {
        cell_type: change.cell_type,
        source: change.source,
        metadata: {}
      });
      return liveCell(model.cells.get(index), index, max);
    case 'delete':
      model.sharedModel.deleteCell(index);
      return null;
  }
}

/** The part of `before` that differs from `after`: `before[start:end]` becomes `value`
 * (the common head and tail kept). */
export function changedPart(
  before: string,
  after: string
): { start: number; end: number; value: string } {
  let start = 0;
  while (
    start < before.length &&
    start < after.length &&
    before[start] === after[start]
  ) {
    start++;
  }
  let endBefore = before.length;
  let endAfter = after.length;
  while (
    endBefore > start &&
    endAfter > start &&
    before[endBefore - 1] === after[endAfter - 1]
  ) {
    endBefore--;
    endAfter--;
  }
  return { start, end: endBefore, value: after.slice(start, endAfter) };
}

/** Replace only what differs between the old and new text, so a collaborator's cursor
 * and the undo step cover the change and nothing else. */
function replaceChangedPart(
  shared: { updateSource(start: number, end: number, value?: string): void },
  before: string,
  after: string
): void {
  const { start, end, value } = changedPart(before, after);
  shared.updateSource(start, end, value);
}
