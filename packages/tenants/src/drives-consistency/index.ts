/** The drives_consistency tenant (not implemented yet). */
export {};
