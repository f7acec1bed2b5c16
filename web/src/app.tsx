import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { session } from './lib/session';
import { AlertsPage } from './pages/alerts';
import { ChangelogPage } from './pages/changelog';
import { FeedbackDetailPage } from './pages/feedback-detail';
import { FunnelsPage } from './pages/funnels';
import { InboxPage } from './pages/inbox';
import { LivePage } from './pages/live';
import { MetricsPage } from './pages/metrics';
import { NotFoundPage } from './pages/not-found';
import { ProjectsPage } from './pages/projects';
import { RetentionPage } from './pages/retention';
import { SdkUsersPage } from './pages/sdk-users';
import { SettingsPage } from './pages/settings';
import { SignInPage } from './pages/sign-in';
import { UserPage } from './pages/user';

/** The SQL console brings its editor (CodeMirror): loaded when the page is opened, not with the first page. */
const SqlConsolePage = lazy(() => import('./pages/sql-console').then((page) => page.SqlConsolePage));
/** The paths page brings its Sankey layout (d3-sankey): loaded when the page is opened, like the SQL console. */
const PathsPage = lazy(() => import('./pages/paths').then((page) => page.PathsPage));

/** Every page has its own URL, so a link to it can be shared (it asks the receiver to sign in first). */
export function App() {
  return (
    <LocationProvider>
      <SignedInGate>
        <Router>
          <Route path="/" component={Home} />
          <Route path="/signin" component={SignInPage} />
          <Route path="/projects" component={ProjectsPage} />
          <Route path="/projects/:id/feedback" component={InboxPage} />
          <Route path="/projects/:id/feedback/:feedbackId" component={FeedbackDetailPage} />
          <Route path="/projects/:id/changelog" component={ChangelogPage} />
          <Route path="/projects/:id/users" component={SdkUsersPage} />
          <Route path="/projects/:id/users/:userId" component={UserPage} />
          <Route path="/projects/:id/metrics" component={MetricsPage} />
          <Route path="/projects/:id/alerts" component={AlertsPage} />
          <Route path="/projects/:id/funnels" component={FunnelsPage} />
          <Route path="/projects/:id/retention" component={RetentionPage} />
          <Route path="/projects/:id/paths" component={PathsPage} />
          <Route path="/projects/:id/live" component={LivePage} />
          <Route path="/projects/:id/sql" component={SqlConsolePage} />
          <Route path="/projects/:id/settings" component={SettingsPage} />
          <Route default component={NotFoundPage} />
        </Router>
      </SignedInGate>
    </LocationProvider>
  );
}

function Home() {
  const { route } = useLocation();
  useEffect(() => route('/projects', true), [route]);
  return null;
}

/** Without a token every page but the sign-in sends there, and comes back after signing in. */
function SignedInGate({ children }: { children: preact.ComponentChildren }) {
  const { path, url, route } = useLocation();
  const [signedIn, setSignedIn] = useState(() => session.token() !== null);
  useEffect(() => session.onChange(() => setSignedIn(session.token() !== null)), []);
  const mustSignIn = !signedIn && path !== '/signin';
  useEffect(() => {
    if (mustSignIn) route(`/signin?next=${encodeURIComponent(url)}`, true);
  }, [mustSignIn, url, route]);
  return mustSignIn ? null : children;
}
