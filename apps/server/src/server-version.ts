/** The server's version: `oxijobs --version` and each node's row in `jobs.nodes`. */
export const SERVER_VERSION = '0.1.0';
