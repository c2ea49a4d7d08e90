import { RecoverableError } from '../recoverable-error.js';

/** A decoded cursor: the phase byte and the key bytes that follow it (empty at a phase's start). */
export interface PhaseCursor {
  readonly phase: number;
  readonly key: Uint8Array;
}

/**
 * Encodes a cursor as one phase byte followed by the key bytes (a walk with
 * several phases, or directions, encodes which one it is in). Several key
 * parts are concatenated: `encodePhaseCursor(1, hashBytes, idBytes)`. An
 * empty key means "at the start of this phase".
 *
 * @throws {RecoverableError} `INVALID_CURSOR` when `phase` is not an integer in 0..255.
 */
export function encodePhaseCursor(phase: number, ...keyParts: Uint8Array[]): Uint8Array {
  if (!Number.isInteger(phase) || phase < 0 || phase > 255) {
    throw new RecoverableError('INVALID_CURSOR', `a cursor phase is an integer in 0..255, got ${phase}`);
  }
  const length = keyParts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(1 + length);
  out[0] = phase;
  let offset = 1;
  for (const part of keyParts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Decodes a cursor written by {@link encodePhaseCursor}. When `keyLengths`
 * is given, the cursor's phase must be listed and its key must be empty or
 * one of the listed lengths, which catches a cursor written by another job
 * or version.
 *
 * @throws {RecoverableError} `INVALID_CURSOR` when the cursor is empty, its
 * phase is not listed in `keyLengths`, or its key has the wrong length.
 */
export function decodePhaseCursor(
  cursor: Uint8Array,
  keyLengths?: Readonly<Record<number, number>>,
): PhaseCursor {
  if (cursor.length === 0) {
    throw new RecoverableError('INVALID_CURSOR', 'an empty cursor has no phase byte');
  }
  const phase = cursor[0] as number;
  const key = cursor.subarray(1);
  if (keyLengths) {
    const expected = keyLengths[phase];
    if (expected === undefined) {
      throw new RecoverableError(
        'INVALID_CURSOR',
        `cursor phase ${phase} is unknown; allowed phases: ${Object.keys(keyLengths).join(', ')}`,
      );
    }
    if (key.length !== 0 && key.length !== expected) {
      throw new RecoverableError(
        'INVALID_CURSOR',
        `cursor key of phase ${phase} must be empty or ${expected} bytes, got ${key.length}`,
      );
    }
  }
  return { phase, key };
}
