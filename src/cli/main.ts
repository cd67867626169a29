import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../config/paths.ts';
import { ConfigError } from '../config/config.ts';
import { StoreNotEmptyError } from '../events/event-store.ts';
import { UnknownCollectionError } from '../queries/reporting-api.ts';
import { collectionDataCommand, collectionDataHelp } from './commands/collection-data.ts';
import { events, eventsHelp } from './commands/events.ts';
import { importEvents, importEventsHelp } from './commands/import-events.ts';
import { projections, projectionsHelp } from './commands/projections.ts';
import { projector, projectorHelp } from './commands/projector.ts';
import { rebuild, rebuildHelp } from './commands/rebuild.ts';
import { verify, verifyHelp } from './commands/verify.ts';
import { openCli, UsageError, type CliContext } from './context.ts';
import { BadLineError } from './event-lines.ts';

const HELP = `svc <command> [options]   (configuration from the same environment variables as the service)

Commands:
  projections                  projections with checkpoint, head, lag and status
  rebuild <projection|all>     blue/green rebuild of read models from the event log
  verify <projection|all>      compare read models with a replay of the log
  events [filters] [--follow]  print events as JSON lines
  events --export FILE|-       write the whole log to a file (a backup)
  import-events FILE|-         load an exported log into an empty store, then build the read models
  collection-data <name>       a reporting collection's data, now or --at a time, as JSON or CSV
  projector                    run as a projector process (folds projections; /healthz and /status)

"svc <command> --help" describes a command; "svc --version" prints the version.`;

interface Command {
  readonly help: string;
  readonly options: NonNullable<Parameters<typeof parseArgs>[0]>['options'];
  readonly args: number;
  run(cli: CliContext, args: string[], flags: Record<string, unknown>): Promise<number>;
}

/** A long-running process that opens what it needs itself, not the CLI's engines. */
interface ProcessCommand {
  readonly help: string;
  start(): Promise<number>;
}

const PROCESSES: Record<string, ProcessCommand> = {
  projector: { help: projectorHelp, start: projector },
};

const COMMANDS: Record<string, Command> = {
  projections: { help: projectionsHelp, options: { json: { type: 'boolean' } }, args: 0, run: (cli, _a, f) => projections(cli, f) },
  rebuild: {
    help: rebuildHelp,
    options: { 'batch-size': { type: 'string' } },
    args: 1,
    run: (cli, [name], f) => {
      const batchSize = f['batch-size'] === undefined ? undefined : Number(f['batch-size']);
      if (batchSize !== undefined && !(Number.isSafeInteger(batchSize) && batchSize > 0)) throw new UsageError('--batch-size must be a positive integer');
      return rebuild(cli, name!, batchSize ? { batchSize } : {});
    },
  },
  verify: { help: verifyHelp, options: { json: { type: 'boolean' } }, args: 1, run: (cli, [name], f) => verify(cli, name!, f) },
  events: {
    help: eventsHelp,
    options: { stream: { type: 'string' }, type: { type: 'string', multiple: true }, from: { type: 'string' }, until: { type: 'string' }, follow: { type: 'boolean' }, export: { type: 'string' } },
    args: 0,
    run: (cli, _a, f) => events(cli, f as Parameters<typeof events>[1]),
  },
  'import-events': { help: importEventsHelp, options: {}, args: 1, run: (cli, [file]) => importEvents(cli, file!) },
  'collection-data': {
    help: collectionDataHelp,
    options: { at: { type: 'string' }, format: { type: 'string' } },
    args: 1,
    run: (cli, [name], f) => collectionDataCommand(cli, name!, f as { at?: string; format?: string }),
  },
};

const main = async (argv: string[]): Promise<number> => {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    const { version } = JSON.parse(readFileSync(resolve(projectRoot, 'package.json'), 'utf8')) as { version: string };
    process.stdout.write(`svc ${version}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return name ? 0 : 2;
  }
  const long = PROCESSES[name];
  if (long) {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${long.help}\n`);
      return 0;
    }
    if (rest.length > 0) {
      process.stderr.write(`${long.help}\n`);
      return 2;
    }
    return long.start();
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`Unknown command: ${name}\n\n${HELP}\n`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${command.help}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  if (parsed.positionals.length !== command.args) {
    process.stderr.write(`${command.help}\n`);
    return 2;
  }
  const cli = await openCli();
  try {
    return await command.run(cli, parsed.positionals, parsed.values);
  } finally {
    await cli.close();
  }
};

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: Error) => {
    if (e instanceof UsageError || e instanceof ConfigError || e instanceof UnknownCollectionError || e instanceof StoreNotEmptyError || e instanceof BadLineError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`svc: ${e.message}\n`);
    process.exit(1);
  },
);
