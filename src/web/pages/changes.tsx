export function ChangesPage() {
  return <p>Not built yet</p>;
}
