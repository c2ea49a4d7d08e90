import type { ConsistencyCheck, StatefulAdapter } from '@oxicloud/consistency';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  BlobEntry,
  BlobStorage,
  BlobStorageHealth,
  DriveUsageScan,
  FileBlobScan,
  FolderTreeScan,
} from '../src/index.js';

// The BlobStorage operations, without the StatefulAdapter part.
abstract class BlobOperations {
  readonly backend = 'memory';
  async put(_hash: string, _data: Uint8Array): Promise<void> {}
  async get(_hash: string): Promise<NodeJS.ReadableStream & AsyncIterable<Uint8Array>> {
    throw new Error('not found');
  }
  async head(_hash: string): Promise<BlobEntry | null> {
    return null;
  }
  async exists(_hash: string): Promise<boolean> {
    return false;
  }
  async delete(_hash: string): Promise<boolean> {
    return false;
  }
  async list(_options: { startAfter?: string | null; limit: number }): Promise<BlobEntry[]> {
    return [];
  }
  async health(): Promise<BlobStorageHealth> {
    return { ok: true, backend: 'memory' };
  }
}

describe('the StatefulAdapter contract on state-owning ports', () => {
  it('a BlobStorage without subsystem() and consistencyChecks() does not compile', () => {
    // @ts-expect-error Class 'NoContract' incorrectly implements 'BlobStorage': subsystem, consistencyChecks missing.
    class NoContract extends BlobOperations implements BlobStorage {}
    expectTypeOf<NoContract>().not.toMatchTypeOf<BlobStorage>();
  });

  it('a BlobStorage with only subsystem() does not compile either', () => {
    // @ts-expect-error consistencyChecks is required: there is no default.
    class HalfContract extends BlobOperations implements BlobStorage {
      subsystem(): string {
        return 'blobs';
      }
    }
    expectTypeOf<HalfContract>().not.toMatchTypeOf<BlobStorage>();
  });

  it('a BlobStorage that declares its consistency contract compiles', () => {
    class Declared extends BlobOperations implements BlobStorage {
      subsystem(): string {
        return 'blobs';
      }
      consistencyChecks(): readonly ConsistencyCheck[] {
        // TODO(consistency): add storage_consistency once the check lands.
        return [];
      }
    }
    expectTypeOf<Declared>().toMatchTypeOf<BlobStorage>();
    expectTypeOf<Declared>().toMatchTypeOf<StatefulAdapter>();
  });

  it('the consistency scan ports are state-owning ports too', () => {
    expectTypeOf<DriveUsageScan>().toMatchTypeOf<StatefulAdapter>();
    expectTypeOf<FolderTreeScan>().toMatchTypeOf<StatefulAdapter>();
    expectTypeOf<FileBlobScan>().toMatchTypeOf<StatefulAdapter>();
  });
});
