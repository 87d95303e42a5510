/** A first report of `hosts` hosts and a second with 5 % of them changed (bench/nmap-report.mjs). */
export function reportPair(options: { hosts: number; portsPerHost?: number; seed?: number; down?: number }): { first: string; second: string };
