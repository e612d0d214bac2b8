// Small helpers the room and the console share. Every text goes into the page as a text node.

/** An element with a class, attributes and children (strings become text nodes). */
export function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  for (const [name, value] of Object.entries(options.attrs ?? {})) {
    if (value !== undefined && value !== null && value !== false)
      node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

/** `14:03` in the reader's time zone, with the full date and time for a tooltip and for screen readers. */
export function timeOf(ms) {
  const date = new Date(ms);
  const time = el('time', { attrs: { datetime: date.toISOString(), title: date.toLocaleString() } });
  time.textContent = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return time;
}

/** Calls the server's JSON API; throws an Error with the server's words on failure. */
export async function api(path, options = {}) {
  const response = await fetch(path, {
    credentials: 'same-origin',
    ...options,
    headers: { ...(options.json ? { 'content-type': 'application/json' } : {}), ...(options.headers ?? {}) },
    body: options.json ? JSON.stringify(options.json) : options.body,
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = new Error(body?.error ?? `the server answered ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

/** A random id for a post (the server takes a post with the same id once). */
export function postId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
