/**
 * @oxicloud/dataset: Dataset generator: users, drives, folder trees, files, blob rows and real blob bytes at scale, with named fault injections.
 *
 * @packageDocumentation
 */
export {};
