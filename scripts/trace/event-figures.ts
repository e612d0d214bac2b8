/**
 * The collaborator-level figures of a route and of each event on it (see scripts/trace-route.ts for the
 * definitions): pure counting over lists of function entries, kept apart from the tracing so that it can be checked
 * on lists written by hand.
 */
import { type Loop, ROOM_LOOP } from './events.js';
import type { Entry, Goal, Hop } from './route-figures.js';

/** Areas whose entries are no hop: the pure room, the store, the tools (a hop is counted across them). */
const TRANSPARENT = ['src/room/', 'src/store/', 'src/tools/'];

/**
 * The collaborator a file is part of: an adapter's folder (`adapters/discord`), `src/llm`, else the file itself (each
 * file of the shell, src/bridge/**, and of the rest of src/); undefined for `src/room`, `src/store`, `src/tools`.
 */
export function collaboratorOf(file: string): string | undefined {
  if (TRANSPARENT.some((area) => file.startsWith(area))) return undefined;
  const parts = file.split('/');
  if (parts[0] === 'adapters' && parts.length > 2) return `adapters/${parts[1]}`;
  if (file.startsWith('src/llm/')) return 'src/llm';
  return file;
}

export interface CollaboratorFigures {
  /** Entries counted (those of the transparent areas left out). */
  readonly entries: number;
  /** Hops between collaborators; `from` and `to` are the entries on either side, `at` the position of `to`. */
  readonly hops: readonly Hop[];
  readonly returns: readonly Hop[];
  /** Returns into any collaborator but the loop's. */
  readonly returnsOutsideLoop: readonly Hop[];
  /** Times the route enters the loop's file: hops into it, and its start when it starts there. */
  readonly loopEntries: number;
  /** The collaborators in the order the route goes through them (one name per stay). */
  readonly path: readonly string[];
}

export function countCollaborators(route: readonly Entry[], loop: Pick<Loop, 'file'> = ROOM_LOOP): CollaboratorFigures {
  const hops: Hop[] = [];
  const seen = new Set<string>();
  const path: string[] = [];
  let previous: { entry: Entry; collaborator: string } | undefined;
  let entries = 0;
  route.forEach((entry, at) => {
    const collaborator = collaboratorOf(entry.file);
    if (collaborator === undefined) return;
    entries += 1;
    if (!previous) path.push(collaborator);
    else if (previous.collaborator !== collaborator) {
      hops.push({ at, from: previous.entry, to: entry, isReturn: seen.has(collaborator) });
      path.push(collaborator);
    }
    seen.add(collaborator);
    previous = { entry, collaborator };
  });
  const returns = hops.filter((hop) => hop.isReturn);
  const loopCollaborator = collaboratorOf(loop.file);
  return {
    entries,
    hops,
    returns,
    returnsOutsideLoop: returns.filter((hop) => collaboratorOf(hop.to.file) !== loopCollaborator),
    loopEntries: path.filter((collaborator) => collaborator === loopCollaborator).length,
    path,
  };
}

/** A getter (`Class.get name`, `object.get name`), by the names the instrumentation gives. */
export const isGetter = (fn: string): boolean => /(^|[.{])get [^/]+$/.test(fn);

/** A getter of a collaborator (not of the transparent areas) entered from another file. */
const isCrossFileGetter = (entry: Entry, previous: Entry | undefined): boolean =>
  isGetter(entry.fn) &&
  collaboratorOf(entry.file) !== undefined &&
  previous !== undefined &&
  previous.file !== entry.file;

export interface EventFigures {
  /** The event's id, or 0 for the work that reached no event (an arrival the loop never took). */
  readonly id: number;
  readonly type: string | undefined;
  /** The function that handed the event to the loop (the entry just before the loop's `deliver`), if seen. */
  readonly by: string | undefined;
  readonly entries: readonly Entry[];
  readonly figures: CollaboratorFigures;
  /** Composition closures entered (`file:function ×count`), and getters entered from another file. */
  readonly closures: readonly string[];
  readonly getters: readonly string[];
}

const counted = (names: readonly string[]): string[] => {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name));
};

/**
 * The route split by event (each in time order, events in the order they were handed to the loop; the work of no
 * event last, if any). `closures`: the composition root's closures, as `file:function`.
 */
