import { Link } from 'react-router';
import { PageHeader } from '../components/PageHeader';

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is nothing at this address. <Link to="/campaigns">Go to the campaigns</Link>.
      </p>
    </>
  );
}
