/** The trash_cleanup tenant (not implemented yet). */
export {};
