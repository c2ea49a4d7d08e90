/**
 * The drawer's dialog and how its parts re-render: a part (the runs, a run's
 * details, a run's findings) is rebuilt only when its data changed, and the
 * focus stays on the same control (by its `data-focus` key) across a rebuild.
 */
import { byId as $ } from './dom.ts';

/** The drawer, a modal `<dialog>`. */
export const dialog = $<HTMLDialogElement>('drawer');

/** Re-renders a part only when its data changed; keeps focus on the same control by data-focus key. */
export function renderKeyed(
  container: HTMLElement,
  key: string,
  previousKey: string,
  build: () => Array<Node | string>,
) {
  if (key === previousKey) return previousKey;
  const active = document.activeElement;
  const hadFocus = Boolean(active && active !== container && container.contains(active));
  const focusKey = hadFocus && active ? active.getAttribute('data-focus') : null;
  container.replaceChildren(...build());
  if (hadFocus) {
    const again = focusKey
      ? container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`)
      : null;
    if (again) again.focus();
    else if (dialog.open) $('drawer-title').focus();
  }
  return key;
}
