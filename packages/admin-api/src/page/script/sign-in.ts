/**
 * Signing in and out of the `/admin/jobs` page: the token form, the sign-out
 * button, and what a refused token (401) or user (403) says. Signing in shows
 * the jobs view (and the repair plan the address names); signing out stops
 * the poll, closes the drawer and forgets every job shown.
 */
import type { ErrorBodyJson } from '../../routes/wire-types.ts';
import { PAGE } from './address.ts';
import { forgetToken, newSession, saveToken } from './api.ts';
import { byId as $ } from './dom.ts';
import { closeDrawer } from './drawer.ts';
import { loadFindings } from './findings-view.ts';
import { clearJobsTable } from './jobs-table.ts';
import { state } from './page-state.ts';
import { stopPolling, tick } from './polling.ts';
import { showRepairPlan } from './repair-view.ts';

export function showSignIn(message: string, kind?: 'error' | 'info'): void {
  stopPolling();
  closeDrawer(false);
  newSession();
  state.jobs = [];
  clearJobsTable();
  $('jobs-view').hidden = true;
  $('sign-out').hidden = true;
  $('signin-view').hidden = false;
  $('signin-message').textContent = message || '';
  $('signin-message').className = `message ${kind || 'error'}`;
  $<HTMLInputElement>('token').value = '';
  $('token').focus();
}

export function authFailed(status: number, err: ErrorBodyJson['error'] | null): void {
  forgetToken();
  const detail = err ? ` (${err.code}: ${err.message})` : '';
  showSignIn(
    status === 403
      ? `This token is valid but its user is not an admin${detail}. Sign in with an admin token.`
      : `The token was not accepted${detail}. It may have expired: mint a new one with pnpm oxijobs token --user admin.`,
  );
}

export async function showJobs(focusHeading: boolean): Promise<void> {
  void loadFindings();
  const repairPlan = new URLSearchParams(location.search).get('repair');
  if (repairPlan) void showRepairPlan(repairPlan);
  $('signin-view').hidden = true;
  $('jobs-view').hidden = false;
  $('sign-out').hidden = false;
  $('jobs-empty').hidden = state.jobs.length > 0;
  if (focusHeading) $('jobs-title').focus();
  await tick();
}

/** Wires the sign-in form and the sign-out button. */
export function startSignIn(): void {
  $('signin-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = $<HTMLInputElement>('token').value.trim();
    if (!value) {
      $('signin-message').textContent = 'Enter a token first.';
      $('token').focus();
      return;
    }
    saveToken(value);
    newSession();
    $('signin-message').textContent = '';
    await showJobs(true);
  });

  $('sign-out').addEventListener('click', () => {
    forgetToken();
    history.replaceState(null, '', PAGE);
    showSignIn('Signed out.', 'info');
  });
}
