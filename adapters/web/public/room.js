// The web room's page: the transcript, the message box (Enter sends, Shift+Enter for a new line, @ completes a
// name, commands typed as on other platforms), files attached to a message, older messages on scroll, and a
// connection that comes back after a drop without losing or doubling anything.
import { Completion } from './completion.js';
import { RoomConnection } from './connection.js';
import { api, el, postId } from './dom.js';
import { standInId, Transcript } from './transcript.js';

const room = decodeURIComponent(location.pathname.split('/')[2] ?? 'general');
const $ = (id) => document.getElementById(id);
const scroller = $('transcript');
const box = $('box');
const status = $('connection');

const me = await api('/api/me');
document.title = `#${room} · Roundtable`;
$('me').textContent = `Signed in as ${me.name}${me.operator ? ' (operator)' : ''}`;
$('ops-link').hidden = !me.operator;
$('box-label').textContent = `Message #${room}`;
$('rooms').replaceChildren(
  el(
    'ul',
    {},
    me.rooms.map((name) =>
      el('li', {}, [
        el('a', { attrs: { href: `/room/${name}`, 'aria-current': name === room ? 'page' : null } }, [`#${name}`]),
      ]),
    ),
  ),
);

const names = () => new Set([...me.agents, ...me.people].map((name) => name.toLowerCase()));
/** Runs a change to the transcript, keeping the newest message in view if it was. */
function stick(change) {
  const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  change();
  if (atBottom) scroller.scrollTop = scroller.scrollHeight;
}
const transcript = new Transcript($('messages'), names, stick, (text) => command(text));

// --- the connection -------------------------------------------------------------------------------------------
/** This page's posts the server has not confirmed yet, by id. */
const posts = new Map();
let older = null;
const typing = new Map();

function ownStandIn(messageId) {
  for (const id of posts.keys()) if (messageId.endsWith(`.${id}`)) return standInId(id);
  return undefined;
}

function showTyping() {
  const who = [...typing.keys()].map((agent) => `@${agent}`);
  $('typing').textContent = who.length === 0 ? '' : `${who.join(', ')} ${who.length === 1 ? 'is' : 'are'} writing…`;
}

function stopTyping(agent) {
  clearTimeout(typing.get(agent));
  typing.delete(agent);
  showTyping();
}

const connection = new RoomConnection(room, {
  welcome(frame) {
    transcript.reset(frame.messages);
    for (const stream of frame.streams) transcript.stream(stream);
    // Posts not confirmed yet stay shown as being sent (they go again now).
    for (const post of posts.values()) {
      if (!frame.messages.some((m) => m.id.endsWith(`.${post.id}`)) && !isCommand(post.text)) {
        transcript.pending(post, me.name);
      }
    }
    older = frame.older;
    showOlder();
    scroller.scrollTop = scroller.scrollHeight;
  },
  event(event) {
    if (event.kind === 'message') {
      transcript.add(event.message, ownStandIn(event.message.id));
      stopTyping(event.message.author);
    } else if (event.kind === 'stream') {
      transcript.stream(event);
      stopTyping(event.agent);
    } else if (event.kind === 'unstream') {
      transcript.unstream(event.id);
    } else if (event.kind === 'tool') {
      transcript.tool(event);
    }
  },
  typing({ agent }) {
    clearTimeout(typing.get(agent));
    typing.set(
      agent,
      setTimeout(() => stopTyping(agent), 10_000),
    );
    showTyping();
  },
  ack({ id }) {
    posts.delete(id);
  },
  refused({ id, reason }) {
    const post = posts.get(id);
    posts.delete(id);
    transcript.drop(id);
    if (post && !box.value.trim()) box.value = post.text;
    say(reason);
  },
  notice({ text }) {
    transcript.notice(text);
  },
  state(text, kind) {
    status.textContent = text;
    status.dataset.state = kind;
    if (kind === 'closed') {
      box.disabled = true;
      $('send').disabled = true;
      $('attach').disabled = true;
    }
  },
});
connection.open();

// --- the message box ------------------------------------------------------------------------------------------
let attached = [];
const completion = new Completion(box, $('completions'), () => [
  ...me.agents.map((name) => ({ name, kind: 'agent' })),
  ...me.people.filter((name) => name !== me.name).map((name) => ({ name, kind: 'person' })),
]);

