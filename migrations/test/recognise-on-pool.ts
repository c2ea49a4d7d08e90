import type { TestDatabase } from '@oxicloud/test-support';
import { type Recognition, recogniseDatabase } from '../src/index.js';

/** Recognises `db` on one session of its pool. */
export async function recognise(db: TestDatabase): Promise<Recognition> {
  const client = await db.pool.connect();
  try {
    return await recogniseDatabase(client);
  } finally {
    client.release();
  }
}
