/**
 * Carries out a room's decision (its writes already committed): each effect goes to the one collaborator that does
 * it. Nothing here decides anything: outcomes come back to the room as events.
 */
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import type { Sandbox } from '../../ports.js';
import type { DecisionRecord, Effect } from '../../room/effects.js';
import type { RoomStore } from '../../store/port.js';
import type { RoomHandle } from '../loop/room-handle.js';
import type { Approvals } from './approvals.js';
import type { BatchTurns } from './batch-turns.js';
import type { Calls } from './calls.js';
import type { Poster } from './poster.js';
import type { Previews } from './previews.js';
import type { Timers } from './timers.js';
import type { Turns } from './turns.js';

export interface EffectsDeps {
  readonly turns: Turns;
  readonly batches?: BatchTurns | undefined;
  readonly poster: Poster;
  readonly previews: Pick<Previews, 'discard'>;
  readonly timers: Timers;
  readonly approvals?: Pick<Approvals, 'settle'> | undefined;
  readonly calls: Calls;
  readonly sandbox: Pick<Sandbox, 'reset'>;
  /** The rooms' MCP servers: stopped with the room's sandbox. */
  readonly mcp?: { closeRoom(room: string): Promise<void> } | undefined;
  readonly rooms: Pick<RoomStore, 'clear'>;
  /** The text of /status for a room. */
  readonly status: (room: string) => Promise<string>;
  /** /budget in a room: shows or sets the spending limits; its answer. */
  readonly budget: (room: string, args: string) => Promise<string>;
  /** A line for one person (rule 16): ephemeral where the platform has it. */
  readonly tell: (
    room: RoomHandle,
    user: { readonly id: string; readonly name: string },
    text: string,
  ) => Promise<void>;
  readonly log: Logger;
}

export function effectsRunner(deps: EffectsDeps): (room: RoomHandle, effects: readonly Effect[]) => void {
  return (room, effects) => {
    for (const effect of effects) run(deps, room, effect);
  };
}

function run(deps: EffectsDeps, room: RoomHandle, effect: Effect): void {
  switch (effect.type) {
    case 'ask':
      if (effect.turns.length > 1 && deps.batches) deps.batches.start(room, effect.turns);
      else for (const turn of effect.turns) deps.turns.start(room, turn);
      return;
    case 'stop':
      deps.turns.stop(room.key, effect.ask, effect.reason);
      deps.batches?.stop(room.key, effect.ask);
      return;
    case 'discard':
      deps.previews.discard(room.key, effect.ask);
      return;
    case 'post':
      deps.poster.send(room, effect.post, effect.resend);
      return;
    case 'drop-post':
      deps.poster.drop(room.key, effect.post);
      return;
    case 'timer':
      deps.timers.at(room, effect.at, effect.request);
      return;
    case 'chat-timer':
      deps.timers.chatAt(room, effect.at, effect.chat);
      return;
    case 'approval-result':
      deps.approvals?.settle(effect.token, effect.approved, effect.reason);
      return;
    case 'approval-timer':
      deps.timers.approvalAt(room, effect.at, effect.id);
      return;
    case 'close-card':
      // Best effort: a card left with its buttons answers a click with "No approval … is waiting here."
      void room.adapter.closeCard?.(room.channel, effect.platformId, effect.text).catch((error: unknown) => {
        deps.log.warn({ err: error, room: room.key }, 'an answered approval card could not be closed');
      });
      return;
    case 'action-result':
      deps.calls.settleAction(effect.call, effect.result);
      return;
    case 'answer':
      deps.calls.answer(effect.command, effect.text);
      return;
    case 'status':
      answerWith(deps.calls, effect.command, '/status', deps.status(room.key));
      return;
    case 'budget':
      answerWith(deps.calls, effect.command, '/budget', deps.budget(room.key, effect.args));
      return;
    case 'tell':
      void deps.tell(room, effect.user, effect.text).catch((error: unknown) => {
        deps.log.warn({ err: error, room: room.key }, 'a line for one person could not be posted');
      });
      return;
    case 'reset-sandbox':
      void deps.mcp?.closeRoom(room.key).catch(() => {});
      void deps.sandbox.reset?.(room.key, { wipeWorkspace: effect.wipe }).catch((error: unknown) => {
        deps.log.warn({ err: error, room: room.key }, 'the sandbox could not be reset');
      });
      return;
    case 'clear-history':
      void deps.rooms.clear(room.id).catch((error: unknown) => {
        deps.log.error({ err: error, room: room.key }, 'the history could not be cleared');
      });
      return;
    case 'record':
      record(deps.log, room.key, effect.record);
      return;
    case 'note':
      return; // the room actor sends notes itself, stored with their decision
  }
}

/** Answers an operator's command with what `text` resolves to, or one line saying it failed. */
function answerWith(calls: Pick<Calls, 'answer'>, command: string, name: string, text: Promise<string>): void {
  void text.then(
    (answer) => calls.answer(command, answer),
    (error: unknown) => calls.answer(command, `${name} failed: ${String(error)}`),
  );
}

/** The debug log answers "why did my bot not answer?"; metrics count passes and hand-backs. */
function record(log: Logger, room: string, record: DecisionRecord): void {
  switch (record.kind) {
    case 'routed':
      log.debug(
        { room, message: record.seq, author: record.author, woken: record.woken },
        record.woken.length > 0 ? 'routing' : 'routing: nobody woken',
      );
      return;
    case 'passed':
      metrics.passes.inc({ agent: record.agent });
      log.debug({ room, agent: record.agent }, 'passed');
      return;
    case 'hand-back':
      metrics.handBacks.inc({ reason: record.reason });
      log.info({ room, reason: record.reason }, 'control handed back to the humans');
      return;
    case 'dropped':
      log.info({ room, drops: record.drops }, 'questions dropped');
      return;
    default:
      log.debug({ room, ...record }, 'decision');
  }
}
