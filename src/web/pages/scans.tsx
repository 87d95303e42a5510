export function ScansPage() {
  return <p>Not built yet</p>;
}
