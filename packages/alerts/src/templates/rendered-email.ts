/** A rendered template: subject, plain-text body and HTML body. */
export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** The shared HTML frame of every alert (inline styles: mail clients drop style sheets). */
export function htmlFrame(title: string, body: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><title>',
    title,
    '</title></head>',
    '<body style="font-family: system-ui, sans-serif; font-size: 14px; color: #222;">',
    body,
    '<p style="color: #777; font-size: 12px;">Sent by OxiCloud job alerts. At most one mail per job and kind every 6 hours.</p>',
    '</body>',
    '</html>',
  ].join('');
}
