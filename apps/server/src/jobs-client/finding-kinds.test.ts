import { FAULT_EXPECTATIONS } from '@oxicloud/dataset';
import { describe, expect, it } from 'vitest';
import { FINDING_KINDS } from './finding-kinds.js';

describe('FINDING_KINDS (what `oxijobs jobs findings --kind` accepts)', () => {
  it('accepts every kind a seeded fault makes a consistency check record', () => {
    const recorded = Object.values(FAULT_EXPECTATIONS).filter((e) => 'severity' in e);
    expect(recorded.length).toBeGreaterThan(0);
    for (const { job, kind } of recorded) {
      expect(FINDING_KINDS[job], `${job} is listed`).toBeDefined();
      expect(FINDING_KINDS[job], `${job} accepts ${kind}`).toContain(kind);
    }
  });
});
