/** The grant_cleanup tenant (not implemented yet). */
export {};
