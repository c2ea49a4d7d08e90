// Quick start of @oxicloud/scheduler: no database, no HTTP.
// Run: npx tsx examples/quick-start.ts (or compile with tsc and run with node)
import { type JobHandler, JobRegistry, ok, silentLogger } from '@oxicloud/scheduler';

let cleaned = 0;
const trashCleanup: JobHandler = {
  name: 'trash_cleanup',
  async run(args) {
    cleaned += args.force ? 10 : 3; // your work here; honour the AbortSignal (2nd argument) in long loops
    return ok(cleaned, { forced: args.force });
  },
};

const registry = new JobRegistry({
  logger: silentLogger, // any pino-compatible logger: info/warn/error(fields, message)
  onOutcome: (event) => console.log(`${event.job}: ${event.outcome.kind} (${event.source})`),
});
registry.register(trashCleanup, 50, null); // every 50 ms, no timeout
registry.start();

const outcome = await registry.trigger('trash_cleanup', { force: true }); // on demand, same rules as a tick
await new Promise((resolve) => setTimeout(resolve, 120)); // let a tick or two run
await registry.stop();

const entry = registry.get('trash_cleanup');
if (outcome?.kind !== 'ok' || entry?.last_outcome === null || cleaned < 10) {
  throw new Error(`unexpected: ${JSON.stringify({ outcome, entry, cleaned })}`);
}
console.log(`scheduler quick start ok: cleaned ${cleaned}`);
