import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import type { TurnServices } from './turn-context.js';

/** The store-backed token economy for the agent runner: usage per agent and room. */
export function storeServices(store: Store, log: Logger): TurnServices {
  return {
    recordUsage(agent, roomKey, usage) {
      try {
        store.usage.add(agent, roomKey, usage);
      } catch (error) {
        // Bookkeeping never fails a turn.
        log.warn({ err: error, agent, room: roomKey }, 'could not record token usage');
      }
    },
  };
}
