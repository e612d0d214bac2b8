// `@` completion in the message box: typing `@` and the start of a name lists the agents and people it may be;
// arrow keys choose, Enter or Tab takes the name, Escape closes the list. The box keeps the focus throughout
// (aria-activedescendant names the chosen option for screen readers).

const TOKEN = /(^|[\s(])@([\p{L}\p{N}_.-]*)$/u;
const SHOWN = 8;

export class Completion {
  /** `names()`: [{ name, kind: 'agent' | 'person' }] to offer. */
  constructor(box, list, names) {
    this.box = box;
    this.list = list;
    this.names = names;
    this.options = [];
    this.active = -1;
    box.addEventListener('input', () => this.update());
    box.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    list.addEventListener('mousedown', (event) => event.preventDefault());
    list.addEventListener('click', (event) => {
      const option = event.target.closest('[role="option"]');
      if (option) this.accept(Number(option.dataset.index));
    });
  }

  get open() {
    return !this.list.hidden;
  }

  /** Handles a key while the list is open; true when the key was the list's. */
  key(event) {
    if (!this.open) return false;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this.highlight((this.active + step + this.options.length) % this.options.length);
      return true;
    }
    if (event.key === 'Enter' || event.key === 'Tab') {
      this.accept(this.active);
      return true;
    }
    if (event.key === 'Escape') {
      this.close();
      return true;
    }
    return false;
  }

  update() {
    const before = this.box.value.slice(0, this.box.selectionStart);
    const match = TOKEN.exec(before);
    if (!match) return this.close();
    const typed = match[2].toLowerCase();
    this.options = this.names()
      .filter((entry) => entry.name.toLowerCase().startsWith(typed))
      .slice(0, SHOWN);
    if (this.options.length === 0) return this.close();
    this.list.replaceChildren(
      ...this.options.map((entry, index) => {
        const option = document.createElement('div');
        option.id = `completion-${index}`;
        option.setAttribute('role', 'option');
        option.dataset.index = String(index);
        option.textContent = `@${entry.name}`;
        const kind = document.createElement('span');
        kind.className = 'kind';
        kind.textContent = entry.kind === 'agent' ? ' agent' : ' person';
        option.append(kind);
        return option;
      }),
    );
    this.list.hidden = false;
    this.box.setAttribute('aria-expanded', 'true');
    this.highlight(0);
  }

  highlight(index) {
    this.active = index;
    for (const option of this.list.children) {
      option.setAttribute('aria-selected', String(Number(option.dataset.index) === index));
    }
    this.box.setAttribute('aria-activedescendant', `completion-${index}`);
  }

  accept(index) {
    const entry = this.options[index];
    if (!entry) return this.close();
    const caret = this.box.selectionStart;
    const before = this.box.value.slice(0, caret).replace(TOKEN, (_all, lead) => `${lead}@${entry.name} `);
    this.box.value = before + this.box.value.slice(caret);
    this.box.setSelectionRange(before.length, before.length);
    this.close();
    this.box.dispatchEvent(new Event('completed'));
  }

  close() {
    this.list.hidden = true;
    this.options = [];
    this.active = -1;
    this.box.setAttribute('aria-expanded', 'false');
    this.box.removeAttribute('aria-activedescendant');
  }
}
