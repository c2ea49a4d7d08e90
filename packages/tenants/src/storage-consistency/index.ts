/** The storage_consistency tenant (not implemented yet). */
export {};
