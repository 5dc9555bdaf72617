import { diffLines, fold, IDiffLine, splitLines, stats } from '../diff';

const added = (text: string): IDiffLine => ({ kind: 'added', text });
const removed = (text: string): IDiffLine => ({ kind: 'removed', text });
const context = (text: string): IDiffLine => ({ kind: 'context', text });

describe('splitLines', () => {
  it('has no lines for an empty source, and keeps a trailing empty line', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b', '']);
  });
});

describe('diffLines', () => {
  it('marks every line unchanged when the sources are equal', () => {
    expect(diffLines('a\nb', 'a\nb')).toEqual([context('a'), context('b')]);
  });

  it('marks a replaced line removed then added, between its unchanged neighbours', () => {
    expect(diffLines('a\nb\nc', 'a\nB\nc')).toEqual([
      context('a'),
      removed('b'),
      added('B'),
      context('c')
    ]);
  });

  it('keeps the longest common run unchanged inside a changed middle', () => {
    expect(diffLines('x\na\nb\ny', 'p\na\nb\nq')).toEqual([
      removed('x'),
      added('p'),
      context('a'),
      context('b'),
      removed('y'),
      added('q')
    ]);
  });

  it('shows a new cell all added and a deleted cell all removed', () => {
    expect(diffLines('', 'a\nb')).toEqual([added('a'), added('b')]);
    expect(diffLines('a\nb', '')).toEqual([removed('a'), removed('b')]);
  });

  it('shows a very large change as all removed then all added', () => {
    const old = Array.from({ length: 2001 }, (_, i) => `old ${i}`).join('\n');
    const now = Array.from({ length: 2001 }, (_, i) =>
      i % 2 ? `old ${i}` : `new ${i}`
    ).join('\n');
    const lines = diffLines(old, now);
    expect(stats(lines)).toEqual({ added: 2001, removed: 2001 });
    expect(lines.slice(0, 2001).every(line => line.kind === 'removed')).toBe(
      true
    );
  });
});

describe('fold', () => {
  const run = (n: number, name: string) =>
    Array.from({ length: n }, (_, i) => context(`${name}${i}`));

  it('folds a long unchanged run between changes to its three edge lines on each side', () => {
    const lines = [added('x'), ...run(10, 'c'), removed('y')];
    expect(fold(lines)).toEqual([
      added('x'),
      ...run(3, 'c'),
      { kind: 'fold', count: 4 },
      context('c7'),
      context('c8'),
      context('c9'),
      removed('y')
    ]);
  });

  it('folds a leading and a trailing run entirely but for the lines near a change', () => {
    const lines = [...run(5, 'h'), added('x'), ...run(5, 't')];
    expect(fold(lines, 1)).toEqual([
      { kind: 'fold', count: 4 },
      context('h4'),
      added('x'),
      context('t0'),
      { kind: 'fold', count: 4 }
    ]);
  });

  it('keeps a run that folding would save only one line of', () => {
    const lines = [added('x'), ...run(7, 'c'), removed('y')];
    expect(fold(lines)).toEqual(lines);
  });
});

describe('stats', () => {
  it('counts the added and the removed lines', () => {
    expect(stats([added('a'), context('b'), removed('c'), added('d')])).toEqual(
      { added: 2, removed: 1 }
    );
  });
});
