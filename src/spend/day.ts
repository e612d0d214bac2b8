/**
 * The spending day: a calendar date in `SPEND_TZ` (UTC by default). Limits are per day; a day's spend starts at 0.
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(timeZone, format);
  }
  return format;
}

/** The day `at` (ms since the epoch) falls on in `timeZone`, as `YYYY-MM-DD`. */
export function dayOf(at: number, timeZone: string): string {
  const parts = formatFor(timeZone).formatToParts(new Date(at));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** When the day after the one `at` falls on begins in `timeZone` (ms since the epoch, to the minute). */
export function nextDayStart(at: number, timeZone: string): number {
  const today = dayOf(at, timeZone);
  const minute = 60_000;
  // Days are 23 to 25 hours long: step by a quarter hour to the first moment of another day, then back by minutes.
  let later = at - (at % minute) + minute;
  while (dayOf(later, timeZone) === today) later += 15 * minute;
  while (dayOf(later - minute, timeZone) !== today) later -= minute;
  return later;
}

/** `2026-11-27 00:00 Europe/Paris`: a moment as people in `timeZone` read it. */
export function formatMoment(at: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(at));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${timeZone}`;
}
