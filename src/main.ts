import { run } from './cli/program.js';

process.exitCode = await run(process.argv);
