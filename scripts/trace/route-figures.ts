/**
 * The figures of a route (see scripts/trace-route.ts for the definitions): pure counting over a list of function
 * entries, kept apart from the tracing so that it can be checked on lists written by hand.
 */

export interface Entry {
  /** The project file, relative to the root (`src/bridge/loop/rooms.ts`). */
  readonly file: string;
  /** The function (`Rooms.get`, `Poster.send/finally(=>)`). */
  readonly fn: string;
}

export interface Hop {
  /** Position of the entry hopped to, in the route's entries. */
  readonly at: number;
  readonly from: Entry;
  readonly to: Entry;
  /** The file hopped into was entered before (and, since this is a hop, left since). */
  readonly isReturn: boolean;
}

export interface FileFigures {
  readonly file: string;
  /** Function entries in the file. */
  readonly entries: number;
  /** Hops into the file. */
  readonly enteredBy: number;
  /** Of those, returns. */
  readonly returns: number;
}

export interface RouteFigures {
  readonly entries: number;
  readonly hops: readonly Hop[];
  readonly returns: readonly Hop[];
  /** Files by entries, most first (then by name). */
  readonly files: readonly FileFigures[];
}

export interface Goal {
  readonly name: string;
  readonly figure: string;
  readonly limit: string;
  readonly met: boolean;
  /** Where a missed goal is missed. */
  readonly where: readonly string[];
}

export const LIMITS = { hops: 30, returns: 10, shellEntries: 3 } as const;

/** The shell: the bridge's imperative part, which hands work on and should be passed through, not revisited. */
export const isShell = (file: string): boolean => file.startsWith('src/bridge/');

export function countRoute(route: readonly Entry[]): RouteFigures {
  const hops: Hop[] = [];
  const seen = new Set<string>();
  const files = new Map<string, { entries: number; enteredBy: number; returns: number }>();
  const figuresOf = (file: string) => {
    let figures = files.get(file);
    if (!figures) {
      figures = { entries: 0, enteredBy: 0, returns: 0 };
      files.set(file, figures);
    }
    return figures;
  };
  route.forEach((entry, at) => {
    const figures = figuresOf(entry.file);
    figures.entries += 1;
    const previous = route[at - 1];
    if (previous && previous.file !== entry.file) {
      const isReturn = seen.has(entry.file);
      hops.push({ at, from: previous, to: entry, isReturn });
      figures.enteredBy += 1;
      if (isReturn) figures.returns += 1;
    }
    seen.add(entry.file);
  });
  return {
    entries: route.length,
    hops,
    returns: hops.filter((hop) => hop.isReturn),
    files: [...files]
      .map(([file, figures]) => ({ file, ...figures }))
      .sort((a, b) => b.entries - a.entries || a.file.localeCompare(b.file)),
  };
}

/** `name ×count, ...` of the functions hops entered a file by, most first. */
function entriesInto(figures: RouteFigures, file: string): string {
  const counts = new Map<string, number>();
  for (const hop of figures.hops) if (hop.to.file === file) counts.set(hop.to.fn, (counts.get(hop.to.fn) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([fn, count]) => `${fn} ×${count}`)
    .join(', ');
}

export function goalsOf(figures: RouteFigures): Goal[] {
  const busyShell = figures.files.filter((file) => isShell(file.file) && file.enteredBy > LIMITS.shellEntries);
  return [
    {
      name: 'file-level hops',
      figure: String(figures.hops.length),
      limit: `<= ${LIMITS.hops}`,
      met: figures.hops.length <= LIMITS.hops,
      where: [],
    },
    {
      name: 'file-level returns to a file already left',
      figure: String(figures.returns.length),
      limit: `<= ${LIMITS.returns}`,
      met: figures.returns.length <= LIMITS.returns,
      where: [],
    },
    {
      name: 'entries into any one shell file (src/bridge/*)',
      figure: String(Math.max(0, ...figures.files.filter((file) => isShell(file.file)).map((file) => file.enteredBy))),
      limit: `<= ${LIMITS.shellEntries}`,
      met: busyShell.length === 0,
      where: busyShell.map(
        (file) => `${file.file} entered ${file.enteredBy} times, by ${entriesInto(figures, file.file)}`,
      ),
    },
  ];
}

/**
 * Splits a recording into the message's route and background work: the route is every entry whose asynchronous
 * origin is the one the message arrived on (the origin of the first entry into `adapters/discord/`, the adapter
 * receiving MESSAGE_CREATE); every other origin (a timer or socket that existed before the message) is background.
 */
export function separateRoute<T extends Entry & { readonly origin: number }>(
  entries: readonly T[],
  arrivalFolder = 'adapters/discord/',
): { route: T[]; background: T[]; origin: number | undefined } {
  const origin = entries.find((entry) => entry.file.startsWith(arrivalFolder))?.origin;
  const route: T[] = [];
  const background: T[] = [];
  for (const entry of entries) (entry.origin === origin ? route : background).push(entry);
  return { route, background, origin };
}

/** A file's area: its folder under src/ or adapters/ (`src/room/text/x.ts` is in `src/room`), or `src` itself. */
export function areaOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] ?? file);
}

/** Hops counted by the areas they go from and to (a hop inside one area has the same on both sides), most first. */
export function hopsByArea(figures: RouteFigures): { from: string; to: string; hops: number }[] {
  const counts = new Map<string, { from: string; to: string; hops: number }>();
  for (const hop of figures.hops) {
    const from = areaOf(hop.from.file);
    const to = areaOf(hop.to.file);
    const key = `${from}>${to}`;
    const count = counts.get(key) ?? { from, to, hops: 0 };
    count.hops += 1;
    counts.set(key, count);
  }
  return [...counts.values()].sort(
    (a, b) => b.hops - a.hops || a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
  );
}
