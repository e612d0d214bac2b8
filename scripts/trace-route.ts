/**
 * A runtime trace of one Discord message's route through the bridge, and its figures.
 *
 *   npm run trace:route                     (options after `--`: --warm, --check)
 *
 * A child process (scripts/trace/record-route.ts) instruments every function of the project's own modules (src/**,
 * adapters/**; not node_modules, not test/) as they load: a module hook registered after tsx's inserts, at the start
 * of each function body, a call that records (file, function). It starts the fake Discord and the fake model server
 * (test/fakes), a bridge with one `mention` agent ("agent", its own bot), waits until the bridge is started and idle,
 * then records from sending ONE human message, "@agent hello" (as Discord delivers it: a mention of the agent's bot),
 * until the bridge has taken the echo of its reply (the fake sends the bot's own message back through the gateway)
 * and is idle again; it notes where the reply's POST reached the fake. `--warm` first sends one message, untraced,
 * so that the traced one finds its room and clients already made. `--check` exits 1 when a goal is missed (else this
 * exits 0: it is a measurement).
 *
 * Definitions (the docs use the same):
 *  - entry: one recorded call of a project function (a generator or async function: when it is called);
 *  - the route: the entries caused by the message. Each entry is followed through async_hooks to its origin, the
 *    asynchronous resource that existed before the message was sent and whose work it descends from (each resource
 *    counts as created by the context that created it; a promise that existed before and was resolved during the
 *    recording counts as made by whoever resolved it). The route is every entry whose origin is the one the message
 *    arrived on: the origin of the first entry into adapters/discord/ (the gateway connection's socket, which the
 *    echo arrives on too). Entries from any other origin (timers and intervals set earlier, gateway heartbeats, other
 *    sockets, the harness asking whether the bridge is idle) are background: left out of the figures, listed apart;
 *  - file level: each source file is one; a hop is two consecutive entries of the route in different files (the
 *    route is in time order: work that runs concurrently, such as the typing indicator beside the model call,
 *    interleaves as it ran); a return is a hop into a file that an earlier entry of the route was in (entered before
 *    and left since); entries into a file: the hops into it (the route's first entry is no hop);
 *  - collaborator level: each file of the shell (src/bridge/**) is a collaborator, each adapter folder
 *    (adapters/<name>/) one, src/llm one, every other file of src/ its own; entries into src/room, src/store and
 *    src/tools are passed through (no hop into them: a hop is counted between the collaborators before and after
 *    them). Hops and returns as at file level, between collaborators;
 *  - events: the route split by the events the room's loop takes (scripts/trace/events.ts: its file and entry
 *    functions are one constant, ROOM_LOOP). An event's work is what descends from it: from its arrival to the
 *    loop's `deliver` (a platform event from its socket), the decision on it and the effects handed on, until the
 *    next event is handed to the loop from within that work (a turn's answer, a post's outcome). Per event: its
 *    collaborator hops, its returns outside the loop (into any collaborator but the loop's file), how often it
 *    enters the loop's file, the composition root's closures (functions written inside `createBridge`) and the
 *    cross-file getters (a collaborator's get accessor entered from another file) on its route.
 * Goals (`--check`): per event, the loop entered once, at most 5 collaborator hops, no return outside the loop, no
 * composition closure or cross-file getter; for the message with its reply and echo, at most 20 collaborator hops.
 * The earlier file-level goals (at most 30 hops, at most 10 returns, no shell file entered more than 3 times) are
 * printed beside them, not checked.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type CollaboratorFigures,
  countCollaborators,
  type EventFigures,
  eventGoalsOf,
  eventName,
  eventsOf,
} from './trace/event-figures.js';
import { ROOM_LOOP } from './trace/events.js';
import type { RawEntry, TraceRun } from './trace/protocol.js';
import {
  countRoute,
  type Entry,
  type Goal,
  goalsOf,
  hopsByArea,
  type RouteFigures,
  separateRoute,
} from './trace/route-figures.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const recorder = path.join(root, 'scripts', 'trace', 'record-route.ts');
/** The traced run loads TypeScript's compiler and the bridge on a busy machine: generous. */
const RUN_TIMEOUT_MS = 180_000;

