/** Another process holding a lock on a SQLite database file, as a backup tool or the sqlite3 shell would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(import.meta.url);

export interface ForeignLock {
  child: ChildProcess;
  /** Commits, closes the database and waits until the other process says so. */
  release(): Promise<void>;
}

/** Starts a process that holds `BEGIN EXCLUSIVE` on `file` until `release()`. */
export async function lockFromAnotherProcess(file: string): Promise<ForeignLock> {
  const script = `
    const SQLite = require(${JSON.stringify(dirname(require.resolve('better-sqlite3/package.json')))});
    const db = new SQLite(${JSON.stringify(file)});
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    process.stdin.resume();
    process.stdin.on('end', () => { db.exec('COMMIT'); db.close(); process.stdout.write('released\\n'); });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the process holding the lock exited with ${code}`)));
    });
  const first = await next();
  if (first !== 'locked') throw new Error(`unexpected output from the lock holder: ${first}`);
  return {
    child,
    async release() {
      const released = next();
      child.stdin.end();
      const line = await released;
      if (line !== 'released') throw new Error(`unexpected output from the lock holder: ${line}`);
    },
  };
}
