/** The storage_reconcile tenant (not implemented yet). */
export {};
