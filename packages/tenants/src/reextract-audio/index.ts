/** The reextract_audio tenant (not implemented yet). */
export {};
