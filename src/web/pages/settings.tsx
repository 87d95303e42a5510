export function SettingsPage() {
  return <p>Not built yet</p>;
}
