/**
 * Type-checks src/web as `tsc -p src/web` does, with src/web/api-types.ts replaced by a given text
 * (nothing is written), on a worker thread: a check takes tens of seconds of CPU, and the test
 * file's own thread must stay free meanwhile (vitest's worker answers its runner over the event
 * loop and gives up after a minute without an answer).
 *
 * `webTypeChecker(apiTypesFile)` returns `check(apiTypes) => Promise<string[]>` (the errors,
 * formatted) and `close()`. Parsed files are shared between the checks of one checker.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function webTypeChecker(apiTypesFile) {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { apiTypesFile } });
  let next = 0;
  const pending = new Map();
  const failAll = (err) => {
    for (const { reject } of pending.values()) reject(err);
    pending.clear();
  };
  worker.on('message', ({ id, errors, failure }) => {
    const call = pending.get(id);
    pending.delete(id);
    if (failure) call?.reject(new Error(failure));
    else call?.resolve(errors);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the type-check worker exited (code ${code})`)));
  return {
    check(apiTypes) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, apiTypes });
      });
    },
    close: () => worker.terminate(),
  };
}

async function serve() {
  const { default: ts } = await import('typescript');
  const API_TYPES_FILE = workerData.apiTypesFile;
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'src', 'web', 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('src/web/tsconfig.json could not be read');
  const rootNames = [...new Set([...config.fileNames, API_TYPES_FILE])];
  const parsed = new Map();
  let previous;

  const check = (apiTypes) => {
    const host = ts.createCompilerHost(config.options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (file) => file === API_TYPES_FILE || ts.sys.fileExists(file);
    host.readFile = (file) => (file === API_TYPES_FILE ? apiTypes : ts.sys.readFile(file));
    host.getSourceFile = (file, language, ...rest) => {
      if (file === API_TYPES_FILE) return ts.createSourceFile(file, apiTypes, language);
      if (!parsed.has(file)) parsed.set(file, getSourceFile(file, language, ...rest));
      return parsed.get(file);
    };
    const program = ts.createProgram({ rootNames, options: config.options, host, oldProgram: previous });
    previous = program;
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const file = d.file ? `${d.file.fileName.slice(root.length + 1)}(${where.line + 1}): ` : '';
      return file + ts.flattenDiagnosticMessageText(d.messageText, ' ');
    });
  };

  parentPort.on('message', ({ id, apiTypes }) => {
    try {
      parentPort.postMessage({ id, errors: check(apiTypes) });
    } catch (err) {
      parentPort.postMessage({ id, failure: err instanceof Error ? err.stack : String(err) });
    }
  });
}

if (!isMainThread) await serve();
