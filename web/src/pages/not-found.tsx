import { Page } from '../components/layout';

export function NotFoundPage() {
  return (
    <Page title="Page not found">
      <p>
        There is no page at this address. <a href="/projects">Go to your projects</a>.
      </p>
    </Page>
  );
}
