import { useTitle } from '../hooks';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. Go to the <a href="/">dashboard</a> or the <a href="/devices">device list</a>.
      </p>
    </section>
  );
}
