import { type ChildProcess, spawn } from 'node:child_process';
import type { PostgresBinaries } from './binaries.js';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import type { SystemUser } from './system-user.js';

/** What {@link PostgresProcess} runs. */
export interface PostgresProcessOptions {
  readonly binaries: PostgresBinaries;
  readonly dataDir: string;
  readonly port: number;
  /** More `postgres` arguments, e.g. `['-c', 'fsync=off']`. */
  readonly flags?: readonly string[];
  readonly runAs: SystemUser | undefined;
  /** Receives what the postmaster writes to stderr (its log), chunk by chunk; dropped when unset. */
  readonly onLog?: (text: string) => void;
}

const READY = 'database system is ready to accept connections';

/**
 * A postmaster run as a child of this process (`postgres -D … -p …`, as
 * `runAs`): started, stopped (fast shutdown) and started again, or crashed
 * (SIGQUIT: every backend dies at once, the next start runs crash recovery).
 * For tests and tools; the server starts its postmaster with pg_ctl, in a
 * session of its own.
 */
export class PostgresProcess {
  #child: ChildProcess | undefined;
  constructor(private readonly options: PostgresProcessOptions) {}

  /** The running postmaster, if any. */
  get child(): ChildProcess | undefined {
    return this.#child;
  }

  /**
   * Starts the postmaster and resolves once it accepts connections.
   *
   * @throws EmbeddedPostgresError `START_FAILED` with its last output when it exits first.
   */
  async start(): Promise<void> {
    if (this.#child !== undefined) return;
    const { binaries, dataDir, port, runAs } = this.options;
    const child = spawn(
      binaries.postgres,
      ['-D', dataDir, '-p', String(port), ...(this.options.flags ?? [])],
      {
        env: { ...process.env, LC_MESSAGES: 'C' },
        stdio: ['ignore', 'ignore', 'pipe'],
        ...runAs,
      },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onLog = this.options.onLog;
      const onData = (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        onLog?.(text);
        output = `${output}${text}`.slice(-4000);
        if (output.includes(READY)) {
          child.stderr?.off('data', onData);
          // keep draining: a full pipe would block the postmaster
          if (onLog) child.stderr?.on('data', (more: Buffer) => onLog(more.toString('utf8')));
          else child.stderr?.resume();
          resolve();
        }
      };
      child.stderr?.on('data', onData);
      child.once('error', (cause) =>
        reject(
          new EmbeddedPostgresError('START_FAILED', `postgres could not run: ${cause.message}`, { cause }),
        ),
      );
      child.once('exit', (code, signal) =>
        reject(
          new EmbeddedPostgresError(
            'START_FAILED',
            `postgres exited (${signal ?? `code ${code}`}) before it accepted connections on port ${port}: ${output.replace(/\s+/g, ' ').trim().slice(-800)}`,
          ),
        ),
      );
    });
    this.#child = child;
    child.once('exit', () => {
      if (this.#child === child) this.#child = undefined;
    });
  }

  async #signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      this.#child = undefined;
      return;
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
    this.#child = undefined;
  }

  /** Fast shutdown (SIGINT); resolves when the postmaster has exited. A no-op when not running. */
  stop(): Promise<void> {
    return this.#signal('SIGINT');
  }

  /** What `pg_ctl stop -m immediate` does (SIGQUIT): nothing is flushed. A no-op when not running. */
  crash(): Promise<void> {
    return this.#signal('SIGQUIT');
  }
}
