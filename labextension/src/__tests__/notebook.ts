/**
 * Real JupyterLab notebook models for the tests: cells made from the wire's cells, so a
 * test reads them back through the extension's own functions.
 */

import * as nbformat from '@jupyterlab/nbformat';
import { NotebookModel } from '@jupyterlab/notebook/lib/model';

import { ILiveCell } from '../protocol';

// @jupyter/ydoc makes each cell outside the notebook's document before inserting it, as
// the application does too; yjs warns about that on every cell. Only those two
// warnings are dropped.
const YDOC_NOISE = [
  'Invalid access: Add Yjs type to a document before reading data.',
  '[yjs#509] Not same Y.Doc'
];
const warn = console.warn.bind(console);
jest
  .spyOn(console, 'warn')
  .mockImplementation((...args: unknown[]) =>
    YDOC_NOISE.includes(String(args[0])) ? undefined : warn(...args)
  );

/** A cell as a notebook holds it: the outputs are a stream whose text is `output`. */
export interface ICellSpec {
  id: string;
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
  execution_count?: number | null;
  output?: string;
}

export function notebookOf(cells: ICellSpec[]): NotebookModel {
  const model = new NotebookModel();
  model.fromJSON({
    cells: cells.map(cellJson),
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5
  });
  return model;
}

function cellJson(spec: ICellSpec): nbformat.ICell {
  if (spec.cell_type !== 'code') {
    return {
      id: spec.id,
      cell_type: spec.cell_type,
      source: spec.source,
      metadata: {}
    } as nbformat.ICell;
  }
  const outputs: nbformat.IOutput[] =
    spec.output === undefined
      ? []
      : [{ output_type: 'stream', name: 'stdout', text: spec.output }];
  return {
    id: spec.id,
    cell_type: 'code',
    source: spec.source,
    metadata: {},
    execution_count: spec.execution_count ?? null,
    outputs
  };
}

/** The notebook cell a wire cell describes, and the output bound that gives its
 * `outputs_text` (a truncated cell's outputs go on past the bound). */
export function specOf(cell: ILiveCell): { spec: ICellSpec; max: number } {
  const cut = cell.truncated;
  return {
    spec: {
      id: cell.id,
      cell_type: cell.cell_type,
      source: cell.source,
      execution_count: cell.execution_count,
      output:
        cell.cell_type === 'code' && cell.outputs_text !== ''
          ? cell.outputs_text + (cut ? 'and the rest\n' : '')
          : undefined
    },
    max: cut ? cell.outputs_text.length : 4000
  };
}
