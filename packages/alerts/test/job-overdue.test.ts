import { describe, expect, it } from 'vitest';
import { renderJobOverdue } from '../src/index.js';

describe('job_overdue template', () => {
  it('names the job, its cadence, its last success or registration, and escapes the HTML', () => {
    const never = renderJobOverdue({
      job: 'files_consistency',
      maxAgeMs: 7 * 24 * 3_600_000,
      lastSuccessAt: null,
      firstRegisteredAt: new Date('2026-01-01T00:00:00.000Z'),
      overdueSince: new Date('2026-01-11T12:00:00.000Z'),
      publicBaseUrl: 'https://cloud.example.org',
    });
    expect(never.subject).toBe('[OxiCloud] Job files_consistency is overdue');
    expect(never.text).toContain('a success at least every 7 days');
    expect(never.text).toContain('never (registered on this database at 2026-01-01T00:00:00.000Z)');
    expect(never.text).toContain('Overdue since: 2026-01-11T12:00:00.000Z');
    expect(never.text).toContain('https://cloud.example.org/admin/jobs?highlight=files_consistency');
    const deep = renderJobOverdue({
      job: '<b>storage_consistency',
      deep: true,
      maxAgeMs: 2_000,
      lastSuccessAt: new Date('2026-01-01T00:00:00.000Z'),
      firstRegisteredAt: new Date('2025-01-01T00:00:00.000Z'),
      overdueSince: new Date('2026-01-01T00:00:03.000Z'),
    });
    expect(deep.subject).toBe('[OxiCloud] Job <b>storage_consistency (deep) is overdue');
    expect(deep.text).toContain('Last success: 2026-01-01T00:00:00.000Z');
    expect(deep.text).toContain('every 2 s');
    expect(deep.html).not.toContain('<b>storage');
    expect(deep.html).toContain('&lt;b&gt;storage_consistency');
  });
});
