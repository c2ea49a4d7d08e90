import { readdir } from 'node:fs/promises';

/** The `code` of a Node.js system error (`ENOENT`, …), or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

/**
 * A folder's names; none when it does not exist (removed meanwhile), or, with
 * `alsoWhen`, for those error codes too (e.g. `ENOTDIR`).
 */
export async function readNames(dir: string, alsoWhen: readonly string[] = []): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || (code !== undefined && alsoWhen.includes(code))) return [];
    throw error;
  }
}
