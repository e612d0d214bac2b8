/**
 * Answers the shell waits for from a room's decision: an agent's messaging action (its result comes when the post
 * is on the platform) and an operator command (its answer).
 */
import type { ActionResult } from '../../room/effects.js';

export class Calls {
  private readonly actions = new Map<string, (result: ActionResult) => void>();
  private readonly commands = new Map<string, (text: string) => void>();

  /** Waits for the result of action `call` (register before delivering the action). */
  action(call: string): Promise<ActionResult> {
    return new Promise((resolve) => this.actions.set(call, resolve));
  }

  settleAction(call: string, result: ActionResult): void {
    this.actions.get(call)?.(result);
    this.actions.delete(call);
  }

  /** Waits for the answer to command `id` (register before delivering the command). */
  command(id: string): Promise<string> {
    return new Promise((resolve) => this.commands.set(id, resolve));
  }

  answer(id: string, text: string): void {
    this.commands.get(id)?.(text);
    this.commands.delete(id);
  }

  /** Gives up on everything still waiting (the room could not take the event). */
  forget(id: string, why: string): void {
    this.settleAction(id, { kind: 'failed', reason: why });
    this.answer(id, why);
  }
}
