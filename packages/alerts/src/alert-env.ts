import { AlertsError } from './alerts-error.js';
import type { Env } from './smtp-config.js';

const ALERT_ON_FAIL = /^OXICLOUD_JOB_([A-Z0-9_]+)_ALERT_ON_FAIL$/;

/** The env variable that switches one job's alerts: `OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL`. */
export function alertOnFailVariable(job: string): string {
  return `OXICLOUD_JOB_${job.toUpperCase()}_ALERT_ON_FAIL`;
}

function parseSwitch(name: string, raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new AlertsError('INVALID_CONFIG', `${name} must be true or false, got ${JSON.stringify(raw)}`);
}

/**
 * Checks every `OXICLOUD_JOB_<NAME>_ALERT_ON_FAIL` in the environment: each
 * must be `true` or `false` (any case). The server calls it at boot so a typo
 * fails the start instead of silently leaving alerts on; {@link JobAlerts}
 * calls it on construction too.
 *
 * @returns the names (lower-cased job names) whose alerts are switched off.
 * @throws AlertsError `INVALID_CONFIG` naming the variable.
 */
export function validateAlertEnv(env: Env): string[] {
  const off: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const match = ALERT_ON_FAIL.exec(name);
    if (match === null || raw === undefined || raw.trim() === '') continue;
    if (!parseSwitch(name, raw)) off.push((match[1] ?? '').toLowerCase());
  }
  return off.sort();
}

/** Whether alerts are on for `job` (default on; `…_ALERT_ON_FAIL=false` turns them off). */
export function alertsEnabledFor(env: Env, job: string): boolean {
  const name = alertOnFailVariable(job);
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return true;
  return parseSwitch(name, raw);
}
