import { describe, expect, it } from 'vitest';
import { parseParams, parseSeconds, parseWholeNumber, resolveConnection } from './cli-values.js';
import { JobsClientError } from './jobs-client-error.js';

describe('resolveConnection', () => {
  it('takes flags over the environment over the default', () => {
    expect(resolveConnection({ token: 't' }, {})).toMatchObject({
      baseUrl: 'http://127.0.0.1:8087',
      token: 't',
      timeoutMs: 30_000,
    });
    const env = { OXICLOUD_ADMIN_URL: 'http://jobs.internal:9000/', OXICLOUD_ADMIN_TOKEN: 'from-env' };
    expect(resolveConnection({}, env)).toMatchObject({
      baseUrl: 'http://jobs.internal:9000',
      token: 'from-env',
    });
    expect(
      resolveConnection({ url: 'https://x.example/base/', token: 'flag', timeout: 2.5 }, env),
    ).toMatchObject({
      baseUrl: 'https://x.example/base',
      token: 'flag',
      timeoutMs: 2500,
    });
  });

  it('refuses a missing token with how to get one (exit 2)', () => {
    const error = (() => {
      try {
        resolveConnection({}, { OXICLOUD_ADMIN_TOKEN: '  ' });
      } catch (e) {
        return e as JobsClientError;
      }
      throw new Error('no error');
    })();
    expect(error).toBeInstanceOf(JobsClientError);
    expect(error.code).toBe('NO_TOKEN');
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('oxijobs token --user admin');
  });

  it('refuses a URL that is not http(s), naming where it came from', () => {
    expect(() => resolveConnection({ url: 'ftp://x', token: 't' }, {})).toThrow(
      /--url="ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => resolveConnection({ token: 't' }, { OXICLOUD_ADMIN_URL: 'not a url' })).toThrow(
      /OXICLOUD_ADMIN_URL="not a url" is not a URL/,
    );
  });
});

describe('value parsers', () => {
  it('parses whole numbers in range and says what is allowed otherwise', () => {
    expect(parseWholeNumber('50', 1, 100)).toBe(50);
    for (const bad of ['abc', '0', '101', '1.5', '-3', '']) {
      expect(() => parseWholeNumber(bad, 1, 100)).toThrow('use a whole number from 1 to 100');
    }
  });

  it('parses seconds', () => {
    expect(parseSeconds('0.5', 0.1, 60)).toBe(0.5);
    expect(() => parseSeconds('soon', 0.1, 60)).toThrow('use a number of seconds from 0.1 to 60');
    expect(() => parseSeconds('0', 0.1, 60)).toThrow();
  });

  it('parses --params as a JSON object only', () => {
    expect(parseParams('{"batch_size":500}')).toEqual({ batch_size: 500 });
    expect(() => parseParams('{batch_size:500}')).toThrow(/use a JSON object, e\.g\./);
    expect(() => parseParams('[1]')).toThrow(/not an array or a scalar/);
    expect(() => parseParams('3')).toThrow(/not an array or a scalar/);
  });
});
