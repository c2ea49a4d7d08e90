import { describe, expect, it } from 'vitest';
import { renderConsistencyFindings, renderJobFailed, worstExample } from '../src/index.js';

const at = new Date('2026-03-01T03:04:05.678Z');

describe('job_failed template', () => {
  it('renders subject, fields and the admin link, escaping every value in the html part', () => {
    const mail = renderJobFailed({
      job: 'grant_cleanup',
      cause: 'timeout',
      message: 'job <b>grant_cleanup</b> timed out & "stopped"',
      runId: '0190-run',
      elapsedMs: 1234,
      at,
      publicBaseUrl: 'https://cloud.example.org/',
    });
    expect(mail.subject).toBe('[OxiCloud] Job grant_cleanup failed');
    expect(mail.text).toContain('Cause: timeout');
    expect(mail.text).toContain('Message: job <b>grant_cleanup</b> timed out & "stopped"');
    expect(mail.text).toContain('Run id: 0190-run');
    expect(mail.text).toContain('Elapsed: 1234 ms');
    expect(mail.text).toContain('Logged at: 2026-03-01T03:04:05.678Z');
    expect(mail.text).toContain('https://cloud.example.org/admin/jobs?highlight=grant_cleanup');
    expect(mail.html).toContain('job &lt;b&gt;grant_cleanup&lt;/b&gt; timed out &amp; &quot;stopped&quot;');
    expect(mail.html).not.toContain('<b>grant_cleanup</b>');
    expect(mail.html).toContain('href="https://cloud.example.org/admin/jobs?highlight=grant_cleanup"');
  });

  it('leaves out the run id and the link when not given', () => {
    const mail = renderJobFailed({ job: 'dedup_gc', cause: 'handler', message: 'x', elapsedMs: 1, at });
    expect(mail.text).not.toContain('Run id');
    expect(mail.text).not.toContain('/admin/jobs');
    expect(mail.html).not.toContain('href=');
  });
});

describe('consistency_findings template', () => {
  it('groups counts by (kind, severity), shows the worst example and links the run', () => {
    const mail = renderConsistencyFindings({
      job: 'files_consistency',
      runId: 'run-42',
      counts: [
        { kind: 'blob_size_mismatch', severity: 'Drift', count: 2 },
        { kind: 'missing_blob', severity: 'DataLoss', count: 3 },
        { kind: 'blob_size_mismatch', severity: 'Drift', count: 1 },
        { kind: 'orphan_blob', severity: 'Reclaimable', count: 5 },
      ],
      examples: [
        { kind: 'blob_size_mismatch', severity: 'Drift', resourceId: 'f-1', detail: { expected: 1 } },
        {
          kind: 'missing_blob',
          severity: 'DataLoss',
          resourceId: '<img src=x onerror=alert(1)>',
          detail: { path: '/a/<script>', size: 10 },
        },
      ],
      at,
      publicBaseUrl: 'https://cloud.example.org',
    });
    expect(mail.subject).toBe('[OxiCloud] files_consistency found 11 inconsistencies');
    expect(mail.text).toContain(
      ['  DataLoss  missing_blob: 3', '  Reclaimable  orphan_blob: 5', '  Drift  blob_size_mismatch: 3'].join(
        '\n',
      ),
    );
    expect(mail.text).toContain('Worst example (DataLoss, missing_blob):');
    expect(mail.text).toContain('https://cloud.example.org/admin/jobs/files_consistency/runs/run-42');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.html).toContain('&quot;/a/&lt;script&gt;&quot;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<img');
  });

  it('uses the singular for one finding; worstExample follows DataLoss > Reclaimable > Regenerable > Drift', () => {
    const mail = renderConsistencyFindings({
      job: 'drives_consistency',
      runId: 'r',
      counts: [{ kind: 'used_bytes_drift', severity: 'Drift', count: 1 }],
      examples: [],
      at,
    });
    expect(mail.subject).toBe('[OxiCloud] drives_consistency found 1 inconsistency');
    const pick = worstExample([
      { kind: 'a', severity: 'Drift', resourceId: '1', detail: {} },
      { kind: 'b', severity: 'Regenerable', resourceId: '2', detail: {} },
      { kind: 'c', severity: 'Reclaimable', resourceId: '3', detail: {} },
      { kind: 'd', severity: 'Reclaimable', resourceId: '4', detail: {} },
    ]);
    expect(pick?.resourceId).toBe('3');
  });
});
