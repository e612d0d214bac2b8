/**
 * Loop defence beyond the turn limit. Pure functions: the bridge feeds them the room's messages.
 */
import { stripCode } from './mentions.js';

/** Words that only acknowledge; a message made of nothing else moves nothing forward. */
const ACK_WORDS = new Set([
  'ok',
  'okay',
  'k',
  'thanks',
  'thank',
  'you',
  'thx',
  'ty',
  'cheers',
  'great',
  'perfect',
  'cool',
  'nice',
  'awesome',
  'got',
  'it',
  'noted',
  'sounds',
  'good',
  'sure',
  'will',
  'do',
  'understood',
  'roger',
  'agreed',
  'likewise',
  'welcome',
  "you're",
  'youre',
  'no',
  'problem',
  'np',
  'anytime',
  'glad',
  'to',
  'help',
  'much',
  'so',
  'a',
  'lot',
  'again',
  'all',
  'right',
  'alright',
  'yes',
  'yep',
  'indeed',
  'exactly',
  'same',
  'here',
  'and',
  'the',
  'for',
  'that',
  'this',
  'me',
  'too',
  'as',
  'well',
]);

/** Lower-cased words of the text, with mentions, code, punctuation and emoji removed. */
function words(text: string): string[] {
  return stripCode(text)
    .toLowerCase()
    .replace(/@[a-z0-9_-]+/g, ' ')
    .replace(/[^a-z0-9'\s]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** True for a message that only acknowledges: "thanks!", "got it", "ok @code", "thank you so much". */
export function isAcknowledgement(text: string): boolean {
  const list = words(text);
  if (list.length === 0)
    return (
      stripCode(text)
        .replace(/@[\p{L}\p{N}_-]+/gu, '')
        .trim().length < 8
    );
  return list.length <= 8 && list.every((word) => ACK_WORDS.has(word));
}

const normalise = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The no-progress guard: an agent message that only acknowledges, or repeats its author's previous
 * message, wakes no one.
 */
export function isNoProgress(text: string, previousOwn: string | undefined): boolean {
  if (isAcknowledgement(text)) return true;
  return previousOwn !== undefined && normalise(previousOwn) === normalise(text);
}

export interface PairGuardOptions {
  /** seed: more than 30 messages between the same two agents... */
  readonly limit: number;
  /** ...within 10 minutes. */
  readonly windowMs: number;
}

export const PAIR_GUARD: PairGuardOptions = { limit: 30, windowMs: 10 * 60_000 };

export interface Exchange {
  readonly author: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly at: number;
}

/** A stable key for an unordered pair of agents. */
export function pairKey(a: string, b: string): string {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()].sort();
  return `${x}+${y}`;
}

/**
 * How many messages `a` and `b` exchanged in the window before `now`: agent messages by one of
 * them that follow an agent message by the other. Human messages in between do not reset it.
 */
export function pairExchanges(
  messages: readonly Exchange[],
  a: string,
  b: string,
  now: number,
  options: PairGuardOptions = PAIR_GUARD,
): number {
  const key = pairKey(a, b);
  let count = 0;
  let lastAgent: string | undefined;
  for (const message of messages) {
    if (message.kind !== 'agent') continue; // humans' messages neither count nor break the chain
    if (lastAgent && message.at > now - options.windowMs && pairKey(lastAgent, message.author) === key) {
      if (lastAgent.toLowerCase() !== message.author.toLowerCase()) count++;
    }
    lastAgent = message.author;
  }
  return count;
}

/** True when `a` and `b` have exchanged more than the limit within the window: they are paused. */
export function pairPaused(
  messages: readonly Exchange[],
  a: string,
  b: string,
  now: number,
  options: PairGuardOptions = PAIR_GUARD,
): boolean {
  return pairExchanges(messages, a, b, now, options) > options.limit;
}
