/** A second Ctrl-C within this time quits, even while the agents are still stopping. */
export const QUIT_WINDOW_MS = 3000;

/**
 * What Ctrl-C does in the terminal room: while agents work it stops their turns (as `/pass` does);
 * at an idle prompt, or right after another Ctrl-C, it quits.
 */
export function interruptAction(options: {
  readonly busy: boolean;
  readonly now: number;
  /** When the previous Ctrl-C was pressed, if ever. */
  readonly previous: number | undefined;
}): 'stop' | 'quit' {
  if (!options.busy) return 'quit';
  if (options.previous !== undefined && options.now - options.previous < QUIT_WINDOW_MS) return 'quit';
  return 'stop';
}
