/**
 * Processes `items` in order with at most `concurrency` in flight. Before an
 * item starts, `shouldStop(index)` is asked; once it says yes no further item
 * starts. Resolves with the number of items finished, which is always a
 * prefix (every item before it started and finished). Rejects with the first
 * error after the in-flight items settle.
 */
export async function processPrefix<Item>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item) => Promise<void>,
  shouldStop: (index: number) => boolean,
): Promise<number> {
  let next = 0;
  let stopped = false;
  let firstError: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (!stopped && firstError === null && next < items.length) {
      if (shouldStop(next)) {
        stopped = true;
        return;
      }
      const index = next++;
      try {
        await work(items[index] as Item);
      } catch (error) {
        firstError ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (firstError !== null) throw (firstError as { error: unknown }).error;
  return next;
}
