/** The files_consistency tenant (not implemented yet). */
export {};
