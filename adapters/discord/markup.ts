/**
 * Discord's own markup made readable for the agents: channel mentions and unlabeled links to channels or messages
 * become `#channel-name`, custom emoji `:name:`, `<t:…>` timestamps a date in UTC (every style), and command
 * mentions `</name:id>` the command as typed. Code is left as written.
 */
import { mapProse } from '../../src/room/text/code-spans.js';

export interface MarkupContext {
  /** A guild channel's name by id (from the receiving client's cache). */
  readonly channelName: (id: string) => string | undefined;
  /** When the message was written: a relative timestamp (`<t:…:R>`) is read against it. */
  readonly at: number;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const two = (n: number) => String(n).padStart(2, '0');

/** A point in time as the style shows it; the bridge does not know the reader's zone, so UTC, said so. */
function formatTime(ms: number, style: string, at: number): string {
  const d = new Date(ms);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
  const date = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  switch (style) {
    case 't':
      return `${time} UTC`;
    case 'T':
      return `${time}:${two(d.getUTCSeconds())} UTC`;
    case 'd':
      return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
    case 'D':
      return date;
    case 'F':
      return `${WEEKDAYS[d.getUTCDay()]}, ${date} ${time} UTC`;
    case 'R':
      return `${date} ${time} UTC (${relative(ms - at)} from when this was written)`;
    default: // `f`, and styles Discord may add later
      return `${date} ${time} UTC`;
  }
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];
const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

function relative(deltaMs: number): string {
  const [unit, size] = UNITS.find(([, length]) => Math.abs(deltaMs) >= length) ?? ['second', 1000];
  return relativeFormat.format(Math.round(deltaMs / size), unit);
}

/** Discord's message links, on any of its hosts: guild (or `@me`), channel, and optionally a message. */
const CHANNEL_LINK =
  /(?<!\]\()<?https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/channels\/(?:\d+|@me)\/(\d+)(?:\/(\d+))?\/?>?(?![\w/])/g;

export function plainMarkup(text: string, context: MarkupContext): string {
  return mapProse(text, (prose) =>
    prose
      .replace(/<#(\d+)>/g, (raw, id: string) => {
        const name = context.channelName(id);
        return name ? `#${name}` : raw;
      })
      .replace(CHANNEL_LINK, (raw, channel: string, message: string | undefined) => {
        const name = context.channelName(channel);
        if (!name) return raw;
        return message ? `a message in #${name}` : `#${name}`;
      })
      .replace(/<a?:(\w+):\d+>/g, ':$1:')
      .replace(/<t:(-?\d{1,13})(?::([A-Za-z]))?>/g, (raw, seconds: string, style: string | undefined) => {
        const ms = Number(seconds) * 1000;
        // Beyond what a Date holds (±8.64e15 ms): leave it as written.
        return Math.abs(ms) <= 8.64e15 ? formatTime(ms, style ?? 'f', context.at) : raw;
      })
      .replace(/<\/([-_\p{L}\p{N}]+(?: [-_\p{L}\p{N}]+){0,2}):\d+>/gu, '/$1'),
  );
}
