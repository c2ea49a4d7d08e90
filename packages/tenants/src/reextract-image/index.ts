/** The reextract_image tenant (not implemented yet). */
export {};
