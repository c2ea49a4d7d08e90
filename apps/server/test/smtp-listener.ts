import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A real SMTP listener on loopback that keeps the subject of every mail it receives. */
export interface SmtpListener {
  readonly port: number;
  /** Subjects in the order the mails arrived. */
  readonly subjects: string[];
  close(): Promise<void>;
}

/** Starts an SMTP listener (no TLS, no auth) on a free loopback port. */
export async function startSmtpListener(): Promise<SmtpListener> {
  const subjects: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        subjects.push(/^Subject: (.*)$/im.exec(raw)?.[1]?.trim() ?? '');
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    subjects,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The `OXICLOUD_SMTP_*` of a server that mails to `listener`. */
export function smtpEnv(listener: SmtpListener): Record<string, string> {
  return {
    OXICLOUD_SMTP_HOST: '127.0.0.1',
    OXICLOUD_SMTP_PORT: String(listener.port),
    OXICLOUD_SMTP_TLS: 'none',
    OXICLOUD_SMTP_FROM: 'OxiCloud <alerts@example.org>',
  };
}
