import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SECRET_MASK } from '../../core/limits.js';
import { SettingsSchema, applySettingsPatch, maskSettings, type Settings } from '../../core/settings.js';
import { leaseFileProblem } from '../../names/lease-file.js';
import { audit } from '../audit.js';
import { requireSession } from '../auth.js';
import { badRequest } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { isObject } from '../../util/is-object.js';
import { LockedSetting } from '../../schemas/config.js';

export const configRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, scans } = app.services;
  /** What clients see: secrets masked, and the allowed scan targets as enforced (NETWARDEN_SCAN_ALLOW wins). */
  const shown = (settings: Settings): Settings => {
    const masked = maskSettings(settings);
    const override = scans.scanAllowOverride;
    return override ? { ...masked, scanning: { ...masked.scanning, allowed_targets: override } } : masked;
  };

  app.get(
    '/api/config',
    {
      schema: {
        tags: ['config'],
        summary: 'The whole configuration (secrets masked)',
        response: { 200: SettingsSchema, ...errorResponses(401) },
      },
    },
    async () => shown(await store.settings.get()),
  );

  app.get(
    '/api/config/locked',
    {
      schema: {
        tags: ['config'],
        summary: 'Settings that environment variables decide on this server',
        description:
          'Each setting here is set by an environment variable of the server process: `GET /api/config` shows the value in force, and ' +
          '`PUT /api/config` refuses to change it (400 naming the variable). Today one setting can be locked: ' +
          '`scanning.allowed_targets`, by `NETWARDEN_SCAN_ALLOW`. An empty array: nothing is locked.',
        response: { 200: Type.Array(LockedSetting), ...errorResponses(401) },
      },
    },
    async () => (scans.scanAllowOverride ? [{ path: 'scanning.allowed_targets', variable: 'NETWARDEN_SCAN_ALLOW' }] : []),
  );

  app.put(
    '/api/config',
    {
      schema: {
        tags: ['config'],
        summary: 'Change part of the configuration',
        description:
          'Deep-merges a partial object into the configuration: objects merge key by key, arrays and values replace, ' +
          `\`null\` resets a key to its default, and a masked secret (\`${SECRET_MASK}\`) sent back keeps its stored value. ` +
          "A secret never follows a new destination: changing `updates.feed_url` or a name source's `url` without giving its token or " +
          'password again in the same request clears it. ' +
          'Unknown keys and invalid values give 400 naming the path, e.g. `scanning.port_range: ...`. ' +
          'Enabling `name_sources.dhcp_leases` (or changing its path or format) needs a readable lease file that parses, else 400 ' +
          '(one message whatever the cause, so the API cannot be used to probe which files exist). ' +
          'Destructive changes need a logged-in session (an API key gets 403): `retention.days` from 1 to 6. ' +
          'Returns the whole new configuration.',
        body: Type.Record(Type.String(), Type.Unknown(), { description: 'A partial configuration, same shape as GET /api/config' }),
        response: { 200: SettingsSchema, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const current = await store.settings.get();
      const result = applySettingsPatch(current, request.body);
      if (!result.ok) throw badRequest(result.error);
      const leases = result.settings.name_sources.dhcp_leases;
      const before = current.name_sources.dhcp_leases;
      if (leases.enabled && (!before.enabled || leases.path !== before.path || leases.format !== before.format)) {
        // Checked when set, so a mistake shows now rather than as a warning at the next scan.
        const problem = await leaseFileProblem(leases);
        if (problem) throw badRequest(`name_sources.dhcp_leases.path: ${problem}`);
      }
      const destructive = destructiveChange(current, result.settings);
      // A leaked automation key must not be able to wipe the history (or the audit log that would show it).
      if (destructive) requireSession(request, destructive);
      const override = scans.scanAllowOverride;
      if (override) {
        // Sending back what GET showed is fine; changing it is not: the environment decides.
        const asked = result.settings.scanning.allowed_targets;
        const touched = JSON.stringify(asked) !== JSON.stringify(current.scanning.allowed_targets);
        if (touched && JSON.stringify(asked) !== JSON.stringify(override)) {
          throw badRequest('scanning.allowed_targets: set by the NETWARDEN_SCAN_ALLOW environment variable on this server; change it there');
        }
        result.settings.scanning.allowed_targets = current.scanning.allowed_targets;
      }
      await store.settings.put(result.settings);
      const changes = diff(maskSettings(current), maskSettings(result.settings));
      // A community replaced by another reads the same masked: the audit entry still says it changed (never what to).
      const communities = [current.recognition.snmp_communities, result.settings.recognition.snmp_communities];
      if (!changes['recognition.snmp_communities'] && JSON.stringify(communities[0]) !== JSON.stringify(communities[1])) {
        changes['recognition.snmp_communities'] = {
          old: communities[0].map(() => SECRET_MASK),
          new: communities[1].map((c, i) => (c === communities[0][i] ? SECRET_MASK : `${SECRET_MASK} (replaced)`)),
        };
      }
      if (Object.keys(changes).length > 0) {
        await audit(request, { action: 'config_updated', resourceType: 'config', success: true, details: { changes } });
      }
      return shown(result.settings);
    },
  );
};

/** Below this many days, retention counts as destructive: it deletes recent scans, changes and audit entries. */
export const RETENTION_SESSION_DAYS = 7;

/**
 * What a change would destroy, worded for the 403 an API key gets, or null. Today one setting:
 * `retention.days` set from 1 to 6 (0 keeps everything and is not destructive).
 */
function destructiveChange(before: Settings, after: Settings): string | null {
  const days = after.retention.days;
  if (days !== before.retention.days && days > 0 && days < RETENTION_SESSION_DAYS) {
    return `retention.days below ${RETENTION_SESSION_DAYS} (it deletes recent scans, changes and audit entries)`;
  }
  return null;
}

/** `{ "scanning.port_range": { old, new } }` for every leaf that differs. */
function diff(before: Settings, after: Settings): Record<string, { old: unknown; new: unknown }> {
  const out: Record<string, { old: unknown; new: unknown }> = {};
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isObject(a) && isObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], path ? `${path}.${key}` : key);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out[path] = { old: a, new: b };
    }
  };
  walk(before, after, '');
  return out;
}
