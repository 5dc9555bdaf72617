/**
 * Cells of the live document as the kernel sees them: id, type, source (unsaved edits
 * included), execution count, and outputs as bounded text.
 */

import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import * as nbformat from '@jupyterlab/nbformat';
import { INotebookModel } from '@jupyterlab/notebook';

import { CellType, ILiveCell, RequestError } from './protocol';

// Terminal colour codes in tracebacks (CSI sequences).
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

function joined(value: nbformat.MultilineString | undefined): string {
  return Array.isArray(value) ? value.join('') : (value ?? '');
}

/** One output as text: streams and text/plain as they are, errors with their traceback,
 * anything else as the list of its MIME types. */
export function outputText(output: nbformat.IOutput): string {
  if (nbformat.isStream(output)) {
    return joined(output.text);
  }
  if (nbformat.isError(output)) {
    const traceback = (output.traceback ?? []).join('\n').replace(ANSI, '');
    return traceback || `${output.ename}: ${output.evalue}`;
  }
  if (nbformat.isExecuteResult(output) || nbformat.isDisplayData(output)) {
    const plain = output.data['text/plain'] as
      nbformat.MultilineString | undefined;
    return plain !== undefined
      ? joined(plain)
      : `[${Object.keys(output.data).join(', ')}]`;
  }
  return '';
}

export function outputsText(
  outputs: nbformat.IOutput[],
  max: number
): { text: string; truncated: boolean } {
  const text = outputs
    .map(outputText)
    .map(part => (part.endsWith('\n') || part === '' ? part : part + '\n'))
    .join('');
  return text.length > max
    ? { text: text.slice(0, max), truncated: true }
    : { text, truncated: false };
}

export function liveCell(
  model: ICellModel,
  index: number,
  max: number
): ILiveCell {
  let executionCount: number | null = null;
  let outputs = { text: '', truncated: false };
  if (model.type === 'code') {
    const code = model as ICodeCellModel;
    executionCount = code.executionCount ?? null;
    outputs = outputsText(code.outputs.toJSON(), max);
  }
  return {
    id: model.id,
    index,
    cell_type: model.type as CellType,
    source: model.sharedModel.getSource(),
    execution_count: executionCount,
    outputs_text: outputs.text,
    truncated: outputs.truncated
  };
}

export function cellIndex(model: INotebookModel, cellId: string): number {
  for (let i = 0; i < model.cells.length; i++) {
    if (model.cells.get(i).id === cellId) {
      return i;
    }
  }
  return -1;
}

/** The cell with that id and its index; `not_found` if the document has none. */
export function findCell(
  model: INotebookModel,
  cellId: string
): { cell: ICellModel; index: number } {
  const index = cellIndex(model, cellId);
  if (index < 0) {
    throw new RequestError(
      'not_found',
      `No cell has the id ${cellId}; list the cells again.`
    );
  }
  return { cell: model.cells.get(index), index };
}
