// A room's transcript on the page: one list item per message id (a message arriving twice is shown once), agents
// marked as agents, the bridge's lines set apart, replies growing while they are written, tool runs as collapsible
// blocks with how they ended, and the posts of this page shown until the server has them.
import { el, timeOf } from './dom.js';
import { renderMarkdown } from './markdown.js';

/** A tool run as a collapsible block: what ran and how it ended; the output inside. */
export function toolBlock(run) {
  const failed = run.status !== 'exit 0' && run.status !== 'done';
  const command = run.command.split('\n')[0] ?? '';
  const what = run.tool === 'bash' ? `$ ${command}` : `${run.tool} ${command}`;
  const summary = el('summary', {}, [
    el('span', { className: 'tool-name' }, [what.length > 120 ? `${what.slice(0, 120)}…` : what]),
    ' ',
    el('span', { className: `status ${failed ? 'bad' : 'good'}` }, [run.status]),
  ]);
  return el('details', { className: 'tool' }, [summary, el('pre', {}, [run.output || '(no output)'])]);
}

/** A message's text as Markdown; should that ever fail, as the plain text it is (one message never hides the others). */
function formatted(text, names) {
  try {
    return renderMarkdown(text, names);
  } catch (error) {
    console.warn('a message is shown as plain text: it could not be rendered', error);
    return el('pre', { className: 'plain' }, [text]);
  }
}

/** What a card's button may send: the card's answers, by the id the room gave it. */
const CARD_ACTIONS = ['approve', 'deny'];
const CARD_ID = /^[A-Za-z0-9]{1,20}$/;

/** An approval card's buttons: a click sends the command a typed `/approve A1` is (`act`), once. */
function cardButtons(buttons, act) {
  const shown = (buttons ?? []).filter((b) => CARD_ACTIONS.includes(b.action) && CARD_ID.test(b.card));
  if (shown.length === 0 || !act) return null;
  const row = el('div', {
    className: 'card-actions',
    attrs: { role: 'group', 'aria-label': `Answer ${shown[0].card}` },
  });
  for (const button of shown) {
    const label = `${button.action === 'approve' ? 'Approve' : 'Deny'} ${button.card}`;
    const node = el('button', { className: button.action, attrs: { type: 'button' } }, [label]);
    node.addEventListener('click', () => {
      for (const other of row.querySelectorAll('button')) other.disabled = true;
      act(`/${button.action} ${button.card}`);
    });
    row.append(node);
  }
  return row;
}

/** A message as a list item; `act` sends a command for its buttons (an approval card's). */
export function messageItem(message, names, act) {
  const role = message.role;
  const meta = el('div', { className: 'meta' }, [
    el('span', { className: 'author' }, [role === 'system' ? 'Roundtable' : message.author]),
    role === 'agent' ? el('span', { className: 'badge' }, ['agent']) : null,
    timeOf(message.at),
  ]);
  const body = el('div', { className: 'body' }, [formatted(message.text, names)]);
  const files = (message.files ?? []).map((name) => el('li', {}, [name]));
  return el(
    'li',
    { className: `msg ${role}`, attrs: { 'data-id': message.id, ...(role === 'system' ? { role: 'note' } : {}) } },
    [
      meta,
      body,
      files.length > 0 ? el('ul', { className: 'files', attrs: { 'aria-label': 'Files' } }, files) : null,
      cardButtons(message.buttons, act),
      ...message.tools.map(toolBlock),
    ],
  );
}

/** The id of the stand-in for this page's post `postId`. */
export function standInId(postId) {
  return `pending-${postId}`;
}

export class Transcript {
  /**
   * `list`: the <ol>; `names()`: the known names (lower case) for @mentions; `stick()`: keep the newest in view;
   * `act(text)`: send a command, as a card's button does.
   */
  constructor(list, names, stick, act) {
    this.list = list;
    this.names = names;
    this.stick = stick;
    this.act = act;
    this.items = new Map();
  }

  /** Replaces everything with these messages (a fresh start). */
  reset(messages) {
    this.items.clear();
    this.list.replaceChildren();
    for (const message of messages) this.add(message);
  }

  has(id) {
    return this.items.has(id);
  }

  /**
   * Adds a message at the end, or in the place of what it finishes: the reply shown while written (same id), or
   * this page's stand-in for its own post (`standIn`).
   */
  add(message, standIn) {
    const item = messageItem(message, this.names(), this.act);
    this.place(message.id, item, standIn);
  }

  place(id, item, standIn) {
    const old = this.items.get(id) ?? (standIn ? this.items.get(standIn) : undefined);
    if (standIn) this.items.delete(standIn);
    this.stick(() => {
      if (old) old.replaceWith(item);
      else this.list.append(item);
    });
    this.items.set(id, item);
  }

  /** Older messages go before the first shown (those shown already are skipped). */
  prepend(messages) {
    const fresh = messages.filter((message) => !this.items.has(message.id));
    const items = fresh.map((message) => {
      const item = messageItem(message, this.names());
      this.items.set(message.id, item);
      return item;
    });
    this.list.prepend(...items);
  }

  /** A reply while it is written: its text so far. */
  stream(event) {
    const message = { id: event.id, author: event.agent, role: 'agent', text: event.text, at: event.at, tools: [] };
    const item = messageItem(message, this.names());
    item.classList.add('streaming');
    item.setAttribute('aria-busy', 'true');
    this.place(event.id, item);
  }

  /** A reply shown while written came to nothing. */
  unstream(id) {
    this.items.get(id)?.remove();
    this.items.delete(id);
  }

  /** A tool run as it ends (the reply it belongs to carries it too, once stored). */
  tool(event) {
    const item = el('li', { className: 'tool-run', attrs: { 'data-id': event.id } }, [
      el('span', { className: 'author' }, [event.agent]),
      ' ran ',
      toolBlock(event),
    ]);
    this.stick(() => this.list.append(item));
    this.items.set(event.id, item);
  }

  /** One of this page's posts, shown (marked as being sent) until the server's copy takes its place. */
  pending(post, author) {
    const message = { id: standInId(post.id), author, role: 'human', text: post.text, at: Date.now(), tools: [] };
    const item = messageItem({ ...message, files: post.fileNames }, this.names());
    item.classList.add('pending');
    item.append(el('p', { className: 'sending' }, ['sending…']));
    this.place(message.id, item);
  }

  /** This page's post was refused: its stand-in goes. */
  drop(postId) {
    this.unstream(standInId(postId));
  }

  /** A line for this reader only (a command's answer). */
  notice(text) {
    const item = el('li', { className: 'msg notice', attrs: { role: 'note' } }, [
      el('div', { className: 'meta' }, [
        el('span', { className: 'author' }, ['Only you see this']),
        timeOf(Date.now()),
      ]),
      el('div', { className: 'body' }, [el('pre', { className: 'plain' }, [text])]),
    ]);
    this.stick(() => this.list.append(item));
  }
}
