export function DeviceDetailPage() {
  return <p>Not built yet</p>;
}
