import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A running s3rver (a real S3-protocol server) in its own process, for tests. */
export interface S3rverProcess {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly bucket: string;
  stop(): Promise<void>;
}

/**
 * Starts s3rver 3.7.1 in a child `node --openssl-legacy-provider` process
 * with one bucket, on a free loopback port. The flag is needed on Node 20:
 * s3rver encrypts ListObjectsV2 continuation tokens with DES, which
 * OpenSSL 3 only offers in its legacy provider (`ERR_OSSL_EVP_UNSUPPORTED`
 * otherwise). The flag applies to that process only, not to the tests or the
 * product. The child exits when its stdin closes, so it never outlives the
 * test worker.
 */
export async function startS3rver(bucket = 'oxicloud-test'): Promise<S3rverProcess> {
  const directory = await mkdtemp(join(tmpdir(), 'oxicloud-s3rver-'));
  const s3rverPath = createRequire(import.meta.url).resolve('s3rver');
  const script = `
    const S3rver = require(${JSON.stringify(s3rverPath)});
    const server = new S3rver({
      address: '127.0.0.1', port: 0, silent: true,
      directory: ${JSON.stringify(directory)},
      configureBuckets: [{ name: ${JSON.stringify(bucket)} }],
    });
    server.run().then(
      (address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\\n'),
      (error) => { console.error(error); process.exit(1); },
    );
    process.stdin.on('end', () => server.close().finally(() => process.exit(0)));
    process.stdin.resume();
  `;
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env,
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('s3rver did not start within 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code} before listening`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    async stop() {
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      await rm(directory, { recursive: true, force: true });
    },
  };
}
