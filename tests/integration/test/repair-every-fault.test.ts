/**
 * The repair flow on OxiCloud's domain, end to end: a generated dataset
 * with every OxiCloud fault (`packages/dataset/src/oxicloud/faults.ts`,
 * local store), `consistency_batch` (force, deep) over every check on the
 * `Oxi*` adapters, a plan of every open finding through the real planner
 * (`OxiRepairStore`), choices made, approval refused on a stale hash and
 * given on the plan's, the `repair` run to its end, then the checks again:
 *
 * - every finding the store can decide is an action line, applied, and
 *   re-verified `passed`; the second batch leaves none of them open;
 * - the rest are "needs a person", with their reason (lost bytes with no
 *   verified copy, a count above its references, which is never lowered,
 *   a drive id either side of which may be wrong);
 * - no row of the `storage`/`auth` tables and no stored object that the
 *   plan did not name changed (OxiCloud's trigger-fed queues aside).
 */
import { createHash } from 'node:crypto';
import { PgRepairPlans } from '@oxicloud/consistency';
import { OXICLOUD_FAULT_EXPECTATIONS, OXICLOUD_FAULT_NAMES } from '@oxicloud/dataset';
import { blake3Hex, LocalThumbnailStore } from '@oxicloud/storage';
import { OxiBlobIndexScan, OxiRepairStore } from '@oxicloud/storage/oxicloud';
import {
  type BlobHasher,
  createRepairActions,
  createRepairJob,
  createRepairPlanner,
  HAND_ORPHAN_BYTES_TO_GC,
  REPAIR_JOB_NAME,
  RESTORE_PARENT,
  type RepairPlanView,
  TRASH_CHILD,
} from '@oxicloud/tenants';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OXI_SMALL, type OxiDomainWorld, oxiDomainWorld } from './oxicloud-domain-fixtures.js';

/** Which table a plan's resource or derived row type names. */
const TABLE_OF: Readonly<Record<string, string>> = {
  drive: 'storage.drives',
  user: 'auth.users',
  folder: 'storage.folders',
  file: 'storage.files',
  blob: 'storage.blobs',
  manifest: 'storage.chunk_manifests',
  grant: 'storage.role_grants',
  favorites: 'auth.user_favorites',
  recent_items: 'auth.user_recent_files',
  magic_links: 'auth.magic_link_tokens',
  nextcloud_ids: 'storage.nextcloud_object_ids',
  face: 'faces.faces',
};

/** OxiCloud's trigger-fed queues: every ordinary update of a listed column enqueues (§4); not the plan's rows. */
const QUEUES = new Set(['storage.tree_etag_dirty', 'storage.search_index_dirty']);

/** The kinds that need a person after this plan, and why. */
const NEEDS_PERSON: Readonly<Record<string, RegExp>> = {
  'files_consistency missing_blob': /no bytes for this hash .* file\(s\) reference it/,
  'storage_consistency missing_blob_bytes': /no other backend is configured/,
  'storage_consistency blob_hash_mismatch': /no other backend is configured/,
  'storage_consistency blob_object_size_mismatch': /no safe repair action for storage_consistency/,
  'blobs_consistency ref_count_mismatch': /is above the .* never lowers a count/,
  'folders_consistency trash_flags_mismatch': /no safe repair action for folders_consistency/,
  'folders_consistency drive_id_parent_mismatch': /differs from its parent .* person's decision/,
  'files_consistency media_metadata_missing': /no safe repair action for files_consistency/,
  'files_consistency drive_id_parent_mismatch': /differs from its folder .* person's decision/,
  // A manifest's count is raised to its files (manifest_ref_count_low, applied), never lowered.
  'manifests_consistency manifest_ref_count_high':
    /is above the .* file\(s\) naming the manifest.* never lowers a count/,
  // No repair of a manifest without files or of a manifest's shape yet: a person decides, the plan says so.
  'manifests_consistency manifest_unreferenced': /no safe repair action for manifests_consistency/,
  'manifests_consistency manifest_shape_mismatch': /no safe repair action for manifests_consistency/,
  'manifests_consistency manifest_hash_mismatch': /no safe repair action for manifests_consistency/,
  'drives_consistency drive_without_owner': /no safe repair action for drives_consistency/,
  'drives_consistency drive_root_mismatch': /no safe repair action for drives_consistency/,
  'references_consistency share_grant_mismatch': /no safe repair action for references_consistency/,
  'folders_consistency orphan_root':
    /a live top-level folder .* that no drive names as its root .* a person’s decision/,
};

