import { stripSpeakerPrefix } from '../../llm/context.js';
import type { ChatAdapter, StreamingPost } from '../../ports.js';
import { shownWhileWriting } from '../../room/text/replies.js';

/**
 * Shows an agent's reply while the model writes it, on platforms that stream by edits: what the room's
 * `shownWhileWriting` allows (nothing that may still be a pass, no hand-back tag).
 */
export class StreamPreview {
  post: StreamingPost | undefined;
  private off = false;
  /** Whether the platform streams by edits at all. */
  readonly enabled: boolean;

  constructor(
    private readonly adapter: ChatAdapter,
    private readonly channel: string,
    private readonly agent: string,
  ) {
    this.enabled = typeof adapter.stream === 'function';
  }

  show(textSoFar: string): void {
    if (this.off) return;
    const text = shownWhileWriting(stripSpeakerPrefix(this.agent, textSoFar));
    if (!text) return;
    if (!this.post) {
      this.post = this.adapter.stream?.(this.channel, this.agent);
      if (!this.post) {
        this.off = true; // streaming is off for this platform
        return;
      }
    }
    this.post.update(text);
  }
}
