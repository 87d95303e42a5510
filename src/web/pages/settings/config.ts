// What the sections that edit the configuration share: one PUT /api/config per save.
import { answer, api } from '../../api';
import type { Config, ConfigPatch } from '../../types';

/** A section of the page that edits part of the configuration. */
export interface ConfigSectionProps {
  config: Config;
  /** Called with the whole configuration the server answered after a save. */
  onSaved: (config: Config) => void;
}

/** Saves part of the configuration; the server merges it and answers with the whole of it. */
export function saveConfig(patch: ConfigPatch): Promise<Config> {
  return answer(api.PUT('/api/config', { body: patch }));
}