export function eventsOf(
  route: readonly (Entry & { readonly event?: number | undefined })[],
  events: readonly { readonly id: number; readonly type: string | undefined }[],
  closures: ReadonlySet<string>,
  loop: Loop = ROOM_LOOP,
): EventFigures[] {
  const byEvent = new Map<number, Entry[]>();
  for (const entry of route) {
    const id = entry.event ?? 0;
    const list = byEvent.get(id) ?? [];
    list.push(entry);
    byEvent.set(id, list);
  }
  const known = [...events, ...(byEvent.has(0) ? [{ id: 0, type: undefined }] : [])];
  return known.map(({ id, type }) => {
    const entries = byEvent.get(id) ?? [];
    // The caller, in time order: an event handed on from another's work starts at the loop.
    const handed = route.findIndex(
      (entry) => entry.event === id && entry.file === loop.file && entry.fn === loop.deliver,
    );
    const before = handed > 0 ? route[handed - 1] : undefined;
    return {
      id,
      type,
      by: before ? `${before.file}:${before.fn}` : undefined,
      entries,
      figures: countCollaborators(entries, loop),
      closures: counted(entries.filter((entry) => closures.has(`${entry.file}:${entry.fn}`)).map((entry) => entry.fn)),
      getters: counted(
        entries.flatMap((entry, at) =>
          isCrossFileGetter(entry, entries[at - 1]) ? [`${entry.file}:${entry.fn}`] : [],
        ),
      ),
    };
  });
}

export const EVENT_LIMITS = { loopEntries: 1, hops: 5, returnsOutsideLoop: 0, routeHops: 20 } as const;

/** `event 2 (answer)`, or the work of no event. */
export const eventName = (event: Pick<EventFigures, 'id' | 'type'>): string =>
  event.id === 0 ? 'work of no event' : `event ${event.id} (${event.type ?? '?'})`;

/**
 * The goals per event (the loop entered once, at most 5 collaborator hops, no return outside the loop, no composition
 * closure or cross-file getter) and for the whole route (at most 20 collaborator hops). The work of no event is held
 * to the same goals but the loop's (it never reached the loop).
 */
export function eventGoalsOf(events: readonly EventFigures[], route: CollaboratorFigures): Goal[] {
  const figuresOf = (of: (event: EventFigures) => number) => events.map(of).join(', ') || 'none';
  const perEvent = (
    name: string,
    of: (event: EventFigures) => number,
    limit: string,
    meets: (event: EventFigures) => boolean,
    detail: (event: EventFigures) => string,
  ): Goal => {
    const missed = events.filter((event) => !meets(event));
    return {
      name,
      figure: figuresOf(of),
      limit,
      met: missed.length === 0,
      where: missed.map((event) => `${eventName(event)}: ${detail(event)}`),
    };
  };
  return [
    perEvent(
      'the loop entered, per event',
      (event) => event.figures.loopEntries,
      `${EVENT_LIMITS.loopEntries} each`,
      (event) => event.id === 0 || event.figures.loopEntries === EVENT_LIMITS.loopEntries,
      (event) => `entered ${event.figures.loopEntries} times, by ${loopEntriesBy(event)}`,
    ),
    perEvent(
      'collaborator hops, per event',
      (event) => event.figures.hops.length,
      `<= ${EVENT_LIMITS.hops} each`,
      (event) => event.figures.hops.length <= EVENT_LIMITS.hops,
      (event) => event.figures.path.join(' > '),
    ),
    perEvent(
      'returns outside the loop, per event',
      (event) => event.figures.returnsOutsideLoop.length,
      `${EVENT_LIMITS.returnsOutsideLoop} each`,
      (event) => event.figures.returnsOutsideLoop.length <= EVENT_LIMITS.returnsOutsideLoop,
      (event) => counted(event.figures.returnsOutsideLoop.map((hop) => collaboratorOf(hop.to.file) ?? '')).join(', '),
    ),
    perEvent(
      'composition closures on the route, per event',
      (event) => event.closures.length,
      'none',
      (event) => event.closures.length === 0,
      (event) => event.closures.join(', '),
    ),
    perEvent(
      'cross-file getters on the route, per event',
      (event) => event.getters.length,
      'none',
      (event) => event.getters.length === 0,
      (event) => event.getters.join(', '),
    ),
    {
      name: 'collaborator hops, the message with its reply and echo',
      figure: String(route.hops.length),
      limit: `<= ${EVENT_LIMITS.routeHops}`,
      met: route.hops.length <= EVENT_LIMITS.routeHops,
      where: [],
    },
  ];
}

/** `RoomActor.get key ×3, RoomActor.deliver` : the functions an event's route entered the loop's file by. */
function loopEntriesBy(event: EventFigures, loop: Loop = ROOM_LOOP): string {
  const first = event.entries.find((entry) => collaboratorOf(entry.file) !== undefined);
  const into = event.figures.hops.filter((hop) => hop.to.file === loop.file).map((hop) => hop.to.fn);
  return counted([...(first?.file === loop.file ? [first.fn] : []), ...into]).join(', ') || 'nothing';
}
