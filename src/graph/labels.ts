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

/** Colours and shapes of each kind of node, shared by the DOT and Mermaid writers. */
export const PALETTE = {
  hook: { fill: '#dbe9f6', stroke: '#4a78b0' },
  chain: { fill: '#ffffff', stroke: '#333333' },
  capture: { fill: '#c7e9c0', stroke: '#2e7d32' },
  pass: { fill: '#eeeeee', stroke: '#666666' },
  drop: { fill: '#f4cccc', stroke: '#a61c00' },
  effect: { fill: '#fff2cc', stroke: '#b58900' },
  unknown: { fill: '#eeeeee', stroke: '#999999' },
} as const;

/** How a trace picture draws the walk and dims the rest. */
export const WALK = { lit: '#c0392b', dimStroke: '#cccccc', dimText: '#aaaaaa', dimFill: '#f7f7f7' } as const;
