/** The message of anything thrown, for an `err` outcome or a log field. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** Why a signal fired, in words (`timeout`, `shutdown`, …), for an `err` outcome. */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason === undefined) return 'aborted';
  return errorMessage(reason);
}
