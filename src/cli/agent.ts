import { hostname } from 'node:os';
import type { Command } from 'commander';
import { AgentClient, AgentTokenRefusedError } from '../agent/client.js';
import { AgentRuntime } from '../agent/runtime.js';
import { looksLikeAgentToken } from '../auth/tokens.js';
import { ConfigError, LOG_LEVELS, nmapLocation, readEnvironment, scanAllowFromEnvironment, type Environment } from '../config/environment.js';
import { isScanEngineSetting, SCAN_ENGINE_SETTINGS } from '../core/model.js';
import { EngineSelector } from '../engines/engines.js';
import { VERSION } from '../version.js';
import { CliError, EXIT_FAILURE, action, usageError } from './common.js';

interface AgentOptions {
  server?: string;
  token?: string;
  engine: string;
}

export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('Scan networks the server cannot reach: take their queued scans from the server, run them here, send the results back')
    .option('--server <url>', 'the Netwarden server, e.g. https://netwarden.example.com (the agent connects out; it opens no port)')
    .option('--token <token>', 'the agent token (nwa_…) shown when the agent was created; better: the NETWARDEN_AGENT_TOKEN variable')
    .option('--engine <engine>', 'engine for scans whose scanning.engine is auto: auto (nmap when installed), nmap or native', 'auto')
    .addHelpText(
      'after',
      '\nThe token may come from NETWARDEN_AGENT_TOKEN instead of --token (it then does not show in the process list).\n' +
        'NETWARDEN_SCAN_ALLOW, when set on this host, limits what the agent scans whatever the server asks.\n' +
        'Stop it with Ctrl-C or SIGTERM: a scan it is running is reported as interrupted.',
    )
    .action(action((options: AgentOptions) => runAgent(options)));
}

/** `--server`: an http(s) URL without credentials, query or fragment; returned without a trailing slash. */
export function parseServerUrl(text: string | undefined): URL {
  if (text === undefined || text.trim() === '')
    throw usageError('--server is required: the URL of the Netwarden server, e.g. https://netwarden.example.com');
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw usageError(`--server: '${text}' is not a URL; give one such as https://netwarden.example.com:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--server: must be an http:// or https:// URL, not ${url.protocol}//`);
  if (url.username || url.password) throw usageError('--server: must not hold a user name or password; the agent authenticates with its token');
  if (url.search || url.hash) throw usageError('--server: must not hold a query (?…) or fragment (#…)');
  return url;
}

/** The agent token from --token or NETWARDEN_AGENT_TOKEN, checked for its form. */
export function agentToken(option: string | undefined, env: Environment): string {
  const token = (option ?? env.NETWARDEN_AGENT_TOKEN ?? '').trim();
  if (!token) throw usageError('no agent token: give --token nwa_… or set NETWARDEN_AGENT_TOKEN (it is shown once when the agent is created)');
  if (!looksLikeAgentToken(token)) {
    const from = option !== undefined ? '--token' : 'NETWARDEN_AGENT_TOKEN';
    const hint = token.startsWith('svc_') ? ' (that is an API key: agents have tokens of their own, from the Agents page or POST /api/agents)' : '';
    throw usageError(`${from}: not an agent token: it must be nwa_ followed by 43 characters${hint}`);
  }
  return token;
}

async function runAgent(options: AgentOptions): Promise<void> {
  const server = parseServerUrl(options.server);
  const env = readEnvironment();
  const token = agentToken(options.token, env);
  if (!isScanEngineSetting(options.engine)) throw usageError(`--engine must be one of ${SCAN_ENGINE_SETTINGS.join(', ')}, not '${options.engine}'`);
  const level = env.NETWARDEN_LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(level)) throw usageError(`NETWARDEN_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  let scanAllow: string[] | null;
  try {
    scanAllow = scanAllowFromEnvironment(env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  }

  const { createLogger } = await import('../logger.js');
  const { handleShutdown } = await import('../server.js');
  const logger = createLogger(level).child({ component: 'agent' });
  if (server.protocol === 'http:' && !isLoopback(server.hostname)) {
    logger.warn(
      { server: server.origin },
      'the server URL is http://: the agent token and scan results travel unencrypted; use https:// across networks',
    );
  }
  const client = new AgentClient({
    server: server.href,
    token,
    version: VERSION,
    onRetry: (what, attempt, delayMs, err) =>
      logger.warn(
        { attempt, retry_in_ms: delayMs, error: err.message, cause: (err.cause as Error | undefined)?.message },
        `could not ${what}; retrying`,
      ),
  });
  const runtime = new AgentRuntime({
    client,
    engines: new EngineSelector(nmapLocation(env).binary),
    engine: options.engine,
    version: VERSION,
    hostname: hostname(),
    log: logger,
    scanAllow,
  });
  try {
    await runtime.availableEngines();
  } catch (err) {
    throw usageError((err as Error).message);
  }
  logger.info({ server: server.origin, engine: options.engine }, 'netwarden agent starting');

  const stop = new AbortController();
  const running = runtime.run(stop.signal);
  handleShutdown(
    {
      close: async () => {
        stop.abort();
        await running.catch(() => undefined);
      },
    },
    logger,
  );
  try {
    await running;
  } catch (err) {
    if (err instanceof AgentTokenRefusedError) {
      throw new CliError(
        'the server refused the agent token: it is wrong, or the agent was revoked (create a new one on the Agents page)',
        EXIT_FAILURE,
      );
    }
    throw err;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
