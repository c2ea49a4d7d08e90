/** The folders_consistency tenant (not implemented yet). */
export {};
