/** What the configuration API says about the configuration besides its values: the one definition. */
import { type Static, Type } from '@sinclair/typebox';

/** A setting that an environment variable decides on this server: the API and the web interface cannot change it. */
export const LockedSetting = Type.Object({
  path: Type.String({ description: 'The setting, as GET /api/config names it, e.g. `scanning.allowed_targets`' }),
  variable: Type.String({ description: 'The environment variable that sets it, e.g. `NETWARDEN_SCAN_ALLOW`' }),
});

export type LockedSetting = Static<typeof LockedSetting>;
