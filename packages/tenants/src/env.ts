import { TenantsError } from './errors.js';

/** The environment a `…ConfigFromEnv` function reads (`process.env` fits). */
export type TenantEnv = Readonly<Record<string, string | undefined>>;

/** Bounds and default of one whole-number environment variable. */
export interface IntegerEnvSpec {
  /** Value when the variable is unset or blank. */
  readonly defaultValue: number;
  /** Smallest allowed value (inclusive). */
  readonly min: number;
  /** Largest allowed value (inclusive). @defaultValue Number.MAX_SAFE_INTEGER */
  readonly max?: number;
  /** Unit for the error message: `hours`, `seconds`, `rows`. */
  readonly unit: string;
  /** What a special value means, appended to the allowed-range text (e.g. `0 = on demand only`). */
  readonly note?: string;
}

/**
 * Reads a whole-number variable: unset or blank gives the default; anything
 * else must be digits within `[min, max]`, or a `TenantsError`
 * (`INVALID_CONFIG`) names the variable, the value and what is allowed.
 */
export function readIntegerEnv(env: TenantEnv, name: string, spec: IntegerEnvSpec): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return spec.defaultValue;
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  const text = raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < spec.min || value > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER
        ? `a whole number of ${spec.unit} >= ${spec.min}`
        : `a whole number of ${spec.unit} from ${spec.min} to ${max}`;
    throw new TenantsError(
      'INVALID_CONFIG',
      `${name}=${JSON.stringify(raw)} is not allowed: expected ${range}` +
        `${spec.note ? ` (${spec.note})` : ''}; unset it for the default ${spec.defaultValue}`,
    );
  }
  return value;
}

/** Hours or seconds from env → milliseconds, with `0` meaning "no periodic tick" (`null`). */
export function intervalMsOrNull(amount: number, unitMs: number): number | null {
  return amount === 0 ? null : amount * unitMs;
}

/** Milliseconds per hour. */
export const HOUR_MS = 3_600_000;
/** Milliseconds per second. */
export const SECOND_MS = 1_000;
/** Milliseconds per day. */
export const DAY_MS = 86_400_000;
