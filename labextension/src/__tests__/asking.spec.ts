/**
 * What the Fix button and "Ask about this cell" write and send: the `%acp` cell's source,
 * the selected lines, how the cell is named, the error an output shows, and the note a
 * stale proposal leaves.
 */

import {
  acpSource,
  askedLabel,
  errorOf,
  FIX_SOURCE,
  fixable,
  selectedLines
} from '../asking';
import { staleSentence } from '../stale';

describe('the %acp cell the page writes', () => {
  it('is one %acp line for a one-line prompt, a %%acp cell for more', () => {
    expect(acpSource('  make it faster ')).toBe('%acp make it faster');
    expect(acpSource('first\nsecond')).toBe('%%acp\nfirst\nsecond');
    expect(FIX_SOURCE).toBe('%acp --fix');
  });
});

describe('the selected lines', () => {
  it('are 1-based, whichever way the selection was made', () => {
    expect(
      selectedLines({ line: 1, column: 0 }, { line: 2, column: 5 })
    ).toEqual([2, 3]);
    expect(
      selectedLines({ line: 2, column: 5 }, { line: 1, column: 0 })
    ).toEqual([2, 3]);
  });

  it('leave out the line a selection ends at the start of', () => {
    expect(
      selectedLines({ line: 1, column: 0 }, { line: 3, column: 0 })
    ).toEqual([2, 3]);
    expect(
      selectedLines({ line: 0, column: 2 }, { line: 0, column: 4 })
    ).toEqual([1, 1]);
  });

  it('are none for a bare cursor: the whole cell is asked about', () => {
    expect(
      selectedLines({ line: 2, column: 3 }, { line: 2, column: 3 })
    ).toBeNull();
  });
});

describe('how the asked cell is named', () => {
  it('by its execution count, else its place, with its lines', () => {
    expect(askedLabel({ index: 2, execution_count: 7, lines: [2, 3] })).toBe(
      'lines 2–3 of cell [7]'
    );
    expect(askedLabel({ index: 2, execution_count: null, lines: [4, 4] })).toBe(
      'line 4 of cell 3'
    );
    expect(askedLabel({ index: 0, execution_count: 1, lines: null })).toBe(
      'cell [1]'
    );
  });
});

describe('the error a Fix is about', () => {
  it('is the first error output as text, without terminal colours', () => {
    const outputs = [
      { output_type: 'stream', name: 'stdout', text: 'before\n' },
      {
        output_type: 'error',
        ename: 'ZeroDivisionError',
        evalue: 'division by zero',
        traceback: [
          '\u001b[31mZeroDivisionError\u001b[0m Traceback',
          'ZeroDivisionError: division by zero'
        ]
      }
    ];
    expect(errorOf(outputs)).toBe(
      'ZeroDivisionError Traceback\nZeroDivisionError: division by zero'
    );
    expect(errorOf([outputs[0]])).toBeNull();
  });

  it("is not a %acp cell's own error", () => {
    expect(fixable('1/0')).toBe(true);
    expect(fixable('x = 1\n%acp explain')).toBe(true);
    expect(fixable('%acp --bogus')).toBe(false);
    expect(fixable('  %%acp\nfix it')).toBe(false);
    expect(fixable('%acpx = 1')).toBe(true);
  });
});

describe('a proposal the user made stale', () => {
  it('says why it went, naming what the agent meant to do', () => {
    expect(staleSentence('Rename x to y')).toBe(
      "The agent's proposed edit (Rename x to y) was withdrawn: you changed this " +
        'cell while it waited, and it was made against the text the agent had read.'
    );
    expect(staleSentence('')).toContain(
      "The agent's proposed edit was withdrawn"
    );
  });
});
