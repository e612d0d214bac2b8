/**
 * The replies shown while they are written (platforms that stream by edits), one per turn: the turn executor shows
 * its reply's preview here, and the poster takes it to finish it as the posted reply (or a discarded turn's goes).
 */
import type { ChatAdapter, StreamingPost } from '../../ports.js';
import { StreamPreview } from './stream-preview.js';

export class Previews {
  private readonly shown = new Map<string, StreamPreview>();

  /** A turn's preview (nothing is shown until the reply cannot be a pass). */
  open(room: string, ask: number, adapter: ChatAdapter, channel: string, agent: string): StreamPreview {
    const preview = new StreamPreview(adapter, channel, agent);
    this.shown.set(`${room}#${ask}`, preview);
    return preview;
  }

  /** The turn's shown preview, for its reply's post to finish (taken once). */
  take(room: string, ask: number): StreamingPost | undefined {
    const key = `${room}#${ask}`;
    const preview = this.shown.get(key);
    this.shown.delete(key);
    return preview?.post;
  }

  /** The turn's reply will not be posted: whatever preview was shown goes. */
  discard(room: string, ask: number): void {
    void this.take(room, ask)
      ?.cancel()
      .catch(() => {});
  }
}
