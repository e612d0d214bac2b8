/**
 * Bolt acknowledges an Events API envelope before its listeners run (`App.processEvent`). Slack never sends an
 * acknowledged event again, so a bridge stopped or killed between that ack and its store commit would lose the
 * message. Here a message event is acknowledged only once its listener says the bridge has it (stored, a duplicate,
 * kept for the replica serving its room) or ignores it; left unacknowledged, Slack sends it again (after 3 s, then
 * after a minute and after five), to this bridge or to another connection of the app. Every other envelope —
 * other events, slash commands, interactions — is acknowledged as Bolt does.
 */
import { App, type ReceiverEvent } from '@slack/bolt';

/** The event types whose ack waits for the bridge: those that become room messages (edits and file shares too). */
const STORED_FIRST = new Set(['message', 'app_mention']);

/** The listener's say on its event's ack, found in its `context` under `STORED_ACK`. */
export interface AckVerdict {
  /** True (the default, for an event no listener takes): acknowledge once the listeners are done. */
  acknowledge: boolean;
}

/** The context property (Bolt's `customProperties`) that carries an event's verdict to its listener. */
export const STORED_ACK = 'storedAck';

/** Whether a listener's context carries a verdict, and which. */
export function verdictOf(context: Record<string, unknown>): AckVerdict | undefined {
  const verdict = context[STORED_ACK];
  return typeof verdict === 'object' && verdict !== null ? (verdict as AckVerdict) : undefined;
}

function storedFirst(body: Record<string, unknown>): boolean {
  const event = body.event as { type?: unknown } | undefined;
  return body.type === 'event_callback' && typeof event?.type === 'string' && STORED_FIRST.has(event.type);
}

/** A Bolt app whose message events are acknowledged after their listeners, as their verdict says. */
export class StoredAckApp extends App {
  override async processEvent(event: ReceiverEvent): Promise<void> {
    if (!storedFirst(event.body)) return super.processEvent(event);
    const verdict: AckVerdict = { acknowledge: true };
    // Bolt's own early ack becomes a no-op; the listeners run to their end first.
    await super.processEvent({
      ...event,
      ack: async () => {},
      customProperties: { ...event.customProperties, [STORED_ACK]: verdict },
    });
    if (!verdict.acknowledge) return;
    try {
      await event.ack();
    } catch (error) {
      // The connection closed meanwhile (a stop), or HTTP's 3 s were up: Slack sends the event again.
      this.logger.debug(`a Slack event could not be acknowledged (${String(error)}); Slack sends it again`);
    }
  }
}
