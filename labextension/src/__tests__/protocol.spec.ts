import {
  maxChars,
  message,
  parseChange,
  parseRequest,
  parseReview,
  PROTOCOL_VERSION,
  RequestError,
  requestId,
  staleRun
} from '../protocol';

/** The RequestError `call` throws. */
function refusal(call: () => unknown): RequestError {
  try {
    call();
  } catch (error) {
    if (error instanceof RequestError) {
      return error;
    }
    throw error;
  }
  throw new Error('no RequestError was thrown');
}

describe('message', () => {
  it('carries the protocol version and its type around its fields', () => {
    expect(message('path', { path: 'a.ipynb' })).toEqual({
      v: PROTOCOL_VERSION,
      type: 'path',
      path: 'a.ipynb'
    });
  });
});

describe('parseChange', () => {
  it('gives an insert without a type a code cell at the top', () => {
    expect(parseChange({ op: 'insert', source: 'x' })).toEqual({
      op: 'insert',
      after_id: null,
      source: 'x',
      cell_type: 'code'
    });
  });

  it('refuses an unknown op, naming it', () => {
    const error = refusal(() => parseChange({ op: 'move' }));
    expect([error.code, error.message]).toEqual([
      'invalid',
      'change.op must be edit, insert or delete, not move'
    ]);
  });

  it('refuses a change without one', () => {
    expect(refusal(() => parseChange(null)).code).toBe('invalid');
  });

  it('refuses an unknown cell type', () => {
    expect(
      refusal(() =>
        parseChange({ op: 'insert', source: '', cell_type: 'heading' })
      ).message
    ).toBe('cell_type must be code, markdown or raw, not heading');
  });

  it('refuses a field that is not a string, naming the field', () => {
    expect(
      refusal(() =>
        parseChange({
          op: 'edit',
          cell_id: 'c',
          source: 1,
          expected_source: ''
        })
      ).message
    ).toBe('source must be a string');
    expect(
      refusal(() =>
        parseChange({ op: 'delete', cell_id: 'c', expected_source: null })
      ).message
    ).toBe('expected_source must be a string');
  });
});

describe('maxChars', () => {
  it('takes a positive bound, whole, and otherwise 4000', () => {
    expect([maxChars(10.7), maxChars(0), maxChars(-5), maxChars('9')]).toEqual([
      10, 4000, 4000, 4000
    ]);
  });
});

describe('parseRequest', () => {
  it('answers a request of no known type invalid, naming the type', () => {
    const error = refusal(() => parseRequest({ type: 'format_cell', id: 1 }));
    expect([error.code, error.message]).toEqual([
      'invalid',
      'Unknown request format_cell.'
    ]);
  });

  it('reads a run without wait as waiting, and a proposal without label as unlabelled', () => {
    expect(
      parseRequest({ type: 'run_cell', cell_id: 'c', source: 'x = 1' })
    ).toEqual({
      type: 'run_cell',
      cell_id: 'c',
      source: 'x = 1',
      wait: true,
      max_output_chars: 4000
    });
    expect(
      parseRequest({
        type: 'propose',
        change: { op: 'delete', cell_id: 'c', expected_source: '' }
      })
    ).toMatchObject({ label: '' });
  });

  it('refuses a run without the source that was approved', () => {
    // Without it the page could not tell what was approved, and would run the cell as it is.
    expect(
      refusal(() => parseRequest({ type: 'run_cell', cell_id: 'c' })).message
    ).toBe('source must be a string');
  });

  it('refuses a read without a cell id', () => {
    expect(refusal(() => parseRequest({ type: 'read_cell' })).message).toBe(
      'cell_id must be a string'
    );
  });
});

describe('requestId', () => {
  it('is the id when it is a number, else null', () => {
    expect([
      requestId({ id: 3 }),
      requestId({ id: '3' }),
      requestId({})
    ]).toEqual([3, null, null]);
  });
});

describe('parseReview', () => {
  const review = (changes: unknown) => ({
    review: 'r1',
    cell_id: null,
    changes,
    revert_all: 'yes',
    message: 42
  });

  it('reads what is not exactly true as false and a message that is not text as none', () => {
    expect(parseReview(review([]))).toEqual({
      review: 'r1',
      cell_id: null,
      changes: [],
      revert_all: false,
      forgotten: false,
      message: null
    });
  });

  it('shows an unknown status as changed and a bad count as zero', () => {
    const [change] = parseReview(
      review([
        {
          label: 'a.txt',
          status: 'exploded',
          added: -3,
          removed: 2.5,
          revision: 'abc'
        }
      ])
    ).changes;
    expect(change).toMatchObject({
      status: 'changed',
      target: 'file',
      added: 0,
      removed: 2,
      hunks: []
    });
  });

  it('refuses a line of an unknown kind and changes that are not a list', () => {
    const hunks = [{ header: '@@', lines: [{ kind: 'moved', text: 'x' }] }];
    expect(
      refusal(() => parseReview(review([{ label: 'a', revision: 'r', hunks }])))
        .message
    ).toBe('line kind moved is unknown');
    expect(refusal(() => parseReview(review({}))).message).toBe(
      'changes must be a list'
    );
  });
});

describe('staleRun', () => {
  // An agent rewrote a cell while the card showing its code waited, and the page ran the
  // new source: a cell runs only while it holds the source that was approved.
  const approved = parseRequest({
    type: 'run_cell',
    cell_id: 'c',
    source: 'x = 1'
  });

  it('lets the approved source run', () => {
    expect(approved.type === 'run_cell' && staleRun('x = 1', approved)).toBe(
      false
    );
  });

  it('refuses a cell that changed since', () => {
    expect(
      approved.type === 'run_cell' &&
        staleRun("import shutil; shutil.rmtree('data')", approved)
    ).toBe(true);
  });
});
