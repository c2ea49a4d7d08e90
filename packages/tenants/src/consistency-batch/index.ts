/** The consistency_batch tenant (not implemented yet). */
export {};
