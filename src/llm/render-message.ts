/**
 * One stored message as an agent's context shows it. The room's people and our agents speak plainly; what reached the
 * room from outside them is marked as data (src/llm/untrusted.ts): a tool's output, the lines about uploaded files, a
 * foreign bot's whole message, and the quoted lines in a person's message.
 */
import { quoted, speakerName } from '../room/text/quoting.js';
import type { RoomMessage } from '../room/types.js';
import { clipText } from './budget.js';
import { fromRaw, rawCount, type TokenCounter } from './tokens.js';
import { blockId, cleanText, quotesMarked, rebalanced, untrustedBlock } from './untrusted.js';

/** How much of a past tool result is replayed in later contexts. */
const RESULT_IN_HISTORY = 2000;

/** Whether a message's author is a foreign bot (one the platform's allow list lets in, not one of our agents). */
export type IsForeignBot = (message: RoomMessage) => boolean;

export interface RenderOptions {
  readonly foreignBot?: IsForeignBot | undefined;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n... [${text.length - max} more characters]`;
}

/** A block's id for part `part` of `message`: the same bytes on every turn while the process runs. */
const idOf = (message: RoomMessage, part: string) => blockId(`message:${message.id}:${part}`);

/**
 * `[@speaker]: text`, with the speaker's tool runs before it as `[ran: cmd]` / `[result]: <untrusted …>` and the
 * bridge's lines about its uploaded files after it. What the speaker wrote (and what its tools printed) is quoted, so no
 * line of it passes for another speaker or for the bridge; every text is cleaned of control tokens and tag look-alikes;
 * the same message renders the same bytes every time.
 */
export function renderMessage(message: RoomMessage, options: RenderOptions = {}): string {
  const foreign = message.kind === 'human' && options.foreignBot?.(message) === true;
  // A message is a value, rendered the same every time: a window's message is rendered once, not on every turn.
  const kept = renderings.get(message);
  const hit = foreign ? kept?.foreign : kept?.plain;
  if (hit !== undefined) return hit;
  const rendering = render(message, foreign);
  renderings.set(message, foreign ? { ...kept, foreign: rendering } : { ...kept, plain: rendering });
  return rendering;
}

/** Each message's renderings (as our agents' and as a foreign bot's), for as long as the message is held. */
const renderings = new WeakMap<RoomMessage, { readonly plain?: string; readonly foreign?: string }>();

/** `to` is `from` with its token counts added (the same text): it keeps what `from` was rendered as. */
export function sameRendering(from: RoomMessage, to: RoomMessage): void {
  const kept = renderings.get(from);
  if (kept) renderings.set(to, kept);
}

function render(message: RoomMessage, foreign: boolean): string {
  const speaker = message.kind === 'system' ? 'system' : `@${speakerName(cleanText(message.author))}`;
  const runs = message.toolRuns.map(
    (run, index) =>
      `[ran: ${quoted(cleanText(run.tool === 'bash' ? run.input : `${run.tool} ${run.input}`))}]\n` +
      `[result]: ${untrustedBlock(`tool:${run.tool}`, quoted(clip(run.output, RESULT_IN_HISTORY)), idOf(message, `run:${index}`))}`,
  );
  const text = quoted(cleanText(message.content));
  const content = !text
    ? ''
    : foreign
      ? untrustedBlock('bot', text, idOf(message, 'bot'))
      : message.kind === 'human'
        ? quotesMarked(text, (n) => idOf(message, `quote:${n}`))
        : text;
  const files =
    message.files && message.files.length > 0
      ? untrustedBlock('upload', message.files.join('\n'), idOf(message, 'files'))
      : '';
  const said = [content, files].filter(Boolean);
  return [...runs, `[${speaker}]: ${said.join('\n')}`].join('\n');
}

/** Whether `options` render `message` otherwise than its stored count was counted (a foreign bot's is marked). */
const countedOtherwise = (message: RoomMessage, options: RenderOptions) =>
  message.kind === 'human' && options.foreignBot?.(message) === true;

/**
 * What `renderMessage(message)` costs as `counter` counts it: the count kept with the message for the counter's
 * encoding (the approximation margin applied at use), else counted now.
 */
export function renderedTokens(
  message: RoomMessage,
  counter: TokenCounter,
  rendering?: string,
  options: RenderOptions = {},
): number {
  const raw = countedOtherwise(message, options) ? undefined : message.tokens?.[counter.encoding];
  return raw === undefined ? counter.count(rendering ?? renderMessage(message, options)) : fromRaw(counter, raw);
}

/** The raw count (no margin) of a message's rendering in `encoding`: what is kept with the message. */
export function renderingCount(message: RoomMessage, encoding: TokenCounter['encoding']): number {
  return rawCount(encoding, renderMessage(message));
}

/**
 * A message rendered within `max` tokens: whole when its count (kept, or counted now) fits, else clipped the same
 * way every time (only a huge message: it is counted again then), its blocks closed again after the cut.
 */
export function renderedWithin(
  message: RoomMessage,
  max: number,
  counter: TokenCounter,
  options: RenderOptions = {},
): { text: string; tokens: number; clipped: boolean } {
  const full = renderMessage(message, options);
  const tokens = renderedTokens(message, counter, full, options);
  if (tokens <= max) return { text: full, tokens, clipped: false };
  const text = clipWithin(full, max, counter);
  return { text, tokens: counter.count(text), clipped: text !== full };
}

/** `clipText`, then every block closed again; a little under `max` so that the closing tags fit. */
export function clipWithin(text: string, max: number, counter: TokenCounter): string {
  const clipped = clipText(text, max, counter);
  if (clipped === text) return text;
  const closed = rebalanced(clipped);
  return counter.count(closed) <= max ? closed : rebalanced(clipText(text, Math.max(0, max - 24), counter));
}
