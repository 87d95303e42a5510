import { answer, api } from '../../api';
import { ErrorMessage, Loading, Time } from '../../components/ui';
import { useResource } from '../../hooks';
import { PasswordChange } from './password';

/** Who can log in (GET /api/users), and the logged-in user's own password. */
export function UsersSettings() {
  const users = useResource((signal) => answer(api.GET('/api/users', { signal })), []);
  return (
    <>
      <h2>Users</h2>
      <p class="muted small">
        Everyone who can log in to this web interface. Add one on the server with <code>netwarden user create NAME</code>; a forgotten password is
        reset there with <code>netwarden user reset-password NAME</code>.
      </p>
      <ErrorMessage error={users.error} onRetry={users.reload} />
      {users.loading && !users.data && <Loading label="Loading users…" />}
      {users.data && (
        <div class="table-wrap">
          <table class="users-table" aria-label="Users">
            <thead>
              <tr>
                <th>User</th>
                <th>Created</th>
                <th class="hide-narrow">Password changed</th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.id}>
                  <td class="wrap-anywhere">
                    {u.username}
                    {u.current && <span class="muted small"> (you)</span>}
                  </td>
                  <td>
                    <Time iso={u.created_at} />
                  </td>
                  <td class="hide-narrow">
                    <Time iso={u.password_changed_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Your password</h2>
      <PasswordChange />
    </>
  );
}
