export function ScanPage() {
  return <p>Not built yet</p>;
}
