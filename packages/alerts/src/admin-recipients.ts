/**
 * Who receives alerts: every user with role `admin` that has an e-mail
 * address. Read at send time, so a new admin gets the next alert without a
 * restart. `OxiAdminRecipients` in @oxicloud/storage/oxicloud implements it on
 * `auth.users`.
 */
export interface AdminRecipients {
  adminEmails(): Promise<string[]>;
}
