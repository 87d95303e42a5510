/**
 * The namespace lab (test/lab/lab.sh) from TypeScript: bridge nwlab0 (10.66.0.1/24) with hosts
 * h1..hN in their own network namespaces at 10.66.0.(10+i), fixed MACs and listeners.
 * Every call is `bash lab.sh …` with an argument array; nothing goes through a shell string.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAB_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'lab.sh');
export const LAB_BRIDGE_IP = '10.66.0.1';

/** lab.sh's exit status when another live process owns the lab. */
const LAB_BUSY = 3;

/** The OUIs lab.sh cycles through for its hosts' fixed MACs (see its header). */
const LAB_OUIS = ['B8:27:EB', '00:1C:42', '02:66:00', '00:16:3E', 'DC:A6:32', '00:0C:29'];

/** The fixed MAC lab.sh's mac_of gives host `h<n>`: h1 = B8:27:EB:66:00:01, h3 = 02:66:00:66:00:03. */
export function labMac(n: number): string {
  const hex = (byte: number) => byte.toString(16).toUpperCase().padStart(2, '0');
  return `${LAB_OUIS[(n - 1) % LAB_OUIS.length]}:66:${hex(Math.floor(n / 256))}:${hex(n % 256)}`;
}

/** `{ h1: …, h2: …, … }`: the MACs of hosts h1..h<count>. */
export function labMacs<N extends number>(count: N): Record<`h${number}`, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`h${i + 1}`, labMac(i + 1)]));
}

export interface LabHost {
  /** `h1` */
  name: string;
  namespace: string;
  ip: string;
  mac: string;
  up: boolean;
}

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env?: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env: env ?? process.env, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = !err ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && !stderr ? err.message : '') });
    });
  });
}

/**
 * Why the lab cannot run here, or null when it can: needs root, iproute2, and `ip netns add` to
 * work (a probe namespace is created and deleted right away).
 */
export async function labUnavailableReason(): Promise<string | null> {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'ip netns add is not permitted here (not running as root)';
  const probe = `nwlab-probe-${process.pid}`;
  const added = await run('ip', ['netns', 'add', probe], undefined, 10_000);
  if (added.code !== 0) return `ip netns add is not permitted here (${added.stderr.trim() || `exit ${added.code}`})`;
  await run('ip', ['netns', 'del', probe], undefined, 10_000);
  for (const tool of ['python3', 'iptables', 'flock']) {
    const found = await run('bash', ['-c', 'command -v "$1"', 'probe', tool], undefined, 10_000);
    if (found.code !== 0) return `${tool} is not installed`;
  }
  return null;
}

/** True when running as root and `ip netns add` works. */
export async function labAvailable(): Promise<boolean> {
  return (await labUnavailableReason()) === null;
}

/** Runs `bash lab.sh ...args` as this process (the lab's owner); rejects with its stderr on failure. */
export async function lab(...args: string[]): Promise<string> {
  const result = await labRaw(args);
  if (result.code !== 0) throw new Error(`lab.sh ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
  return result.stdout;
}

function labRaw(args: string[]): Promise<RunResult> {
  return run('bash', [LAB_SCRIPT, ...args], { ...process.env, NWLAB_OWNER: String(process.pid), NWLAB_QUIET: '1' });
}

/**
 * `up` or `down`, waiting while another live process (a benchmark, another test run) owns the lab,
 * for at most `waitMs`.
 */
async function whenFree(args: string[], waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const result = await labRaw(args);
    if (result.code === 0) return;
    if (result.code !== LAB_BUSY || Date.now() > deadline) {
      throw new Error(`lab.sh ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export const labCtl = {
  /** Bridge and hosts h1..hN (idempotent). */
  up: (hosts: number, waitMs = 300_000) => whenFree(['up', String(hosts)], waitMs),
  /** Everything the lab created, gone (idempotent). */
  down: (waitMs = 300_000) => whenFree(['down'], waitMs),
  /** A TCP server in the host's namespace greeting with `text` + CRLF. */
  banner: (host: string, port: number, text: string) => lab('listen', host, String(port), 'banner', text),
  /** An HTTP server in the host's namespace answering with `Server: serverHeader`. */
  http: (host: string, port: number, serverHeader: string) => lab('listen', host, String(port), 'http', serverHeader),
  /**
   * A real OpenSSH server (Debian's sshd, a configuration nobody can log in through) on the host's
   * tcp/22 at its current address, with a host key made for this lab run; it follows the host when
   * it moves. Resolves with the host key's fingerprint as `ssh-keygen -l` prints it (`SHA256:…`).
   */
  sshd: async (host: string) => (await lab('sshd', host)).trim(),
  unlisten: (host: string, port: number) => lab('unlisten', host, String(port)),
  /** iptables DROP for the TCP port inside the host's namespace. */
  filter: (host: string, port: number) => lab('filter', host, String(port)),
  unfilter: (host: string, port: number) => lab('unfilter', host, String(port)),
  /** Takes the host off the segment (its namespace and listeners stay). */
  stop: (host: string) => lab('stop', host),
  start: (host: string) => lab('start', host),
  /** New address in 10.66.0.0/24, same MAC. */
  move: (host: string, ip: string) => lab('move', host, ip),
  /** As `move`, but the scanner's ARP entry for the old address stays, complete, with the host's MAC. */
  moveKeepingNeighbour: (host: string, ip: string) => lab('move', host, ip, '--keep-neighbour'),
  /** Another MAC on the host's eth0 (a phone's new random MAC); the scanner's ARP entry for it is forgotten. */
  setMac: (host: string, mac: string) => lab('setmac', host, mac),
  status: () => lab('status'),
  async hosts(): Promise<LabHost[]> {
    const out = await lab('hosts');
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, namespace, ip, mac, state] = line.split(' ');
        return { name, namespace, ip, mac, up: state === 'up' };
      });
  },
};
