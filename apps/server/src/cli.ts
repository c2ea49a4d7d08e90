/** The `oxijobs` command line: see `oxijobs --help`. */
import { runCli } from './program.js';

await runCli(process.argv);
