/**
 * DOM helpers shared by the proposal and the review bar. Every string goes in as text
 * (`textContent`), never as HTML: labels and diff lines come from the agent.
 */

import { IDiffLine, IFold } from './diff';

export function element(
  tag: string,
  className: string,
  text?: string
): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A diff line, tinted by kind; a fold says how many lines it hides. */
export function renderLine(line: IDiffLine | IFold): HTMLElement {
  if (line.kind === 'fold') {
    return element(
      'span',
      'acp-live-line acp-live-line-fold',
      `… ${line.count} unchanged line${line.count === 1 ? '' : 's'}`
    );
  }
  const sign =
    line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' ';
  return element(
    'span',
    `acp-live-line acp-live-line-${line.kind}`,
    `${sign} ${line.text}`
  );
}

/** "+3" and "−1", tinted. */
export function counts(added: number, removed: number): HTMLElement[] {
  return [
    element('span', 'acp-live-count-added', `+${added}`),
    element('span', 'acp-live-count-removed', `−${removed}`)
  ];
}

export function button(
  label: string,
  className: string,
  title: string
): HTMLButtonElement {
  const node = element(
    'button',
    `jp-Button jp-mod-styled ${className}`,
    label
  ) as HTMLButtonElement;
  node.title = title;
  return node;
}
