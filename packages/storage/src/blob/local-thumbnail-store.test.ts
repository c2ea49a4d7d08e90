import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalThumbnailStore } from './local-thumbnail-store.js';
import { externalThumbnailPath, thumbnailPath, transcodedImagePath } from './thumbnail-layout.js';

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

describe('LocalThumbnailStore: OxiCloud’s files keyed by file id', () => {
  const id = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  async function write(path: string, bytes: number) {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, Buffer.alloc(bytes));
    return path;
  }

  it('merges ext- thumbnails of the three sizes and .transcoded/webp (and .skip) by file id, in id order, paged; other names are not theirs', async () => {
    await write(externalThumbnailPath(root, 'icon', id(2)), 10);
    await write(externalThumbnailPath(root, 'large', id(2)), 30);
    await write(transcodedImagePath(root, id(2)), 50);
    await write(transcodedImagePath(root, id(2), true), 0);
    await write(transcodedImagePath(root, id(1), true), 0);
    await write(externalThumbnailPath(root, 'preview', id(3)), 7);
    // A hash thumbnail, a temp file, an upper-case id and a name that is not a UUID: not keyed by a file id.
    await put('icon', hash('a'), 5);
    await write(join(root, '.thumbnails', 'icon', 'oxithumb-123.jpg'), 1);
    await write(join(root, '.thumbnails', 'icon', `ext-${id(4).toUpperCase()}.jpg`), 1);
    await write(join(root, '.transcoded', 'webp', 'notes.webp'), 1);
    const store = new LocalThumbnailStore(root);
    const first = await store.listByFileId({ startAfter: null, limit: 2 });
    expect(
      first.map((e) => [e.fileId, e.externalThumbnails?.bytes ?? null, e.transcoded?.bytes ?? null]),
    ).toEqual([
      [id(1), null, 0],
      [id(2), 40, 50],
    ]);
    expect(first[1]?.externalThumbnails?.files).toEqual([
      join('.thumbnails', 'icon', `ext-${id(2)}.jpg`),
      join('.thumbnails', 'large', `ext-${id(2)}.jpg`),
    ]);
    expect(first[1]?.transcoded?.files).toEqual([
      join('.transcoded', 'webp', `${id(2)}.webp`),
      join('.transcoded', 'webp', `${id(2)}.webp.skip`),
    ]);
    const rest = await store.listByFileId({ startAfter: id(2), limit: 2 });
    expect(rest.map((e) => [e.fileId, e.externalThumbnails?.files.length, e.transcoded])).toEqual([
      [id(3), 1, null],
    ]);
    // The hash walk is not disturbed by them.
    expect((await store.list({ startAfter: null, limit: 10 })).map((e) => e.hash)).toEqual([hash('a')]);
  });

  it('stats one file id now (newest time of each family), null when nothing is left; no folders, no entries', async () => {
    const old = await write(externalThumbnailPath(root, 'icon', id(5)), 3);
    await utimes(old, new Date('2020-01-01'), new Date('2020-01-01'));
    const store = new LocalThumbnailStore(root);
    expect(await store.statByFileId(id(5))).toEqual({
      fileId: id(5),
      externalThumbnails: {
        files: [join('.thumbnails', 'icon', `ext-${id(5)}.jpg`)],
        bytes: 3,
        modifiedAt: new Date('2020-01-01'),
      },
      transcoded: null,
    });
    expect(await store.statByFileId(id(6))).toBeNull();
    expect(
      await new LocalThumbnailStore(join(root, 'missing')).listByFileId({ startAfter: null, limit: 5 }),
    ).toEqual([]);
  });
});

describe('LocalThumbnailStore.remove: a repair removes derived files only', () => {
  it('removes the files an entry lists (one already gone is no error), and the next walk no longer sees them', async () => {
    await put('icon', hash('d'), 10);
    await put('large', hash('d'), 20, 'jpg');
    const fileId = '0190a000-0000-7000-8000-0000000000aa';
    const transcoded = transcodedImagePath(root, fileId);
    await mkdir(join(transcoded, '..'), { recursive: true });
    await writeFile(transcoded, 'webp');
    const store = new LocalThumbnailStore(root);
    expect((await store.list({ startAfter: null, limit: 10 })).map((e) => e.hash)).toEqual([hash('d')]);
    const entry = await store.stat(hash('d'));
    expect(await store.remove([...(entry?.files ?? []), '.thumbnails/preview/' + `${hash('d')}.webp`])).toBe(
      2,
    );
    expect(await store.stat(hash('d'))).toBeNull();
    expect(await store.list({ startAfter: null, limit: 10 })).toEqual([]);
    const derived = await store.statByFileId(fileId);
    expect(await store.remove(derived?.transcoded?.files ?? [])).toBe(1);
    expect(await store.statByFileId(fileId)).toBeNull();
  });

  it('refuses, removing nothing, any path that is not a thumbnail or transcoded file of the root', async () => {
    const kept = await put('icon', hash('e'), 10);
    await writeFile(join(root, 'notes.txt'), 'x');
    const store = new LocalThumbnailStore(root);
    for (const bad of ['notes.txt', '.blobs/ab/x.blob', '../outside.webp', '.thumbnails/icon/notes.txt']) {
      await expect(store.remove([`.thumbnails/icon/${hash('e')}.webp`, bad])).rejects.toThrow(
        /not a thumbnail or transcoded file/,
      );
    }
    expect((await store.stat(hash('e')))?.files).toEqual([`.thumbnails/icon/${hash('e')}.webp`]);
    expect(kept).toContain(hash('e'));
  });
});
