import { describe, expect, it } from 'vitest';
import { mimeContradicts, normaliseMime, sniffMime } from '../src/storage-consistency/index.js';

const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0, 0, 0, 0,
]);
const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
]);
const ZIP = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]);

describe('storage_consistency mime sniffing', () => {
  it('sniffs signatures, and nothing from text or empty bytes', async () => {
    expect(await sniffMime(JPEG)).toEqual({ mime: 'image/jpeg', ext: 'jpg' });
    expect(await sniffMime(PNG)).toMatchObject({ mime: 'image/png' });
    expect(await sniffMime(Buffer.from('just some plain text, no signature'))).toBeNull();
    expect(await sniffMime(new Uint8Array())).toBeNull();
  });

  it('contradicts only on a confident sniff against a specific recorded type', () => {
    const jpeg = { mime: 'image/jpeg', ext: 'jpg' };
    expect(mimeContradicts('image/png', jpeg)).toBe(true);
    expect(mimeContradicts('application/pdf', jpeg)).toBe(true);
    expect(mimeContradicts('image/jpeg', jpeg)).toBe(false);
    expect(mimeContradicts('IMAGE/JPEG; charset=binary', jpeg)).toBe(false);
    expect(mimeContradicts('image/jpg', jpeg)).toBe(false);
    expect(mimeContradicts(null, jpeg)).toBe(false);
    expect(mimeContradicts('application/octet-stream', jpeg)).toBe(false);
    expect(mimeContradicts('image/png', null)).toBe(false);
    // containers: a docx sniffs as zip from its first bytes
    expect(
      mimeContradicts('application/vnd.openxmlformats-officedocument.wordprocessingml.document', {
        mime: 'application/zip',
        ext: 'zip',
      }),
    ).toBe(false);
    // one container family: an m4a sniffs as video/mp4 or audio/x-m4a
    expect(mimeContradicts('audio/mp4', { mime: 'video/mp4', ext: 'mp4' })).toBe(false);
    expect(mimeContradicts('audio/wav', { mime: 'audio/x-wav', ext: 'wav' })).toBe(false);
    expect(mimeContradicts('audio/mpeg', { mime: 'video/mp4', ext: 'mp4' })).toBe(true);
    expect(normaliseMime(' Text/HTML ; charset=utf-8')).toBe('text/html');
  });

  it('a zip sniff is a container', async () => {
    expect(await sniffMime(ZIP)).toMatchObject({ mime: 'application/zip' });
    expect(mimeContradicts('application/epub+zip', await sniffMime(ZIP))).toBe(false);
  });
});
