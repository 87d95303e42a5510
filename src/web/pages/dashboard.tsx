export function DashboardPage() {
  return <p>Not built yet</p>;
}
