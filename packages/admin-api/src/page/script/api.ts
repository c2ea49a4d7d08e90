/**
 * The token and the API client of the `/admin/jobs` page. The operator's
 * token lives in `sessionStorage`; {@link api} is the page's one request, on
 * `/api/admin/jobs` (and whole paths under `/api/admin/`). A 401/403 signs
 * the operator out (the handler given to {@link startApi}); an answer that
 * arrives after a sign-out or sign-in is dropped.
 */
import type { ErrorBodyJson } from '../../routes/wire-types.ts';

const API_ROOT = '/api/admin';
const API = `${API_ROOT}/jobs`;
const TOKEN_KEY = 'oxicloud.admin.token';

/** What the page does when the server refuses the token (401) or its user (403). */
export type AuthFailure = (status: number, err: ErrorBodyJson['error'] | null) => void;

/** Counts sign-ins and sign-outs: an answer to a request of an earlier session is dropped. */
let generation = 0;
let authFailed: AuthFailure = () => {};

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(value: string): void {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Starts a new session (a sign-in or sign-out): answers to the previous one's requests are dropped. */
export function newSession(): void {
  generation += 1;
}

function errorOf(body: unknown): ErrorBodyJson['error'] | null {
  if (body === null || typeof body !== 'object' || !('error' in body)) return null;
  const error = (body as ErrorBodyJson).error;
  return error && typeof error === 'object' ? error : null;
}

/** The one request of the page: `base` (default the jobs API) + `path`, an optional JSON `body`. */
export async function api<T>(
  path: string,
  options?: { method: 'GET' | 'POST'; base?: string; body?: unknown },
): Promise<T> {
  const current = token();
  if (!current) throw new ApiError(401, 'UNAUTHENTICATED', 'not signed in');
  const session = generation;
  // A `base` is whole; paths under /api/admin/ are whole (the nodes route); the rest are below /api/admin/jobs.
  const url =
    options?.base !== undefined ? options.base + path : path.startsWith(`${API_ROOT}/`) ? path : API + path;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options?.method ?? 'GET',
      headers: {
        authorization: `Bearer ${current}`,
        accept: 'application/json',
        ...(options?.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      cache: 'no-store',
      ...(options?.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `could not reach the server (${describe(error)})`);
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const err = errorOf(body);
  const code = err ? err.code : `HTTP_${response.status}`;
  if (response.status === 401 || response.status === 403) {
    if (session === generation) authFailed(response.status, err);
    throw new ApiError(response.status, code, err ? err.message : response.statusText);
  }
  if (!response.ok) {
    throw new ApiError(response.status, code, err ? err.message : response.statusText || 'request failed');
  }
  if (session !== generation) throw new ApiError(0, 'STALE', 'signed out meanwhile');
  return body as T;
}

export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    return error.status ? `${error.code} (${error.status}): ${error.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Whether `error` signed the operator out (the sign-in view already says why). */
export function isAuthError(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 401 || error.status === 403);
}

/** Wires the client; `onAuthFailure` signs the operator out with a message. */
export function startApi(onAuthFailure: AuthFailure): void {
  authFailed = onAuthFailure;
}
