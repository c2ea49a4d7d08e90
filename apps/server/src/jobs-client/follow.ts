import type { AdminClient, ApiAnswer } from './admin-client.js';
import { type ApiJob, type ApiRunSummary, isFinalStatus } from './api-types.js';
import type { CliIo } from './cli-io.js';
import { describeOutcome, formatRunEnd } from './format.js';
import { EXIT_CODES, JobsClientError } from './jobs-client-error.js';
import { type ProgressDisplay, plainDisplay, silentDisplay, terminalDisplay } from './progress-display.js';

/** How a run is followed. */
export interface FollowOptions {
  /** Milliseconds between polls. */
  readonly intervalMs: number;
  /** `--json`: no progress output; the final document on stdout. */
  readonly json: boolean;
  /** Live bars (stdout is a terminal) or plain lines (logs). */
  readonly tty: boolean;
  /** Plain lines: at most one per run this often (status changes always print). @defaultValue 5000 */
  readonly plainEveryMs?: number;
  /** Give up after the server has not answered for this long. @defaultValue 60000 */
  readonly unreachableForMs?: number;
}

/** The exit code of a run that stopped moving. */
export function exitCodeOfStatus(status: string): number {
  if (status === 'Completed') return EXIT_CODES.ok;
  if (status === 'Paused') return EXIT_CODES.paused;
  return EXIT_CODES.failed;
}

function createDisplay(io: CliIo, options: FollowOptions, labels: readonly string[] = []): ProgressDisplay {
  if (options.json) return silentDisplay();
  if (options.tty)
    return terminalDisplay(io.stdout, { labelWidth: Math.max(0, ...labels.map((l) => l.length)) });
  return plainDisplay(io.stdout, () => io.now(), options.plainEveryMs ?? 5000);
}

/** Errors worth waiting out while following: the server restarting or busy. */
function isTransient(error: unknown): error is JobsClientError {
  return (
    error instanceof JobsClientError &&
    (error.code === 'UNREACHABLE' || error.code === 'TIMEOUT' || error.status === 503)
  );
}

/**
 * Calls `step` every `intervalMs` until it returns a value (resolves with it)
 * or Ctrl-C (resolves `undefined`). Transient failures are retried until the
 * server has been away for `unreachableForMs`; other errors reject.
 */
async function pollUntil<T>(
  step: () => Promise<T | undefined>,
  io: CliIo,
  options: FollowOptions,
  display: ProgressDisplay,
): Promise<T | undefined> {
  let failingSince: number | undefined;
  while (!io.signal?.aborted) {
    try {
      const result = await step();
      if (failingSince !== undefined) display.note('the server answers again');
      failingSince = undefined;
      if (result !== undefined) return result;
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (failingSince === undefined) {
        failingSince = io.now();
        display.note(`${error.message}; retrying`);
      } else if (io.now() - failingSince >= (options.unreachableForMs ?? 60_000)) {
        throw error;
      }
    }
    await io.sleep(options.intervalMs, io.signal);
  }
  return undefined;
}

function interrupted(io: CliIo, resume: string): number {
  io.stderr.write(`oxijobs: stopped following; the run goes on (${resume})\n`);
  return EXIT_CODES.interrupted;
}

/**
 * Follows one recoverable run (`GET …/runs/{id}`) until it is Completed,
 * Failed or Paused; prints its closing line (or, with `--json`, its last
 * RunSummary) and returns the exit code: 0 Completed, 1 Failed, 3 Paused.
 */
export async function followRun(
  client: AdminClient,
  name: string,
  runId: string,
  io: CliIo,
  options: FollowOptions,
): Promise<number> {
  const display = createDisplay(io, options, [name]);
  let last: ApiAnswer<ApiRunSummary> | undefined;
  try {
    last = await pollUntil(
      async () => {
        const answer = await client.getRun(name, runId);
        display.show(name, answer.body);
        return isFinalStatus(answer.body.status) ? answer : undefined;
      },
      io,
      options,
      display,
    );
  } finally {
    display.stop();
  }
  if (!last) return interrupted(io, `\`oxijobs jobs run ${name} ${runId} --follow\` follows it again`);
  io.stdout.write(options.json ? withNewline(last.raw) : formatRunEnd(last.body, io.now()));
  return exitCodeOfStatus(last.body.status);
}

/** The jobs whose runs a batch drives: those the server lists with a `check` declaration, in its order. */
function childJobs(jobs: readonly ApiJob[], batchName: string): ApiJob[] {
  return jobs
    .filter((job) => job.name !== batchName && job.check != null)
    .sort((a, b) => (a.check?.order ?? 0) - (b.check?.order ?? 0));
}

const ACTIVE = new Set(['Running', 'CancelRequested']);

/**
 * Follows a Part 1 batch job triggered with `wait=false` (`consistency_batch`)
 * by polling `GET /api/admin/jobs`: shows each child run's progress as it goes
 * and ends when the batch is no longer running and its `last_outcome` is not
 * the one `before` had. Prints the outcome (or, with `--json`, the batch's
 * listing entry) and returns 0 for ok, 1 for err.
 */
export async function followBatch(
  client: AdminClient,
  name: string,
  before: readonly ApiJob[],
  io: CliIo,
  options: FollowOptions,
): Promise<number> {
  const display = createDisplay(
    io,
    options,
    childJobs(before, name).map((job) => job.name),
  );
  const batchBefore = before.find((job) => job.name === name);
  const previousOutcomeAt = batchBefore?.last_outcome?.at;
  const previousRunIds = new Map(
    childJobs(before, name).map((job) => [job.name, job.latest_run?.run_id] as const),
  );
  const seen = new Map<string, ApiRunSummary>();
  let finished: ApiJob | undefined;
  try {
    finished = await pollUntil(
      async () => {
        const { body: jobs } = await client.listJobs();
        const batch = jobs.find((job) => job.name === name);
        if (!batch) {
          throw new JobsClientError('BAD_RESPONSE', `the job ${name} is no longer listed by the server`);
        }
        for (const child of childJobs(jobs, name)) {
          const run = child.latest_run;
          if (!run) continue;
          const isNew = run.run_id !== previousRunIds.get(child.name) || ACTIVE.has(run.status);
          if (!isNew && !seen.has(child.name)) continue;
          seen.set(child.name, run);
          display.show(child.name, run);
        }
        const done =
          !batch.running && batch.last_outcome != null && batch.last_outcome.at !== previousOutcomeAt;
        return done ? batch : undefined;
      },
      io,
      options,
      display,
    );
  } finally {
    display.stop();
  }
  if (!finished) return interrupted(io, '`oxijobs jobs list` shows its outcome when it ends');
  const outcome = finished.last_outcome!.outcome;
  if (options.json) {
    io.stdout.write(`${JSON.stringify(finished)}\n`);
  } else {
    for (const run of seen.values()) io.stdout.write(`  ${formatRunEnd(run, io.now())}`);
    io.stdout.write(`${name}: ${describeOutcome(outcome)}\n`);
  }
  return outcome.kind === 'ok' ? EXIT_CODES.ok : EXIT_CODES.failed;
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
