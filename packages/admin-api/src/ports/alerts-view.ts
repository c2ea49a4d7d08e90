import type { AlertsStateJson } from '../routes/wire-types.js';

/**
 * The port `GET /api/admin/alerts` asks: the running server's e-mail alerts
 * (on with its SMTP server, or off with the variable that is missing) and
 * how many admins have an address now.
 */
export interface AlertsView {
  state(): Promise<AlertsStateJson>;
}
