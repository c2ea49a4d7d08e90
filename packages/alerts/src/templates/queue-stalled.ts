import { escapeHtml, oneLine } from '../html.js';
import { htmlFrame, type RenderedEmail } from './rendered-email.js';

/** What the `queue_stalled` template shows: one of OxiCloud's queues whose oldest row stopped moving. */
export interface QueueStalledData {
  /** The queue's table, e.g. `storage.tree_etag_dirty`. */
  readonly table: string;
  /** The OxiCloud service that should drain it, in words. */
  readonly drainer: string;
  /** Rows in the queue now. */
  readonly rows: number;
  /** `false` when {@link rows} is an estimate (the queue holds more rows than were counted). */
  readonly exact: boolean;
  /** The queue's oldest row (its lowest id), the one that has not moved. */
  readonly oldestId: number;
  /** When the engine first saw that row at the head of the queue (a lower bound of its age). */
  readonly headSince: Date;
  /** How long the oldest row may stay at the head before the queue counts as stalled. */
  readonly stallMs: number;
}

function duration(ms: number): string {
  const s = ms / 1000;
  if (s >= 7200) return `${Math.round((s / 3600) * 10) / 10} h`;
  if (s >= 120) return `${Math.round(s / 60)} min`;
  return `${Math.round(s)} s`;
}

/**
 * The `queue_stalled` mail: subject `[OxiCloud] Queue <table> is not
 * draining`, then the queue, its backlog, its oldest row and since when it
 * has not moved, and the OxiCloud service that drains it. Every value is
 * escaped in the HTML part.
 */
export function renderQueueStalled(data: QueueStalledData): RenderedEmail {
  const subject = oneLine(`[OxiCloud] Queue ${data.table} is not draining`);
  const rows: Array<[string, string]> = [
    ['Queue', data.table],
    ['Backlog', `${data.exact ? '' : 'about '}${data.rows} row${data.rows === 1 ? '' : 's'}`],
    ['Oldest row', `id ${data.oldestId}, at the head of the queue since ${data.headSince.toISOString()}`],
    ['Threshold', `the oldest row may stay at the head for ${duration(data.stallMs)}`],
    ['Drained by', data.drainer],
  ];
  const advice =
    "OxiCloud empties this queue within seconds; an oldest row that does not move means its drainer stopped. Look at OxiCloud's logs and restart it; never empty the queue by hand.";
  const text = [
    `The queue ${data.table} has held the same oldest row for ${duration(data.stallMs)} or more.`,
    '',
    ...rows.map(([name, value]) => `${name}: ${value}`),
    '',
    advice,
    'This mail is sent once per stall; the queue counts as draining again once its oldest row moves.',
    '',
  ].join('\n');
  const html = htmlFrame(
    escapeHtml(subject),
    [
      `<h2 style="color: #b06000;">Queue ${escapeHtml(data.table)} is not draining</h2>`,
      '<table style="border-collapse: collapse;">',
      ...rows.map(
        ([name, value]) =>
          `<tr><th style="text-align: left; padding: 2px 12px 2px 0; vertical-align: top;">${escapeHtml(name)}</th>` +
          `<td style="padding: 2px 0;"><code style="white-space: pre-wrap;">${escapeHtml(value)}</code></td></tr>`,
      ),
      '</table>',
      `<p>${escapeHtml(advice)}</p>`,
    ].join(''),
  );
  return { subject, text, html };
}
