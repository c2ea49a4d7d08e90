import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the listener received it. */
export interface ReceivedMail {
  readonly from: string;
  readonly rcptTo: string[];
  readonly raw: string;
  readonly user: string | undefined;
}

/** A real SMTP listener on 127.0.0.1 (no TLS, AUTH optional) that keeps what it receives. */
export interface SmtpListener {
  readonly port: number;
  readonly received: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpListener(
  credentials: { user: string; password: string } | undefined = undefined,
): Promise<SmtpListener> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (
        credentials !== undefined &&
        auth.username === credentials.user &&
        auth.password === credentials.password
      ) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('invalid credentials'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        received.push({
          from: from === false ? '' : from.address,
          rcptTo: session.envelope.rcptTo.map((address) => address.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A message split into headers and decoded text/plain and text/html parts (minimal MIME). */
export interface ParsedMail {
  readonly headers: Map<string, string>;
  readonly text: string;
  readonly html: string;
}

function splitHead(entity: string): { headers: Map<string, string>; body: string } {
  const at = entity.indexOf('\r\n\r\n');
  const head = at === -1 ? entity : entity.slice(0, at);
  const body = at === -1 ? '' : entity.slice(at + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decode(body: string, encoding: string | undefined): string {
  switch (encoding?.toLowerCase()) {
    case 'quoted-printable': {
      const soft = body.replace(/=\r?\n/g, '');
      const bytes: number[] = [];
      for (let i = 0; i < soft.length; i += 1) {
        const char = soft[i] as string;
        if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
          bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16));
          i += 2;
        } else {
          bytes.push(...Buffer.from(char, 'utf8'));
        }
      }
      return Buffer.from(bytes).toString('utf8');
    }
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/** Parses the raw message nodemailer sent (multipart/alternative with text and html). */
export function parseMail(raw: string): ParsedMail {
  const { headers, body } = splitHead(raw);
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get('content-type') ?? '')?.[1];
  let text = '';
  let html = '';
  const parts = boundary === undefined ? [raw] : body.split(`--${boundary}`).slice(1, -1);
  for (const part of parts) {
    const entity = boundary === undefined ? splitHead(part) : splitHead(part.replace(/^\r\n/, ''));
    const type = entity.headers.get('content-type') ?? '';
    const content = decode(entity.body, entity.headers.get('content-transfer-encoding')).replace(
      /\r\n/g,
      '\n',
    );
    if (type.startsWith('text/plain')) text = content;
    if (type.startsWith('text/html')) html = content;
  }
  return { headers, text, html };
}
