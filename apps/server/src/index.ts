/**
 * @oxicloud/server: The composed OxiCloud jobs server and the oxijobs command line.
 *
 * @packageDocumentation
 */
export {};
