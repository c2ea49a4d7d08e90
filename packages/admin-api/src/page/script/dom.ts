/** What {@link h} accepts as properties: attributes, `class`, `text`, `value`/`max`, and `on<event>` listeners. */
export type Props = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/** A child of {@link h}: nodes as they are, anything else as text; null/undefined/false are left out. */
export type Child = Node | string | number | null | undefined | false;

/** The element with this id; the page's static shell has every id the script uses. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no element #${id}`);
  return element as T;
}

/** Builds an element; strings become text nodes (never HTML). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Array<Child | readonly Child[]>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (typeof value === 'function') {
        if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
      } else if (key === 'class') el.className = String(value);
      else if (key === 'text') el.textContent = String(value);
      else if ((key === 'value' || key === 'max') && 'value' in el) {
        (el as unknown as Record<string, unknown>)[key] = value;
      } else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}
