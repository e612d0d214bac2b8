/**
 * After a restart: which work a crash cut is resumed, which is dropped, and what the room and the model are
 * told about a turn that had already run tools. Pure: the shell reads the journal and carries it out.
 */

/** A tool call a turn made before the crash, as the journal kept it. */
export interface ToolRunRecord {
  readonly tool: string;
  /** The shell command, or the arguments (null when the call never ended). */
  readonly input: string | null;
  readonly status: 'started' | 'ok' | 'refused' | 'failed';
}

/** Open work found on start (the journal's rows, with what the shell knows of their trigger). */
export interface OpenWork {
  readonly id: number;
  readonly room: string;
  readonly kind: 'round' | 'turn';
  readonly parentId: number | null;
  /** A round's message: who wrote it, and its row id; `missing` when it is no longer stored (/clear). */
  readonly trigger?: { readonly kind: 'human' | 'agent' | 'system' | 'missing'; readonly id: number } | undefined;
}

/** What the shell knows of a room on start. */
export interface RoomFacts {
  /** Row id of the newest human message in the room. */
  readonly newestHuman: number | undefined;
  readonly control: 'agents' | 'humans';
}

export type RecoveryStep =
  | { readonly kind: 'resume-round'; readonly id: number }
  | { readonly kind: 'drop'; readonly id: number };

/**
 * The open rounds of each room are resumed in order, except those a newer human message supersedes
 * (its own round answers the room's newest state, once) and agent talk after a hand-back. A round's turn
 * is resumed by its round; a dropped round's turns are dropped. Turns outside rounds (answers to requests,
 * resumes) are left to the requests, which ask again and find the same turn.
 */
export function planRecovery(work: readonly OpenWork[], facts: (room: string) => RoomFacts): RecoveryStep[] {
  const steps: RecoveryStep[] = [];
  const resumed = new Set<number>();
  for (const item of work) {
    if (item.kind !== 'round') continue;
    const room = facts(item.room);
    const trigger = item.trigger;
    const superseded = trigger !== undefined && room.newestHuman !== undefined && trigger.id < room.newestHuman;
    const keep =
      trigger !== undefined &&
      (trigger.kind === 'human' || (trigger.kind === 'agent' && room.control === 'agents')) &&
      !superseded;
    if (keep) {
      resumed.add(item.id);
      steps.push({ kind: 'resume-round', id: item.id });
    } else {
      steps.push({ kind: 'drop', id: item.id });
    }
  }
  for (const item of work) {
    if (item.kind === 'turn' && item.parentId !== null && !resumed.has(item.parentId)) {
      steps.push({ kind: 'drop', id: item.id });
    }
  }
  return steps;
}

/** Whether a round stops after a turn ended so: a hand-back, or an unasked agent that spoke for the room. */
export function roundEnds(end: 'posted' | 'passed' | 'failed' | 'ended', asked: boolean): boolean {
  return end === 'ended' || (end === 'posted' && !asked);
}

const shown = (run: ToolRunRecord) => {
  const input = (run.input ?? '').replace(/\s+/g, ' ').trim();
  const short = input.length > 60 ? `${input.slice(0, 57)}...` : input;
  return run.tool === 'bash' ? `\`${short}\`` : `${run.tool}${short ? ` ${short}` : ''}`;
};

/** The room's line when a turn cut by a restart had already run tools. */
export function interruptedLine(agent: string, runs: readonly ToolRunRecord[]): string {
  const cut = runs.filter((run) => run.status === 'started');
  const list = runs.slice(0, 5).map(shown).join(', ') + (runs.length > 5 ? `, and ${runs.length - 5} more` : '');
  return (
    `@${agent}'s turn was cut by a restart after ${runs.length} tool call${runs.length === 1 ? '' : 's'} (${list})` +
    (cut.length > 0 ? `; ${cut.map(shown).join(', ')} may have run only in part` : '') +
    '. It continues now, and nothing that already ran is run again.'
  );
}

/** What the model reads when its turn is taken again after a restart. */
export function resumeNote(runs: readonly ToolRunRecord[]): string {
  const head = 'Your previous attempt at this turn was cut by a restart before you replied.';
  if (runs.length === 0) return head;
  return [
    `${head} These tool calls had already been made; calling one again with the same arguments returns the`,
    'recorded result without running it again:',
    ...runs.map(
      (run) => `- ${shown(run)}${run.status === 'started' ? ' (cut while running: it may have run in part)' : ''}`,
    ),
  ].join('\n');
}

/** The room's line when a turn was cut by restarts too often to try again. */
export function tooOftenCutLine(agent: string, times: number): string {
  return `@${agent}'s turn was cut by ${times} restarts and is not tried again. Mention @${agent} to ask again.`;
}
