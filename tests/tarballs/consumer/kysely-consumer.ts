// A consumer's own Kysely (whatever minor of the peer range it installed)
// handed to every package that takes one: typechecked against each tested minor.
import { type FindingsDatabase, migrate as migrateFindings, PgFindingStore } from '@oxicloud/consistency';
import { migrate, RecoverableEngine, type RecoverableTables } from '@oxicloud/recoverable';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

interface MyTables {
  'app.orders': { id: string; customer: string };
}

export async function wire(url: string): Promise<void> {
  const db = new Kysely<MyTables & RecoverableTables & FindingsDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }),
  });
  await migrate(db);
  await migrateFindings(db);
  const engine = new RecoverableEngine({ db });
  const findings = new PgFindingStore({ db });
  const unknownDb: Kysely<unknown> = db as unknown as Kysely<unknown>;
  await migrate(unknownDb);
  console.log(engine.names(), await findings.summarize('0190a000-0000-7000-8000-000000000001'));
  await db.destroy();
}
