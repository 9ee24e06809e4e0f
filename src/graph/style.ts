import type { NodeKind } from './model.js';

/** A label broken at spaces into lines of at most `width` characters (a longer word stays whole). */
export function wrapLabel(text: string, width = 44): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** Each kind of node: its colours, and its shape in DOT and in Mermaid (the brackets around its label). */
export const KIND_STYLE: Record<NodeKind, { readonly fill: string; readonly stroke: string; readonly dot: readonly [shape: string, style: string]; readonly mermaid: readonly [string, string] }> = {
  hook: { fill: '#dbe9f6', stroke: '#4a78b0', dot: ['cds', 'filled'], mermaid: ['>', ']'] },
  chain: { fill: '#ffffff', stroke: '#333333', dot: ['box', 'rounded,filled'], mermaid: ['(', ')'] },
  capture: { fill: '#c7e9c0', stroke: '#2e7d32', dot: ['box', 'filled,bold'], mermaid: ['[[', ']]'] },
  pass: { fill: '#eeeeee', stroke: '#666666', dot: ['ellipse', 'filled'], mermaid: ['([', '])'] },
  drop: { fill: '#f4cccc', stroke: '#a61c00', dot: ['octagon', 'filled'], mermaid: ['{{', '}}'] },
  effect: { fill: '#fff2cc', stroke: '#b58900', dot: ['note', 'filled'], mermaid: ['[/', '/]'] },
  unknown: { fill: '#eeeeee', stroke: '#999999', dot: ['box', 'dashed,filled'], mermaid: ['[', ']'] },
};

/** How a trace picture draws the walk and dims the rest. */
export const WALK = { lit: '#c0392b', dimStroke: '#cccccc', dimText: '#aaaaaa', dimFill: '#f7f7f7' } as const;