function isCommand(text) {
  return /^\/\w+(\s|$)/.test(text.trim());
}

function say(text) {
  $('notice').textContent = text;
}

const count = (n) => n.toLocaleString('en');

/** Why the server would refuse this message, in a line; undefined when it would take it. */
function refusal(text) {
  if (text.length > me.limits.text) {
    return `Not sent: the message is ${count(text.length)} characters and the limit is ${count(me.limits.text)}. Shorten it, or attach it as a file.`;
  }
  if (attached.length > me.limits.files) return `Not sent: at most ${me.limits.files} files go with one message.`;
  return undefined;
}

/** A command sent as if typed (an approval card's button): the server checks it as any command; its answer is a notice. */
function command(text) {
  const post = { type: 'post', id: postId(), text, files: [] };
  posts.set(post.id, post);
  connection.post(post);
}

function send() {
  const text = box.value;
  if (!text.trim() && attached.length === 0) return;
  // Never sent: the server would refuse it (a frame over its limit would even close the connection).
  const refused = refusal(text);
  if (refused) {
    say(refused);
    return;
  }
  const post = { type: 'post', id: postId(), text, files: attached.map((file) => file.id) };
  posts.set(post.id, { ...post, fileNames: attached.map((file) => file.name) });
  if (!isCommand(text)) transcript.pending(posts.get(post.id), me.name);
  connection.post(post);
  box.value = '';
  attached = [];
  showAttached();
  say('');
  scroller.scrollTop = scroller.scrollHeight;
}

box.addEventListener('keydown', (event) => {
  if (completion.key(event)) {
    event.preventDefault();
    return;
  }
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
$('compose').addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});

// --- files ----------------------------------------------------------------------------------------------------
function showAttached() {
  $('attached').replaceChildren(
    ...attached.map((file) => {
      const remove = el('button', { attrs: { type: 'button', 'aria-label': `Remove ${file.name}` } }, ['×']);
      remove.addEventListener('click', () => {
        attached = attached.filter((other) => other !== file);
        showAttached();
        box.focus();
      });
      return el('li', {}, [file.name, ' ', remove]);
    }),
  );
}

$('attach').addEventListener('click', () => $('file').click());
$('file').addEventListener('change', async () => {
  const files = [...$('file').files];
  $('file').value = '';
  for (const file of files) {
    const refused =
      me.limits.fileBytes === 0
        ? 'uploads are off in this room'
        : file.size > me.limits.fileBytes
          ? `it is larger than the ${count(Math.round(me.limits.fileBytes / 1024 / 1024))} MB limit`
          : attached.length >= me.limits.files
            ? `at most ${me.limits.files} files go with one message`
            : undefined;
    if (refused) {
      say(`${file.name} is not attached: ${refused}.`);
      continue;
    }
    say(`Uploading ${file.name}…`);
    try {
      const held = await api(`/api/rooms/${encodeURIComponent(room)}/files?name=${encodeURIComponent(file.name)}`, {
        method: 'POST',
        body: file,
        headers: { 'content-type': file.type || 'application/octet-stream' },
      });
      attached.push({ id: held.file, name: held.name });
      showAttached();
      say(`${file.name} is attached: it goes with your next message.`);
    } catch (error) {
      say(`${file.name} could not be attached: ${error.message}`);
    }
  }
  box.focus();
});

// --- older messages -------------------------------------------------------------------------------------------
let loading = false;
function showOlder() {
  $('load-older').hidden = older === null;
  $('start').hidden = older !== null;
}

async function loadOlder() {
  if (older === null || loading) return;
  loading = true;
  try {
    const page = await api(`/api/rooms/${encodeURIComponent(room)}/history?before=${older}`);
    const before = scroller.scrollHeight;
    transcript.prepend(page.messages);
    scroller.scrollTop += scroller.scrollHeight - before;
    older = page.older;
    showOlder();
  } catch (error) {
    say(`Older messages could not be loaded: ${error.message}`);
  } finally {
    loading = false;
  }
}

$('load-older').addEventListener('click', () => void loadOlder());
new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) void loadOlder();
}).observe($('older'));
