/**
 * How an engine process is started so that it never outlives the process that started it.
 *
 * nmap runs in its own process group (so cancelling a scan kills it and anything it started), which
 * also takes it out of the service's group: a SIGKILL of the service's group (systemd's last
 * resort, `docker kill`, `kill -9 -PGID`) would leave it scanning on its own. So nmap is started
 * through util-linux `setpriv --pdeathsig KILL`, which sets PR_SET_PDEATHSIG and then execs nmap
 * (same pid, so the pid is still the group's id and /proc/PID/cmdline still says nmap): the kernel
 * kills nmap the moment its parent dies, however it dies.
 *
 * The parent-death signal belongs to the *thread* that forked. Node spawns children from the
 * thread that calls spawn(); the engines are only ever called on the main thread (the event loop),
 * which lives as long as the process.
 *
 * Where setpriv is missing (or too old for --pdeathsig), nmap is started directly (checked again a
 * minute later) and the clean-up at the next start (owner.ts, endOrphanedEngines) is what ends an
 * orphan. The kernel also clears the signal when it execs a set-user-ID nmap or one with file
 * capabilities (`setcap`); give the capabilities to the service instead (docs/deployment.md),
 * which nmap then inherits.
 */
import { execFile } from 'node:child_process';

export interface EngineCommand {
  command: string;
  args: string[];
  /** Whether the process dies with its parent (false: only the clean-up at restart ends an orphan). */
  diesWithParent: boolean;
}

const SETPRIV = 'setpriv';
const SETPRIV_ARGS = ['--pdeathsig', 'KILL', '--'];

/** Per engine binary: whether setpriv runs it with a parent-death signal. */
const supported = new Map<string, Promise<boolean>>();
/** A failed check is repeated after this long (setpriv or nmap may be installed meanwhile). */
const RECHECK_FAILED_MS = 60_000;

/** Whether `setpriv --pdeathsig KILL -- BINARY --version` works here (a success is remembered for good). */
export function parentDeathSupported(binary: string): Promise<boolean> {
  let found = supported.get(binary);
  if (!found) {
    found = new Promise((resolve) => {
      execFile(SETPRIV, [...SETPRIV_ARGS, binary, '--version'], { timeout: 5000 }, (err) => {
        if (err) setTimeout(() => supported.delete(binary), RECHECK_FAILED_MS).unref();
        resolve(!err);
      });
    });
    supported.set(binary, found);
  }
  return found;
}

/** The command that runs `binary args` so that it dies with this process where that can be arranged. */
export async function engineCommand(binary: string, args: string[]): Promise<EngineCommand> {
  if (await parentDeathSupported(binary)) return { command: SETPRIV, args: [...SETPRIV_ARGS, binary, ...args], diesWithParent: true };
  return { command: binary, args, diesWithParent: false };
}
