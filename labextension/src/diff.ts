/**
 * A line diff of a cell's old and new source, shown like the file diffs in the
 * tool-call cards: added and removed lines tinted, long unchanged runs folded.
 */

export type LineKind = 'added' | 'removed' | 'context';

export interface IDiffLine {
  kind: LineKind;
  text: string;
}

/** Beyond this many (old x new) line pairs the diff is "all removed, all added". */
const MAX_CELLS = 4_000_000;

export function splitLines(source: string): string[] {
  return source === '' ? [] : source.split('\n');
}

/** The lines of old and new, each marked added, removed or unchanged (LCS). */
export function diffLines(oldSource: string, newSource: string): IDiffLine[] {
  const a = splitLines(oldSource);
  const b = splitLines(newSource);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    start++;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a
    .slice(0, start)
    .map(text => ({ kind: 'context' as const, text }));
  const tail = a.slice(endA).map(text => ({ kind: 'context' as const, text }));
  return [
    ...head,
    ...middle(a.slice(start, endA), b.slice(start, endB)),
    ...tail
  ];
}

function middle(a: string[], b: string[]): IDiffLine[] {
  const removed = a.map(text => ({ kind: 'removed' as const, text }));
  const added = b.map(text => ({ kind: 'added' as const, text }));
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_CELLS) {
    return [...removed, ...added];
  }
  // lcs[i][j]: length of the longest common subsequence of a[i:] and b[j:].
  const lcs: Uint32Array[] = [];
  for (let i = 0; i <= a.length; i++) {
    lcs.push(new Uint32Array(b.length + 1));
  }
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] =
        a[i] === b[j]
          ? lcs[i + 1][j + 1] + 1
          : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const lines: IDiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ kind: 'context', text: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      lines.push({ kind: 'removed', text: a[i++] });
    } else {
      lines.push({ kind: 'added', text: b[j++] });
    }
  }
  return [...lines, ...removed.slice(i), ...added.slice(j)];
}

/** A run of unchanged lines folded away: how many. */
export interface IFold {
  kind: 'fold';
  count: number;
}

/** Unchanged runs longer than 2 * `context` + 1 lines folded to their edges. */
export function fold(
  lines: IDiffLine[],
  context = 3
): Array<IDiffLine | IFold> {
  const shown: Array<IDiffLine | IFold> = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== 'context') {
      shown.push(lines[i++]);
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end].kind === 'context') {
      end++;
    }
    const keepHead = i === 0 ? 0 : context;
    const keepTail = end === lines.length ? 0 : context;
    if (end - i > keepHead + keepTail + 1) {
      shown.push(...lines.slice(i, i + keepHead));
      shown.push({ kind: 'fold', count: end - i - keepHead - keepTail });
      shown.push(...lines.slice(end - keepTail, end));
    } else {
      shown.push(...lines.slice(i, end));
    }
    i = end;
  }
  return shown;
}

export function stats(lines: IDiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === 'added') {
      added++;
    } else if (line.kind === 'removed') {
      removed++;
    }
  }
  return { added, removed };
}
