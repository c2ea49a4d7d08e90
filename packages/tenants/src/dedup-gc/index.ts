/** The dedup_gc tenant (not implemented yet). */
export {};
