import type {
  CancelResultJson,
  FindingsPageJson,
  JobSummaryJson,
  OutcomeEnvelopeJson,
  RunListEntryJson,
  RunSummaryJson,
  RunTriggeredJson,
  TriggerAcceptedJson,
} from '@oxicloud/admin-api';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  ApiCancelled,
  ApiFindingsPage,
  ApiJob,
  ApiOutcomeEnvelope,
  ApiRunStarted,
  ApiRunSummary,
} from './api-types.js';

/** Every answer the admin API can give (its zod schemas) is readable as the client's lenient types. */
describe('the CLI reads the admin API wire types', () => {
  it('accepts every response shape', () => {
    expectTypeOf<JobSummaryJson>().toExtend<ApiJob>();
    expectTypeOf<RunSummaryJson>().toExtend<ApiRunSummary>();
    expectTypeOf<RunListEntryJson>().toExtend<ApiRunSummary>();
    expectTypeOf<OutcomeEnvelopeJson>().toExtend<ApiOutcomeEnvelope>();
    expectTypeOf<TriggerAcceptedJson>().toExtend<ApiOutcomeEnvelope>();
    expectTypeOf<RunTriggeredJson>().toExtend<ApiRunStarted>();
    expectTypeOf<CancelResultJson>().toExtend<ApiCancelled>();
    expectTypeOf<FindingsPageJson>().toExtend<ApiFindingsPage>();
  });
});
