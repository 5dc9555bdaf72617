import * as nbformat from '@jupyterlab/nbformat';

import {
  cellIndex,
  findCell,
  liveCell,
  outputsText,
  outputText
} from '../cells';
import { RequestError } from '../protocol';
import { notebookOf } from './notebook';

describe('outputText', () => {
  it('gives a stream as its text, joined when it is a list of lines', () => {
    const output: nbformat.IStream = {
      output_type: 'stream',
      name: 'stdout',
      text: ['one\n', 'two\n']
    };
    expect(outputText(output)).toBe('one\ntwo\n');
  });

  it('gives an error as its traceback without terminal colour codes', () => {
    const output: nbformat.IError = {
      output_type: 'error',
      ename: 'NameError',
      evalue: "name 'x' is not defined",
      traceback: ['\u001b[0;31mNameError\u001b[0m: boom', 'line 2']
    };
    expect(outputText(output)).toBe('NameError: boom\nline 2');
  });

  it('gives an error without a traceback as its name and value', () => {
    const output: nbformat.IError = {
      output_type: 'error',
      ename: 'KeyError',
      evalue: "'a'",
      traceback: []
    };
    expect(outputText(output)).toBe("KeyError: 'a'");
  });

  it('gives a result as its text/plain', () => {
    const output: nbformat.IExecuteResult = {
      output_type: 'execute_result',
      execution_count: 1,
      data: { 'text/plain': ['   x\n', '0  1'], 'text/html': '<table/>' },
      metadata: {}
    };
    expect(outputText(output)).toBe('   x\n0  1');
  });

  it('gives a display without text/plain as the list of its MIME types', () => {
    const output: nbformat.IDisplayData = {
      output_type: 'display_data',
      data: { 'image/png': 'iVBOR', 'text/html': '<img>' },
      metadata: {}
    };
    expect(outputText(output)).toBe('[image/png, text/html]');
  });
});

describe('outputsText', () => {
  const stream = (text: string): nbformat.IStream => ({
    output_type: 'stream',
    name: 'stdout',
    text
  });

  it('ends every output with a newline and joins them', () => {
    expect(outputsText([stream('a'), stream('b\n'), stream('')], 100)).toEqual({
      text: 'a\nb\n',
      truncated: false
    });
  });

  it('cuts the text at the bound and says so', () => {
    expect(outputsText([stream('0123456789')], 4)).toEqual({
      text: '0123',
      truncated: true
    });
  });

  it('keeps a text exactly at the bound whole', () => {
    expect(outputsText([stream('abc')], 4)).toEqual({
      text: 'abc\n',
      truncated: false
    });
  });
});

describe('liveCell', () => {
  it('reads a code cell with its execution count and bounded outputs', () => {
    const model = notebookOf([
      {
        id: 'c-1',
        cell_type: 'code',
        source: 'print(1)',
        execution_count: 7,
        output: '1\n2\n3\n'
      }
    ]);
    expect(liveCell(model.cells.get(0), 0, 3)).toEqual({
      id: 'c-1',
      index: 0,
      cell_type: 'code',
      source: 'print(1)',
      execution_count: 7,
      outputs_text: '1\n2',
      truncated: true
    });
  });

  it('reads a markdown cell with no count and no outputs', () => {
    const model = notebookOf([
      { id: 'c-a', cell_type: 'code', source: '' },
      { id: 'c-md', cell_type: 'markdown', source: '# Title' }
    ]);
    expect(liveCell(model.cells.get(1), 1, 4000)).toEqual({
      id: 'c-md',
      index: 1,
      cell_type: 'markdown',
      source: '# Title',
      execution_count: null,
      outputs_text: '',
      truncated: false
    });
  });

  it('includes an edit that is not saved yet', () => {
    const model = notebookOf([{ id: 'c-1', cell_type: 'code', source: 'a' }]);
    model.cells.get(0).sharedModel.setSource('a = 2');
    expect(liveCell(model.cells.get(0), 0, 4000).source).toBe('a = 2');
  });
});

describe('findCell', () => {
  const model = notebookOf([
    { id: 'c-1', cell_type: 'code', source: 'x' },
    { id: 'c-2', cell_type: 'raw', source: 'y' }
  ]);

  it('finds a cell and its index by id', () => {
    const found = findCell(model, 'c-2');
    expect(found.index).toBe(1);
    expect(found.cell.sharedModel.getSource()).toBe('y');
    expect(cellIndex(model, 'c-1')).toBe(0);
  });

  it('answers not_found for an id the document does not have', () => {
    expect(cellIndex(model, 'c-gone')).toBe(-1);
    let caught: unknown;
    try {
      findCell(model, 'c-gone');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RequestError);
    expect((caught as RequestError).code).toBe('not_found');
    expect((caught as RequestError).message).toBe(
      'No cell has the id c-gone; list the cells again.'
    );
  });
});