export interface RouteReport {
  readonly run: TraceRun;
  readonly route: readonly RawEntry[];
  readonly background: readonly RawEntry[];
  /** File level, the whole route (to the echo taken), and its part up to the reply's POST. */
  readonly figures: RouteFigures;
  readonly toPost: RouteFigures;
  /** Collaborator level, the whole route, and each event on it. */
  readonly collaborators: CollaboratorFigures;
  readonly events: readonly EventFigures[];
  /** The goals `--check` checks: per event and for the whole route, at collaborator level. */
  readonly goals: readonly Goal[];
  /** The earlier goals, at file level (printed, not checked). */
  readonly fileGoals: readonly Goal[];
}

/** Runs the traced process and returns what it recorded. */
export function traceRoute(options: { warm?: boolean } = {}): Promise<TraceRun> {
  return new Promise<TraceRun>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', recorder, ...(options.warm ? ['--warm'] : [])], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let stderr = '';
    let outcome: { run: TraceRun } | { error: string } | undefined;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('message', (message: { run: TraceRun } | { error: string }) => {
      outcome = message;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the traced run did not finish within ${RUN_TIMEOUT_MS / 1000} s`));
    }, RUN_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (outcome && 'run' in outcome) resolve(outcome.run);
      else if (outcome) reject(new Error(`the traced run failed: ${outcome.error}`));
      else reject(new Error(`the traced run ended (${signal ?? `exit ${code}`}) without figures:\n${stderr}`));
    });
  });
}

export function analyse(run: TraceRun): RouteReport {
  const { route, background } = separateRoute(run.entries);
  const figures = countRoute(route);
  const collaborators = countCollaborators(route);
  const events = eventsOf(route, run.events, new Set(run.closures));
  return {
    run,
    route,
    background,
    figures,
    toPost: countRoute(separateRoute(run.entries.slice(0, run.postedAt)).route),
    collaborators,
    events,
    goals: eventGoalsOf(events, collaborators),
    fileGoals: goalsOf(figures),
  };
}

/** One event's lines: its figures, and what is on its route. */
function eventLines(event: EventFigures): string[] {
  const { figures } = event;
  const lines = [
    `  ${eventName(event)}${event.by ? `, handed to the loop by ${event.by}` : ''}: ${event.entries.length} entries, ` +
      `${figures.hops.length} collaborator hops, ${figures.returnsOutsideLoop.length} returns outside the loop, ` +
      `loop entered ${figures.loopEntries} times`,
    `    ${figures.path.join(' > ') || '(no collaborator)'}`,
  ];
  if (event.closures.length > 0) lines.push(`    composition closures: ${event.closures.join(', ')}`);
  if (event.getters.length > 0) lines.push(`    cross-file getters: ${event.getters.join(', ')}`);
  return lines;
}

const at = (entry: Entry) => `${entry.file}:${entry.fn}`;

/** The report as printed. */
export function formatReport(report: RouteReport): string {
  const { run, figures, background } = report;
  const lines: string[] = [];
  const traced = run.warm ? 'the second message (the first, untraced, warmed the room)' : 'the first message';
  lines.push(`Route of one Discord message, ${traced}: "${run.sent}" -> reply "${run.reply}"`);
  lines.push(
    `  ${run.instrumented} project functions instrumented; ${run.entries.length} entries recorded until the echo ` +
      `of the reply was taken, ${figures.entries} on the route, ${background.length} background; ` +
      `${run.ms.toFixed(1)} ms to the reply's POST (instrumented)`,
  );
  const { toPost, collaborators } = report;
  lines.push(
    `  file level: entries ${figures.entries}, hops ${figures.hops.length}, returns ${figures.returns.length} ` +
      `(to the reply's POST: entries ${toPost.entries}, hops ${toPost.hops.length}, returns ${toPost.returns.length})`,
  );
  lines.push(
    `  collaborator level: hops ${collaborators.hops.length}, returns ${collaborators.returns.length}, ` +
      `the loop (${ROOM_LOOP.file}) entered ${collaborators.loopEntries} times`,
  );
  lines.push('');
  lines.push(
    `Route per event (an event's work: from its arrival to the loop's ${ROOM_LOOP.deliver}, the decision on it, ` +
      'and the effects handed on until the next event reaches the loop):',
  );
  for (const event of report.events) lines.push(...eventLines(event));
  lines.push('');
  lines.push('Entries per file (function entries; hops into the file, of which returns):');
  for (const file of figures.files) {
    lines.push(
      `  ${String(file.entries).padStart(5)}  ${String(file.enteredBy).padStart(3)} in  ${String(file.returns).padStart(3)} ret  ${file.file}`,
    );
  }
  lines.push('');
  const areas = hopsByArea(figures);
  const between = areas.filter(({ from, to }) => from !== to).reduce((sum, { hops }) => sum + hops, 0);
  lines.push(
    `Hops by area (src/<folder>, adapters/<folder>): ${between} between areas, ` +
      `${figures.hops.length - between} between files of one area`,
  );
  for (const { from, to, hops } of areas) {
    lines.push(`  ${String(hops).padStart(5)}  ${from === to ? `within ${from}` : `${from} -> ${to}`}`);
  }
  lines.push('');
  lines.push('Route (one line per hop: last function before it -> first after it; "return" marks a return):');
  const first = report.route[0];
  if (first) lines.push(`        start  ${at(first)}`);
  figures.hops.forEach((hop, index) => {
    lines.push(
      `  ${String(index + 1).padStart(3)} ${hop.isReturn ? 'return' : '      '}  ${at(hop.from)} -> ${at(hop.to)}`,
    );
  });
  lines.push('');
  if (background.length === 0) {
    lines.push('Background: none (no entry came from any origin other than the message).');
  } else {
    lines.push('Background (entries from other origins, left out of the figures):');
    const groups = new Map<string, number>();
    for (const entry of background) {
      const key = `${run.originTypes[entry.origin] ?? '?'} #${entry.origin}  ${at(entry)}`;
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
    for (const [key, count] of groups) lines.push(`  ${String(count).padStart(5)}  ${key}`);
  }
  const goalLines = (goals: readonly Goal[]) => {
    for (const goal of goals) {
      lines.push(`  ${goal.name}: ${goal.figure} (goal ${goal.limit}): ${goal.met ? 'met' : 'MISSED'}`);
      for (const where of goal.where) lines.push(`    ${where}`);
    }
  };
  lines.push('');
  lines.push('Goals (collaborator level; --check exits 1 when one is missed):');
  goalLines(report.goals);
  lines.push('');
  lines.push('Earlier goals (file level, the whole route; not checked):');
  goalLines(report.fileGoals);
  return lines.join('\n');
}

/** 0 (a measurement), or 1 with `--check` when a goal is missed. */
export function exitCodeOf(goals: readonly Goal[], argv: readonly string[]): number {
  return argv.includes('--check') && goals.some((goal) => !goal.met) ? 1 : 0;
}

/** Traces, prints, and returns the exit code with the report. */
export async function main(
  argv: readonly string[],
  print: (text: string) => void = (text) => console.log(text),
): Promise<{ code: number; report: RouteReport }> {
  const report = analyse(await traceRoute({ warm: argv.includes('--warm') }));
  print(formatReport(report));
  return { code: exitCodeOf(report.goals, argv), report };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = (await main(process.argv.slice(2))).code;
  } catch (error) {
    console.error(`trace:route: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  }
}
