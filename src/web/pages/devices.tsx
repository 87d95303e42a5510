export function DevicesPage() {
  return <p>Not built yet</p>;
}
