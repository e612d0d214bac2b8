/**
 * Reads what a model is shown as the bridge marks it: the text outside untrusted blocks, and each block's source, id and
 * body. Strict, as a careful model would read it: a block ends only at the closing tag with its own id, and a tag
 * anywhere else (a closing tag with no block open, a block opened inside another) is an error.
 */

export interface ReadBlock {
  readonly source: string;
  readonly id: string;
  readonly body: string;
}

export interface MarkedText {
  /** Everything outside the blocks, each block replaced by `⟦block⟧`. */
  readonly outside: string;
  readonly blocks: readonly ReadBlock[];
}

/** `<untrusted` or `</untrusted` as a careful reader would take it: look-alikes, entities, spaces, invisible marks. */
export const STRAY_TAG = /(?:[<＜﹤]|&lt;|&#0*60;|&#x0*3c;)[\s\p{Cf}]*[/／]?[\s\p{Cf}]*untrusted/iu;

const TAG = /<untrusted source="([^"\n]*)" id="(\d+)">\n|\n<\/untrusted id="(\d+)">/g;

export function readMarked(text: string): MarkedText {
  const blocks: ReadBlock[] = [];
  let outside = '';
  let open: { source: string; id: string; from: number } | undefined;
  let last = 0;
  for (const match of text.matchAll(TAG)) {
    const at = match.index ?? 0;
    if (match[1] !== undefined) {
      if (open) throw new Error(`a block opened inside block ${open.id}: ${match[0]}`);
      outside += text.slice(last, at);
      open = { source: match[1], id: match[2] ?? '', from: at + match[0].length };
    } else {
      if (!open) throw new Error(`a closing tag with no block open: ${match[0]}`);
      if (match[3] !== open.id) throw new Error(`block ${open.id} closed by id ${match[3]}`);
      const body = text.slice(open.from, at);
      if (STRAY_TAG.test(body)) throw new Error(`a tag left in block ${open.id}`);
      blocks.push({ source: open.source, id: open.id, body });
      outside += '⟦block⟧';
      open = undefined;
    }
    last = at + match[0].length;
  }
  if (open) throw new Error(`block ${open.id} is never closed`);
  outside += text.slice(last);
  return { outside, blocks };
}

/** A tool result's body: its content must be exactly one block. */
export function dataOf(content: unknown): string {
  const text = String(content);
  const { outside, blocks } = readMarked(text);
  if (outside !== '⟦block⟧' || blocks.length !== 1) throw new Error(`not one untrusted block: ${text.slice(0, 200)}`);
  return blocks[0]?.body ?? '';
}

/** `text` checked as `readMarked` reads it, with every block's id shown as `N`: what a test can spell out. */
export function idsHidden(text: string): string {
  readMarked(text);
  return text
    .replace(/<untrusted source="([^"\n]*)" id="\d+">/g, '<untrusted source="$1" id="N">')
    .replace(/<\/untrusted id="\d+">/g, '</untrusted id="N">');
}

/** The untrusted block a test expects: `source`'s lines, under the id `idsHidden` shows. */
export function block(source: string, ...lines: string[]): string {
  return `<untrusted source="${source}" id="N">\n${lines.join('\n')}\n</untrusted id="N">`;
}
