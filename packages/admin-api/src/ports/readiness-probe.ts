/** One part of the readiness answer. */
export interface ReadinessPart {
  readonly ok: boolean;
  /** Why the part failed (never an internal address). */
  readonly error?: string;
}

/** What `GET /readyz` reports: each part this node needs to work. */
export interface ReadinessReport {
  readonly database: ReadinessPart;
  /** The newest migration this build expects against the newest the database records. */
  readonly schema: ReadinessPart & {
    readonly expected: string | null;
    readonly current: string | null;
    readonly unknown?: readonly string[];
  };
  /** Migrations of this build not applied yet (or edited after they were). */
  readonly migrations: ReadinessPart & {
    readonly pending: readonly string[];
    readonly changed?: readonly string[];
  };
}

/**
 * The port `GET /readyz` asks: whether this node can work (database
 * reachable, schema at the expected version, no migration pending). It must
 * not throw and must answer in bounded time.
 */
export interface ReadinessProbe {
  check(): Promise<ReadinessReport>;
}
