import { useState } from 'preact/hooks';
import { PASSWORD_MIN_LENGTH } from '../../../core/limits.js';
import { ApiError, answer, api } from '../../api';
import { PasswordInput } from '../../components/form-parts';
import { ErrorMessage, Field, Notice } from '../../components/ui';
import { plural } from '../../format';
import { submitRunning, useAction } from '../../hooks';

/** "new_password: must be …" → "New password: must be …", in the words of the form. */
function withFieldLabels(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const detail = error.detail.replace(/^current_password:/, 'Current password:').replace(/^new_password:/, 'New password:');
  return detail === error.detail ? error : new ApiError(error.status, detail, error.body);
}

/** Change the logged-in user's password; the user's other sessions end. */
export function PasswordChange() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [message, setMessage] = useState('');

  const change = useAction(async () => {
    setMessage('');
    if (next !== confirm) throw new Error('The new passwords differ; type the same new password in both fields.');
    const result = await answer(api.POST('/api/auth/password', { body: { current_password: current, new_password: next } })).catch((err: unknown) => {
      throw withFieldLabels(err);
    });
    setCurrent('');
    setNext('');
    setConfirm('');
    setMessage(
      result.sessions_ended > 0
        ? `Password changed. ${plural(result.sessions_ended, 'other session')} ended; log in there again with the new password.`
        : 'Password changed.',
    );
  });
  const submit = submitRunning(change);

  return (
    <form class="settings-narrow" onSubmit={submit}>
      <Field label="Current password">
        <PasswordInput name="current_password" autocomplete="current-password" value={current} onInput={setCurrent} />
      </Field>
      <Field label="New password" hint={`At least ${PASSWORD_MIN_LENGTH} characters. Your other sessions are logged out.`}>
        <PasswordInput name="new_password" autocomplete="new-password" minLength={PASSWORD_MIN_LENGTH} value={next} onInput={setNext} />
      </Field>
      <Field label="Confirm new password">
        <PasswordInput name="confirm_password" autocomplete="new-password" value={confirm} onInput={setConfirm} />
      </Field>
      <ErrorMessage error={change.error} />
      {message && <Notice kind="success">{message}</Notice>}
      <div class="button-row">
        <button type="submit" class="primary" disabled={change.busy}>
          {change.busy ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}
