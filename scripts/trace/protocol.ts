/** What the traced process reports to the script that started it (over the IPC channel), and the recorder's key. */

/** Where instrumented modules find the recorder (`globalThis[Symbol.for(TRACE_KEY)]`). */
export const TRACE_KEY = 'roundtable.trace';

/** One function entry as recorded: the project file, the function, and the asynchronous origin it ran in. */
export interface RawEntry {
  readonly file: string;
  readonly fn: string;
  /** The async resource (existing before the message was sent) whose work this entry descends from. */
  readonly origin: number;
  /** The event (of `TraceRun.events`) whose work this entry is, if any (see scripts/trace/events.ts). */
  readonly event?: number | undefined;
}

/** An event handed to the room's loop while recording, in the order handed: its id and its `type`, when known. */
export interface LoopEvent {
  readonly id: number;
  readonly type: string | undefined;
}

export interface TraceRun {
  readonly entries: readonly RawEntry[];
  /** The type of each origin (`TCPWRAP`, `Timeout`, `PROMISE`, ...); 0 (`root`) is the process's own top level. */
  readonly originTypes: Readonly<Record<number, string>>;
  /** The text the human sent, as the fake Discord received it, and the agent's reply as it was posted. */
  readonly sent: string;
  readonly reply: string;
  /** Milliseconds from sending the message to the reply's POST (instrumented, so slower than the real thing). */
  readonly ms: number;
  /** How many entries were recorded when the reply's POST reached the fake (the rest lead to its echo taken). */
  readonly postedAt: number;
  readonly events: readonly LoopEvent[];
  /** The composition root's closures (`file:function`), as instrumented. */
  readonly closures: readonly string[];
  /** Project functions instrumented in the modules the run loaded. */
  readonly instrumented: number;
  /** Whether a first message was sent and answered, untraced, before the traced one. */
  readonly warm: boolean;
}
