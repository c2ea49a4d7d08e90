import type {
  FindingDecisionJson,
  FindingDetailJson,
  TrackedFindingJson,
  TrackedFindingsPageJson,
} from '@oxicloud/admin-api';
import { HEALTH_SERVICE } from '@oxicloud/admin-api/health-service';
import type {
  ApiAlertsState,
  ApiCancelled,
  ApiFindingsPage,
  ApiJob,
  ApiNode,
  ApiOutcomeEnvelope,
  ApiPeriodicRun,
  ApiRunDetail,
  ApiRunListEntry,
  ApiRunStarted,
} from './api-types.js';
import { JobsClientError } from './jobs-client-error.js';
import type { RepairPlanJson } from './repair-commands.js';

/** Where and as whom the client talks to the admin API. */
export interface AdminClientSettings {
  /** Base URL of the server, e.g. `http://127.0.0.1:8087` (no trailing path needed). */
  readonly baseUrl: string;
  /** An admin bearer token (`oxijobs token --user admin`). */
  readonly token: string;
  /** Per-request timeout. @defaultValue 30000 */
  readonly timeoutMs?: number;
  /** The fetch to use. @defaultValue the global fetch */
  readonly fetch?: typeof fetch;
}

/** A successful answer: its status, the parsed body, and the body exactly as sent (for `--json`). */
export interface ApiAnswer<T> {
  readonly status: number;
  readonly body: T;
  readonly raw: string;
}

/** Options of `POST /api/admin/jobs/{name}/trigger`. */
export interface TriggerOptions {
  readonly force?: boolean;
  readonly deep?: boolean;
  /** `false`: a Part 1 job answers 202 at once and runs in the background. */
  readonly wait?: boolean;
  /** Run params of a recoverable job (the JSON body). */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Timeout of this request (a waited Part 1 run may take long). */
  readonly timeoutMs?: number;
}

/** Paging of a list route. */
export interface PageOptions {
  readonly limit?: number;
  readonly offset?: number;
}

