/** What went wrong while choosing or starting the test run's Postgres server. */
export type TestSupportErrorCode =
  /** A variable of the harness has a value it does not take. */
  | 'BAD_CONFIG'
  /** Testcontainers was required and no container runtime answered. */
  | 'NO_CONTAINER_RUNTIME'
  /** The runtime answered, but the Postgres container did not come up. */
  | 'CONTAINER_DID_NOT_START';

/** The one error class of the test harness; `code` says which failure it is. */
export class TestSupportError extends Error {
  override readonly name = 'TestSupportError';
  constructor(
    readonly code: TestSupportErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
