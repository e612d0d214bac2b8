// The page's connection to its room: one WebSocket, opened again after a drop (waiting longer each time, up to a
// few seconds). It remembers the last event it saw, so the server sends exactly what was missed; a post is kept
// until the server says it is stored and sent again after a reconnect (the server takes it once).

const CLOSE_SIGNED_OUT = 4001;
const MAX_WAIT_MS = 4000;
/** Beats missed before a silent connection is taken for dead (the server says how often it beats). */
const SILENT_BEATS = 2.5;

export class RoomConnection {
  /**
   * `handlers`: welcome(frame), resume(frame), event(frame), typing(frame), ack(frame), refused(frame), notice(frame),
   * state(text, kind) — kind: 'open' | 'waiting' | 'closed'.
   */
  constructor(room, handlers) {
    this.room = room;
    this.handlers = handlers;
    this.epoch = null;
    this.n = 0;
    this.outbox = new Map();
    this.socket = null;
    this.attempt = 0;
    this.ended = false;
    this.heardAt = Date.now();
    this.beat = 20_000;
    // A connection that died without a word (a laptop's lid, a proxy) is given up and opened again.
    setInterval(() => {
      const socket = this.socket;
      if (socket?.readyState !== WebSocket.OPEN || Date.now() - this.heardAt <= this.beat * SILENT_BEATS) return;
      this.closed(socket, { code: 1006 });
      this.socket = null;
      socket.close();
    }, 250);
  }

  open() {
    if (this.ended) return;
    const url = new URL('/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('room', this.room);
    if (this.epoch) {
      url.searchParams.set('epoch', this.epoch);
      url.searchParams.set('after', String(this.n));
    }
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener('open', () => {
      socket.wasOpen = true;
    });
    socket.addEventListener('message', (message) => this.receive(JSON.parse(message.data)));
    socket.addEventListener('close', (event) => this.closed(socket, event));
  }

  /** Sends a post (now, or once connected again); it stays in the outbox until acknowledged. */
  post(frame) {
    this.outbox.set(frame.id, frame);
    this.sendNow(frame);
  }

  get connected() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  sendNow(frame) {
    if (this.connected) this.socket.send(JSON.stringify(frame));
  }

  receive(frame) {
    this.heardAt = Date.now();
    switch (frame.type) {
      case 'beat':
        return;
      case 'welcome':
        this.beat = frame.beat;
        this.epoch = frame.epoch;
        this.n = frame.n;
        this.connectedAgain();
        this.handlers.welcome(frame);
        this.flush();
        return;
      case 'resume':
        // The events missed follow, numbered after this.n.
        this.beat = frame.beat;
        this.connectedAgain();
        this.handlers.resume?.(frame);
        this.flush();
        return;
      case 'event':
        // Numbers only grow: anything at or below what was seen is already on the page.
        if (frame.n <= this.n) return;
        this.n = frame.n;
        this.handlers.event(frame.event);
        return;
      case 'ack':
        this.outbox.delete(frame.id);
        this.handlers.ack?.(frame);
        return;
      case 'refused':
        this.outbox.delete(frame.id);
        this.handlers.refused?.(frame);
        return;
      case 'bye':
        this.ended = true;
        this.handlers.state(frame.reason, 'closed');
        return;
      default:
        this.handlers[frame.type]?.(frame);
    }
  }

  connectedAgain() {
    this.attempt = 0;
    this.handlers.state('Connected', 'open');
  }

  /** Posts not yet acknowledged go again, in the order they were written. */
  flush() {
    for (const frame of this.outbox.values()) this.sendNow(frame);
  }

  closed(socket, event) {
    if (socket !== this.socket) return;
    if (event.code === CLOSE_SIGNED_OUT || this.ended) {
      // A `bye` said why already; a close without one still ends the page's session.
      if (!this.ended) this.handlers.state('Your session ended.', 'closed');
      this.ended = true;
      return;
    }
    const wait = Math.min(MAX_WAIT_MS, 250 * 2 ** this.attempt) * (0.8 + Math.random() * 0.4);
    this.attempt++;
    this.handlers.state('Connection lost; reconnecting…', 'waiting');
    setTimeout(() => void this.retry(socket.wasOpen === true), wait);
  }

  /** Opens again, unless the server refused the last try because the session is gone. */
  async retry(wasOpen) {
    if (!wasOpen) {
      try {
        const answer = await fetch('/api/me', { credentials: 'same-origin' });
        if (answer.status === 401) {
          this.ended = true;
          this.handlers.state('You are signed out: ask an operator for a new sign-in link.', 'closed');
          return;
        }
      } catch {
        // The server is not reachable yet: try the socket again.
      }
    }
    this.open();
  }
}
