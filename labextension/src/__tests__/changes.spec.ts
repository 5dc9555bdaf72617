import { apply, changedPart, currentCell, isStale, target } from '../changes';
import { Change } from '../protocol';
import { notebookOf } from './notebook';

const sources = (model: ReturnType<typeof notebookOf>): string[] =>
  Array.from({ length: model.cells.length }, (_, i) =>
    model.cells.get(i).sharedModel.getSource()
  );

const twoCells = () =>
  notebookOf([
    { id: 'c-1', cell_type: 'code', source: 'x = 1' },
    { id: 'c-2', cell_type: 'markdown', source: '# Notes' }
  ]);

describe('target', () => {
  it('is the edited cell, or the index a new cell would take', () => {
    const model = twoCells();
    const edit: Change = {
      op: 'edit',
      cell_id: 'c-2',
      source: '',
      expected_source: ''
    };
    const top: Change = {
      op: 'insert',
      after_id: null,
      source: '',
      cell_type: 'code'
    };
    const below: Change = { ...top, after_id: 'c-1' };
    expect([
      target(model, edit),
      target(model, top),
      target(model, below)
    ]).toEqual([1, 0, 1]);
  });

  it('answers not_found for a cell the document does not have', () => {
    const model = twoCells();
    expect(() =>
      target(model, { op: 'delete', cell_id: 'c-gone', expected_source: '' })
    ).toThrow('No cell has the id c-gone; list the cells again.');
  });
});

describe('isStale', () => {
  const model = twoCells();

  it('is false while the cell holds the source the agent read', () => {
    expect(
      isStale(model, {
        op: 'edit',
        cell_id: 'c-1',
        source: 'x = 2',
        expected_source: 'x = 1'
      })
    ).toBe(false);
  });

  it('is true once the cell holds another source', () => {
    expect(
      isStale(model, {
        op: 'delete',
        cell_id: 'c-1',
        expected_source: 'x = 0'
      })
    ).toBe(true);
  });

  it('is true when the cell is gone, for an edit and for an insert below it', () => {
    expect(
      isStale(model, { op: 'delete', cell_id: 'c-9', expected_source: '' })
    ).toBe(true);
    expect(
      isStale(model, {
        op: 'insert',
        after_id: 'c-9',
        source: '',
        cell_type: 'code'
      })
    ).toBe(true);
  });

  it('is never true for an insert at the top', () => {
    expect(
      isStale(model, {
        op: 'insert',
        after_id: null,
        source: '',
        cell_type: 'code'
      })
    ).toBe(false);
  });
});

describe('currentCell', () => {
  it('is the cell a stale change was about, as it is now', () => {
    const model = twoCells();
    const cell = currentCell(
      model,
      { op: 'edit', cell_id: 'c-2', source: '', expected_source: 'old' },
      4000
    );
    expect(cell).toMatchObject({ id: 'c-2', index: 1, source: '# Notes' });
  });

  it('is null when that cell is gone or the insert was at the top', () => {
    const model = twoCells();
    expect(
      currentCell(
        model,
        { op: 'delete', cell_id: 'c-9', expected_source: '' },
        4000
      )
    ).toBeNull();
    expect(
      currentCell(
        model,
        { op: 'insert', after_id: null, source: '', cell_type: 'code' },
        4000
      )
    ).toBeNull();
  });
});

describe('apply', () => {
  it('edits a cell and gives it back as it is after', () => {
    const model = twoCells();
    const cell = apply(
      model,
      { op: 'edit', cell_id: 'c-1', source: 'x = 2', expected_source: 'x = 1' },
      4000
    );
    expect(sources(model)).toEqual(['x = 2', '# Notes']);
    expect(cell).toMatchObject({ id: 'c-1', index: 0, source: 'x = 2' });
  });

  it('inserts a cell of the asked type below a cell or at the top', () => {
    const model = twoCells();
    const below = apply(
      model,
      { op: 'insert', after_id: 'c-1', source: 'raw', cell_type: 'raw' },
      4000
    );
    const top = apply(
      model,
      { op: 'insert', after_id: null, source: '## Top', cell_type: 'markdown' },
      4000
    );
    expect(sources(model)).toEqual(['## Top', 'x = 1', 'raw', '# Notes']);
    expect(below).toMatchObject({ index: 1, cell_type: 'raw', source: 'raw' });
    expect(top).toMatchObject({ index: 0, cell_type: 'markdown' });
    expect(top?.id).not.toBe(below?.id);
  });

  it('deletes a cell and gives no cell back', () => {
    const model = twoCells();
    const cell = apply(
      model,
      { op: 'delete', cell_id: 'c-1', expected_source: 'x = 1' },
      4000
    );
    expect(cell).toBeNull();
    expect(sources(model)).toEqual(['# Notes']);
  });

  it("lands on the cell's undo stack, so undo takes it back", () => {
    const model = twoCells();
    const shared = model.cells.get(0).sharedModel;
    shared.clearUndoHistory();
    apply(
      model,
      {
        op: 'edit',
        cell_id: 'c-1',
        source: 'x = 10',
        expected_source: 'x = 1'
      },
      4000
    );
    expect(shared.canUndo()).toBe(true);
    shared.undo();
    expect(sources(model)).toEqual(['x = 1', '# Notes']);
  });
});

describe('changedPart', () => {
  it('is only the span between the common head and tail', () => {
    expect(changedPart('x = 1\ny = 2', 'x = 1\ny = 3')).toEqual({
      start: 10,
      end: 11,
      value: '3'
    });
  });

  it('is an empty replacement for a pure deletion and an empty span for an insertion', () => {
    expect(changedPart('abcdef', 'abef')).toEqual({
      start: 2,
      end: 4,
      value: ''
    });
    expect(changedPart('abef', 'abcdef')).toEqual({
      start: 2,
      end: 2,
      value: 'cd'
    });
  });

  it('does not let the head and tail overlap in a repeated text', () => {
    expect(changedPart('aa', 'aaa')).toEqual({ start: 2, end: 2, value: 'a' });
  });

  it('is nothing when the texts are equal', () => {
    expect(changedPart('same', 'same')).toEqual({
      start: 4,
      end: 4,
      value: ''
    });
  });
});
