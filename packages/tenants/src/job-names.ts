/**
 * The names of the jobs that write to OxiCloud's data, in a module of their
 * own (`@oxicloud/tenants/job-names`) so a client that only names a job — the
 * command line's help, the write-jobs switch — does not load the jobs.
 */

/** Job name of the expired-grant cleanup. */
export const GRANT_CLEANUP_JOB_NAME = 'grant_cleanup';
/** Job name of the image/video capture-date re-extraction. */
export const REEXTRACT_IMAGE_JOB_NAME = 'reextract_image';
/** Job name of the audio tag re-extraction. */
export const REEXTRACT_AUDIO_JOB_NAME = 'reextract_audio';
/** Job name of the repair run. */
export const REPAIR_JOB_NAME = 'repair';
/** Job name of the trash purge. */
export const TRASH_CLEANUP_JOB_NAME = 'trash_cleanup';
/** Job name of the usage reconciliation. */
export const STORAGE_RECONCILE_JOB_NAME = 'storage_reconcile';
/** Job name of the blob backend migration. */
export const STORAGE_MIGRATION_JOB_NAME = 'storage_migration';
/** Job name of the content collector. */
export const DEDUP_GC_JOB_NAME = 'dedup_gc';
