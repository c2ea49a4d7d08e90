import { describe, expect, it } from 'vitest';
import { CATEGORY_ORDER_DEFAULT, CATEGORY_ORDERS, categoryOrderFor } from './category-order.js';

/** OxiCloud's `category_order_for`, case by case (fact sheet §4; display_helpers.rs). */
describe('categoryOrderFor', () => {
  it.each([
    // Step 1: an exact MIME type wins over the name.
    ['report.jpg', 'application/pdf', 400],
    ['a.txt', 'text/csv', 600],
    ['deck', 'application/vnd.oasis.opendocument.presentation', 700],
    ['x.mp3', 'application/json', 900],
    ['setup', 'application/x-msi', 1200],
    ['backup.bin', 'application/gzip', 800],
    // Step 2: the MIME type's shape, in order.
    ['photo.pdf', 'image/jpeg', 100],
    ['clip', 'video/mp4', 200],
    ['song', 'audio/flac', 300],
    ['main.c', 'text/x-c', 900],
    ['tool', 'application/x-perlscript', 900],
    ['readme', 'text/markdown; charset=utf-8', 1000],
    ['index', 'text/html', 900],
    ['style', 'text/css', 900],
    ['notes.md', 'text/plain', 1100],
    // Step 3: the extension, ASCII lower-cased, from the last dot of the last segment.
    ['Holiday.JPG', 'application/octet-stream', 100],
    ['archive.tar.GZ', 'application/octet-stream', 800],
    ['dir.pdf/file', 'application/octet-stream', 500],
    ['Setup.AppImage', '', 1200],
    ['a.markdown', '', 1000],
    ['data.unknownext', 'application/octet-stream', 500],
    ['no-extension', 'application/octet-stream', 500],
    ['trailing.', 'application/octet-stream', 500],
    ['.pdf', 'application/octet-stream', 400],
    // Longer than 16 bytes: not classified (Document), even when it would match after a cut.
    ['x.pdfpdfpdfpdfpdfpdf', '', 500],
    // Non-ASCII letters are not lower-cased (OxiCloud lower-cases ASCII only).
    ['x.PDF\u0130', '', 500],
  ])('%s (%s) → %i', (name, mime, expected) => {
    expect(categoryOrderFor(name, mime)).toBe(expected);
  });

  it('never gives the column default: 9999 is only what a folder copy leaves', () => {
    expect(Object.values(CATEGORY_ORDERS)).not.toContain(CATEGORY_ORDER_DEFAULT);
  });
});