describe('repair of an OxiCloud dataset with every fault', () => {
  let w: OxiDomainWorld;
  let plans: PgRepairPlans;

  async function openFindings() {
    const { rows } = await w.db.pool.query<{ id: string; check_name: string; kind: string }>(
      "SELECT id, check_name, kind FROM jobs.findings WHERE state IN ('open', 'reopened') ORDER BY id",
    );
    return rows;
  }

  /** md5 of every row of the storage and auth tables (`table:pk`), and of every stored object (`bytes:hash`). */
  async function snapshot(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const tables = await w.db.pool.query<{ name: string; pk: string[] | null }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name,
              (SELECT array_agg(a.attname::text ORDER BY k.ord)
                 FROM pg_index i
                 CROSS JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                WHERE i.indrelid = c.oid AND i.indisprimary) AS pk
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('storage', 'auth') AND c.relkind IN ('r', 'p')
        ORDER BY 1`,
    );
    expect(tables.rows.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'auth.users',
        'storage.blobs',
        'storage.chunk_manifests',
        'storage.role_grants',
      ]),
    );
    for (const t of tables.rows) {
      if (QUEUES.has(t.name)) continue;
      const key =
        t.pk === null
          ? 'NULL'
          : `concat_ws(',', ${t.pk.map((c) => `t.${JSON.stringify(c)}::text`).join(', ')})`;
      const { rows } = await w.db.pool.query<{ k: string | null; md5: string }>(
        `SELECT ${key} AS k, md5(row_to_json(t)::text) AS md5 FROM ${t.name} t`,
      );
      for (const r of rows) {
        const k = r.k === null ? `${t.name}:#${r.md5}` : `${t.name}:${r.k}`;
        out.set(k, r.k === null ? String(Number(out.get(k) ?? 0) + 1) : r.md5);
      }
    }
    for (const entry of await w.store.blobs.list({ limit: 100_000 })) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of await w.store.blobs.get(entry.hash)) chunks.push(chunk);
      out.set(`bytes:${entry.hash}`, createHash('md5').update(Buffer.concat(chunks)).digest('hex'));
    }
    return out;
  }

  /** The snapshot keys of what the plan's action lines name: their resources and derived rows. */
  function named(plan: RepairPlanView): Set<string> {
    const keys = new Set<string>();
    const add = (type: string, id: string) => {
      if (type === 'blob' || type === 'blob_bytes') keys.add(`bytes:${id}`);
      const table = TABLE_OF[type];
      if (table !== undefined) keys.add(`${table}:${id}`);
    };
    for (const line of plan.lines) {
      if (line.type !== 'action') continue;
      add(line.resource.type, line.resource.id);
      for (const d of line.derived) add(d.type, d.id);
    }
    return keys;
  }

  beforeAll(async () => {
    w = await oxiDomainWorld({
      store: 'local',
      options: { ...OXI_SMALL, users: 12, sharedDrives: 6, seed: 11, faults: [...OXICLOUD_FAULT_NAMES] },
    });
    const hasher: BlobHasher = {
      async hashStoredBlob(hash) {
        const chunks: Uint8Array[] = [];
        for await (const chunk of await w.store.blobs.get(hash)) chunks.push(chunk);
        const bytes = Buffer.concat(chunks);
        return { hash: blake3Hex(bytes), size: bytes.byteLength, head: bytes.subarray(0, 4096) };
      },
    };
    plans = new PgRepairPlans({ pool: w.db.pool });
    const store = new OxiRepairStore(w.kysely);
    const actions = createRepairActions({
      store,
      blobs: { blobs: w.store.blobs, hasher, other: null },
      restore: { source: w.store.blobs, sourceHasher: hasher, other: null },
      thumbnails: {
        thumbnails: new LocalThumbnailStore(w.store.storageRoot),
        index: new OxiBlobIndexScan(w.kysely),
      },
    });
    w.h.engine.register(createRepairJob({ plans, actions, store, blobs: w.store.blobs, logger: w.h.logger }));
    planner = createRepairPlanner({ actions, plans });
  }, 180_000);
  let planner: ReturnType<typeof createRepairPlanner>;
  afterAll(async () => {
    await w?.close();
  }, 60_000);

  it('applies every line it can decide and re-verifies it fixed; the rest need a person; nothing else changed', async () => {
    const first = await w.runBatch();
    expect(first).toMatchObject({ completed: w.checks.length, failed: 0 });
    const found = await openFindings();
    const seeded = new Set(
      Object.values(OXICLOUD_FAULT_EXPECTATIONS).flatMap((e) => [
        ...(e.check === null ? [] : [`${e.check} ${e.kind}`]),
        ...('also' in e ? [`${e.also.check} ${e.also.kind}`] : []),
      ]),
    );
    expect(new Set(found.map((f) => `${f.check_name} ${f.kind}`))).toEqual(seeded);

    let plan = await planner.plan({ selection: { findingIds: found.map((f) => f.id) }, actor: 'admin' });
    expect(plan.lines).toHaveLength(found.length);
    const choosing = plan.lines.filter((l) => l.type === 'action' && l.choices !== undefined);
    expect(choosing.map((l) => l.fingerprint.kind).sort()).toEqual([
      'parent_folder_trashed',
      'parent_trashed_mismatch',
    ]);
    expect(plan.unchosen).toBe(2);
    const stale = plan.hash;
    plan = await planner.choose(
      plan.id,
      Object.fromEntries(choosing.map((l, i) => [l.findingId, i % 2 === 0 ? RESTORE_PARENT : TRASH_CHILD])),
    );
    expect(plan.unchosen).toBe(0);
    expect(plan.hash).not.toBe(stale);

    const byKind = new Map<string, string[]>();
    for (const l of plan.lines) {
      if (l.type !== 'needs_person') continue;
      const k = `${l.fingerprint.checkName} ${l.fingerprint.kind}`;
      byKind.set(k, [...(byKind.get(k) ?? []), l.reason]);
    }
    expect([...byKind.keys()].sort()).toEqual(Object.keys(NEEDS_PERSON).sort());
    for (const [kind, reasons] of byKind) {
      for (const reason of reasons) expect(reason, kind).toMatch(NEEDS_PERSON[kind] as RegExp);
    }
    const actionLines = plan.lines.filter((l) => l.type === 'action');
    expect(new Set(actionLines.map((l) => l.action))).toEqual(
      new Set([
        HAND_ORPHAN_BYTES_TO_GC,
        'recount_blob_ref_count',
        'set_file_size_from_blob',
        'recompute_drive_used_bytes',
        'recompute_user_used_bytes',
        'recompute_folder_path',
        'resolve_live_under_trashed_parent',
        'delete_dangling_grant',
        'delete_expired_grant',
        'raise_manifest_ref_count',
        'delete_dangling_reference',
        'remove_orphan_derived_files',
        'recompute_category_order',
        'recompute_media_sort_date',
        'delete_stale_face',
      ]),
    );

    const before = await snapshot();
    // Approval takes the hash the operator read: the one before the choices is refused.
    await expect(plans.approve(plan.id, stale, 'admin')).rejects.toThrow(/PLAN_CONFLICT|not [0-9a-f]{64}/);
    await plans.approve(plan.id, plan.hash, 'admin');
    const outcome = await w.h.engine.runOrResume(REPAIR_JOB_NAME, { params: { plan_id: plan.id } });
    expect(outcome).toMatchObject({ kind: 'ok', extra: { completed: true } });
    const done = (await planner.get(plan.id)) as RepairPlanView;
    expect(done.state).toBe('applied');
    const applied = done.lines.filter((l) => l.type === 'action');
    expect(
      applied.filter((l) => l.status !== 'applied').map((l) => `${l.fingerprint.kind} ${l.skipReason}`),
    ).toEqual([]);
    expect(
      applied.filter((l) => l.verified !== 'passed').map((l) => `${l.fingerprint.kind} ${l.verified}`),
    ).toEqual([]);
    const audit = await w.db.pool.query(
      'SELECT count(*)::int AS n FROM jobs.repair_audit WHERE plan_id = $1',
      [plan.id],
    );
    expect(audit.rows[0].n).toBe(applied.length);

    const second = await w.runBatch();
    expect(second).toMatchObject({ completed: w.checks.length, failed: 0 });
    const left = await openFindings();
    const needsPersonIds = new Set(
      done.lines.filter((l) => l.type === 'needs_person').map((l) => l.findingId),
    );
    expect(left.filter((f) => !needsPersonIds.has(f.id)).map((f) => `${f.check_name} ${f.kind}`)).toEqual([]);
    expect(new Set(left.map((f) => `${f.check_name} ${f.kind}`))).toEqual(new Set(Object.keys(NEEDS_PERSON)));

    const after = await snapshot();
    const excluded = named(done);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (k) => !excluded.has(k) && before.get(k) !== after.get(k),
    );
    expect(changed).toEqual([]);
    expect([...excluded].filter((k) => before.get(k) !== after.get(k)).length).toBeGreaterThan(8);
  }, 180_000);
});
