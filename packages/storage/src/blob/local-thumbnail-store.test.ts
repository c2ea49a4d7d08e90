import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalThumbnailStore } from './local-thumbnail-store.js';
import { thumbnailPath } from './thumbnail-layout.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'thumbnails-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const hash = (c: string) => c.repeat(64);
async function put(
  size: 'icon' | 'preview' | 'large',
  h: string,
  bytes: number,
  ext: 'webp' | 'jpg' = 'webp',
) {
  const path = thumbnailPath(root, size, h, ext);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, Buffer.alloc(bytes));
  return path;
}

describe('LocalThumbnailStore: OxiCloud’s .thumbnails, by content hash', () => {
  it('merges the three size folders by hash, in hash order, paged after a hash; other names are not thumbnails', async () => {
    await put('icon', hash('b'), 10);
    await put('preview', hash('b'), 20);
    await put('large', hash('b'), 30, 'jpg');
    await put('icon', hash('a'), 5);
    await put('large', hash('c'), 7);
    await writeFile(join(root, '.thumbnails', 'icon', 'ext-0190a000-0000-7000-8000-000000000001.jpg'), 'x');
    await writeFile(join(root, '.thumbnails', 'icon', 'notes.txt'), 'x');
    const store = new LocalThumbnailStore(root);
    const first = await store.list({ startAfter: null, limit: 2 });
    expect(first.map((e) => [e.hash, e.bytes, e.files.length])).toEqual([
      [hash('a'), 5, 1],
      [hash('b'), 60, 3],
    ]);
    expect(first[1]?.files).toEqual([
      join('.thumbnails', 'icon', `${hash('b')}.webp`),
      join('.thumbnails', 'preview', `${hash('b')}.webp`),
      join('.thumbnails', 'large', `${hash('b')}.jpg`),
    ]);
    expect((await store.list({ startAfter: hash('b'), limit: 2 })).map((e) => e.hash)).toEqual([hash('c')]);
    expect(await store.list({ startAfter: hash('c'), limit: 2 })).toEqual([]);
  });

  it('gives the newest file’s time, and null for a hash with no thumbnail left', async () => {
    const old = await put('icon', hash('d'), 1);
    await put('preview', hash('d'), 1);
    await utimes(old, new Date('2020-01-01'), new Date('2020-01-01'));
    const entry = await new LocalThumbnailStore(root).stat(hash('d'));
    expect(entry?.modifiedAt.getTime()).toBeGreaterThan(new Date('2021-01-01').getTime());
    expect(await new LocalThumbnailStore(root).stat(hash('e'))).toBeNull();
  });

  it('a storage root without .thumbnails has no thumbnails', async () => {
    expect(
      await new LocalThumbnailStore(join(root, 'missing')).list({ startAfter: null, limit: 10 }),
    ).toEqual([]);
  });
});
