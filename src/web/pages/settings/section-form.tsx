// A settings section that edits part of the configuration with one save button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorMessage, Notice } from '../../components/ui';
import { type Action, submitRunning, useAction } from '../../hooks';
import type { Config, ConfigPatch } from '../../types';
import { saveConfig } from './config';

/** A section's save: its action, and whether the last save went through with nothing edited since. */
export interface SectionSave extends Action<[]> {
  done: boolean;
  /** Call on every edit: the "saved" notice no longer holds. */
  edited: () => void;
}

/**
 * Saves `patch()` (the server merges it and answers with the whole configuration), hands the
 * answer to `onSaved`, then to `reset` to show what was stored.
 */
export function useSectionSave(patch: () => ConfigPatch, onSaved: (config: Config) => void, reset: (config: Config) => void): SectionSave {
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    setDone(false);
    const next = await saveConfig(patch());
    onSaved(next);
    reset(next);
    setDone(true);
  });
  return { ...action, done, edited: () => setDone(false) };
}

/** The section's form: its fields, the error of the last save, the saved notice and the save button. */
export function SectionForm({
  save,
  saved,
  label,
  class: className = 'settings-narrow',
  children,
}: {
  save: SectionSave;
  /** The notice after a save, such as "Retention saved." */
  saved: string;
  /** The save button's text. */
  label: string;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <form class={className} onSubmit={submitRunning(save)}>
      {children}
      <ErrorMessage error={save.error} />
      {save.done && <Notice kind="success">{saved}</Notice>}
      <div class="button-row">
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : label}
        </button>
      </div>
    </form>
  );
}
