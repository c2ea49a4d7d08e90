/** The storage_migration tenant (not implemented yet). */
export {};