/** Filters of the findings route. */
export interface FindingsOptions extends PageOptions {
  readonly severity?: string;
  readonly kind?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A small client of the admin API (`/api/admin/jobs…`), on the global fetch.
 * Every method resolves with the parsed JSON of a 2xx answer, or rejects with
 * a {@link JobsClientError}: `API_ERROR` carrying the API's `{ error: { code,
 * message } }`, `UNREACHABLE`, `TIMEOUT` or `BAD_RESPONSE`.
 *
 * @example
 * ```ts
 * const client = new AdminClient({ baseUrl: 'http://127.0.0.1:8087', token });
 * const { body: jobs } = await client.listJobs();
 * ```
 */
export class AdminClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  /** The identity check, once per client: no token goes out before it passed. */
  #identified: Promise<void> | undefined;

  constructor(settings: AdminClientSettings) {
    this.baseUrl = settings.baseUrl.replace(/\/+$/, '');
    this.#token = settings.token;
    this.#timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#fetch = settings.fetch ?? fetch;
  }

  /** `GET /api/admin/jobs`. */
  listJobs(): Promise<ApiAnswer<ApiJob[]>> {
    return this.#request('GET', '/api/admin/jobs');
  }

  /** `POST /api/admin/jobs/{name}/trigger`: 200 outcome (Part 1), 202 accepted or 202 run started. */
  trigger(
    name: string,
    options: TriggerOptions = {},
  ): Promise<ApiAnswer<ApiOutcomeEnvelope | ApiRunStarted>> {
    const query = new URLSearchParams();
    if (options.force !== undefined) query.set('force', String(options.force));
    if (options.deep !== undefined) query.set('deep', String(options.deep));
    if (options.wait !== undefined) query.set('wait', String(options.wait));
    return this.#request('POST', `${jobPath(name)}/trigger${queryString(query)}`, {
      ...(options.params !== undefined ? { body: options.params } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  /** `GET /api/admin/alerts`: whether the server mails alerts (its SMTP server, or what is missing). */
  alertsState(): Promise<ApiAnswer<ApiAlertsState>> {
    return this.#request('GET', '/api/admin/alerts');
  }

  /** `GET /api/admin/nodes`: the server processes on the database. */
  listNodes(): Promise<ApiAnswer<ApiNode[]>> {
    return this.#request('GET', '/api/admin/nodes');
  }

  /** `GET /api/admin/jobs/{name}/periodic-runs`: a periodic job's runs from every node, newest first. */
  listPeriodicRuns(name: string, page: PageOptions = {}): Promise<ApiAnswer<ApiPeriodicRun[]>> {
    return this.#request('GET', `${jobPath(name)}/periodic-runs${queryString(pageQuery(page))}`);
  }

  /** `POST /api/admin/jobs/{name}/cancel`. */
  cancel(name: string): Promise<ApiAnswer<ApiCancelled>> {
    return this.#request('POST', `${jobPath(name)}/cancel`);
  }

  /** `GET /api/admin/jobs/{name}/runs`, newest first. */
  listRuns(name: string, page: PageOptions = {}): Promise<ApiAnswer<ApiRunListEntry[]>> {
    return this.#request('GET', `${jobPath(name)}/runs${queryString(pageQuery(page))}`);
  }

  /** `GET /api/admin/jobs/{name}/runs/{id}`. */
  getRun(name: string, runId: string): Promise<ApiAnswer<ApiRunDetail>> {
    return this.#request('GET', `${jobPath(name)}/runs/${encodeURIComponent(runId)}`);
  }

  /** `GET /api/admin/jobs/{name}/runs/{id}/findings`. */
  listFindings(
    name: string,
    runId: string,
    options: FindingsOptions = {},
  ): Promise<ApiAnswer<ApiFindingsPage>> {
    const query = pageQuery(options);
    if (options.severity !== undefined) query.set('severity', options.severity);
    if (options.kind !== undefined) query.set('kind', options.kind);
    return this.#request(
      'GET',
      `${jobPath(name)}/runs/${encodeURIComponent(runId)}/findings${queryString(query)}`,
    );
  }

  /** `GET /api/admin/findings`: findings across runs, worst first, keyset-paged. */
  listTrackedFindings(
    options: {
      readonly state?: string;
      readonly severity?: string;
      readonly kind?: string;
      readonly check?: string;
      readonly cursor?: string;
      readonly limit?: number;
    } = {},
  ): Promise<ApiAnswer<TrackedFindingsPageJson>> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(options))
      if (value !== undefined) query.set(key, String(value));
    return this.#request('GET', `/api/admin/findings${queryString(query)}`);
  }

  /** `GET /api/admin/findings/{id}`: one finding with its history. */
  getTrackedFinding(id: string): Promise<ApiAnswer<FindingDetailJson>> {
    return this.#request('GET', `/api/admin/findings/${encodeURIComponent(id)}`);
  }

  /** `POST /api/admin/findings/{id}/accept|false-positive|reopen` with a comment (and `until` for accept). */
  decideFinding(
    id: string,
    decision: 'accept' | 'false-positive' | 'reopen',
    body: FindingDecisionJson,
  ): Promise<ApiAnswer<TrackedFindingJson>> {
    return this.#request('POST', `/api/admin/findings/${encodeURIComponent(id)}/${decision}`, { body });
  }

  /** `POST /api/admin/repairs/plan`: a repair plan of findings (ids or a filter), with optional choices. */
  planRepair(body: {
    readonly finding_ids?: readonly string[];
    readonly filter?: { readonly check?: string; readonly kind?: string; readonly severity?: string };
    readonly choices?: Readonly<Record<string, string>>;
  }): Promise<ApiAnswer<RepairPlanJson>> {
    return this.#request('POST', '/api/admin/repairs/plan', { body });
  }

  /** `GET /api/admin/repairs/{id}`. */
  getRepairPlan(id: string): Promise<ApiAnswer<RepairPlanJson>> {
    return this.#request('GET', `/api/admin/repairs/${encodeURIComponent(id)}`);
  }

  /** `POST /api/admin/repairs/{id}/choices`. */
  chooseRepair(id: string, choices: Readonly<Record<string, string>>): Promise<ApiAnswer<RepairPlanJson>> {
    return this.#request('POST', `/api/admin/repairs/${encodeURIComponent(id)}/choices`, {
      body: { choices },
    });
  }

  /** `POST /api/admin/repairs/{id}/apply` with the plan's hash. */
  applyRepair(id: string, hash: string): Promise<ApiAnswer<{ plan_id: string; run_id: string }>> {
    return this.#request('POST', `/api/admin/repairs/${encodeURIComponent(id)}/apply`, { body: { hash } });
  }

  async #request<T>(
    method: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; timeoutMs?: number } = {},
  ): Promise<ApiAnswer<T>> {
    this.#identified ??= this.#identify();
    await this.#identified;
    const url = `${this.baseUrl}${path}`;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: 'application/json',
      'user-agent': 'oxijobs-cli',
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let raw: string;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      raw = await response.text();
    } catch (error) {
      throw this.#transportError(error, timeoutMs);
    }
    let body: unknown;
    try {
      body = raw.length === 0 ? undefined : JSON.parse(raw);
    } catch (error) {
      throw new JobsClientError(
        'BAD_RESPONSE',
        `HTTP ${response.status} from ${method} ${url} is not JSON: ${oneLine(raw, 200)}; is --url the oxijobs server?`,
        { cause: error, status: response.status },
      );
    }
    if (!response.ok) throw apiError(response.status, body, raw);
    return { status: response.status, body: body as T, raw };
  }

  /**
   * Asks `GET /healthz` (no token) who answers, and refuses to go on unless
   * it is the engine (`"service": "oxijobs"`): a token must never reach
   * OxiCloud itself or anything else a wrong URL points at.
   */
  async #identify(): Promise<void> {
    const url = `${this.baseUrl}/healthz`;
    let response: Response;
    let raw: string;
    try {
      response = await this.#fetch(url, {
        headers: { accept: 'application/json', 'user-agent': 'oxijobs-cli' },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      raw = await response.text();
    } catch (error) {
      this.#identified = undefined;
      throw this.#transportError(error, this.#timeoutMs);
    }
    let service: unknown;
    try {
      service = (JSON.parse(raw) as { service?: unknown } | null)?.service;
    } catch {
      service = undefined;
    }
    if (service !== HEALTH_SERVICE) {
      throw new JobsClientError(
        'NOT_THE_ENGINE',
        `${this.baseUrl} is not the oxijobs server (GET /healthz answered HTTP ${response.status} without "service": "${HEALTH_SERVICE}"), ` +
          'so the admin token was not sent; check --url or OXICLOUD_ADMIN_URL (OxiCloud itself listens on 8086)',
        { status: response.status },
      );
    }
  }

  #transportError(error: unknown, timeoutMs: number): JobsClientError {
    const name = (error as { name?: unknown })?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new JobsClientError(
        'TIMEOUT',
        `the server at ${this.baseUrl} did not answer within ${formatSeconds(timeoutMs)} (raise it with --timeout)`,
        { cause: error },
      );
    }
    const code = networkCode(error);
    const reason =
      code === 'ECONNREFUSED'
        ? 'connection refused'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'unknown host'
          : (code ?? (error as Error)?.message ?? String(error));
    return new JobsClientError(
      'UNREACHABLE',
      `the server is not reachable at ${this.baseUrl} (${reason}); is \`oxijobs serve\` running? ` +
        'set --url or OXICLOUD_ADMIN_URL',
      { cause: error },
    );
  }
}

/** The error of a non-2xx answer: the API's envelope when there is one. */
function apiError(status: number, body: unknown, raw: string): JobsClientError {
  const envelope = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (envelope && typeof envelope.code === 'string') {
    const message = typeof envelope.message === 'string' ? envelope.message : '';
    const hint =
      status === 401
        ? '; mint a fresh token with `oxijobs token --user admin`'
        : status === 403
          ? '; the token must belong to an admin user'
          : '';
    return new JobsClientError('API_ERROR', `${envelope.code}: ${oneLine(message, 500)}${hint}`, {
      status,
      apiCode: envelope.code,
    });
  }
  return new JobsClientError('BAD_RESPONSE', `HTTP ${status}: ${oneLine(raw, 200) || '(empty body)'}`, {
    status,
  });
}

/** The errno-style code (ECONNREFUSED, …) somewhere in a fetch failure's cause chain. */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = networkCode(errors[0]);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function jobPath(name: string): string {
  return `/api/admin/jobs/${encodeURIComponent(name)}`;
}

function pageQuery(page: PageOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.offset !== undefined) query.set('offset', String(page.offset));
  return query;
}

function queryString(query: URLSearchParams): string {
  const text = query.toString();
  return text ? `?${text}` : '';
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
