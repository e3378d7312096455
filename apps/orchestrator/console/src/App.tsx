import { NavLink, Route, Routes } from 'react-router';
import { KeyGate } from './auth/KeyGate.tsx';
import { useIsOperator } from './auth/viewer-context.ts';
import { ServersPage } from './fleet/ServersPage.tsx';
import { ToolsPage } from './fleet/ToolsPage.tsx';
import { JobListPage } from './jobs/JobListPage.tsx';
import { JobPage } from './jobs/JobPage.tsx';
import { SubmitPage } from './submit/SubmitPage.tsx';

export function App() {
  return (
    <KeyGate>
      <header className="top">
        <strong>Switchyard</strong>
        <nav>
          <NavLink to="/" end>
            Jobs
          </NavLink>
          <SubmitLink />
          <NavLink to="/tools">Tools</NavLink>
          <NavLink to="/servers">Servers</NavLink>
          <a href="/docs">API</a>
        </nav>
      </header>
      <main>
        <Routes>
          <Route path="/" element={<JobListPage />} />
          {/* The list under its own name too, for links such as /console/jobs?status=failed. */}
          <Route path="/jobs" element={<JobListPage />} />
          <Route path="/jobs/:id" element={<JobPage />} />
          <Route path="/submit" element={<SubmitPage />} />
          <Route path="/tools" element={<ToolsPage />} />
          <Route path="/servers" element={<ServersPage />} />
          <Route path="*" element={<p>No such page.</p>} />
        </Routes>
      </main>
    </KeyGate>
  );
}

/** Operators read but never submit: no link for them. */
function SubmitLink() {
  return useIsOperator() ? null : <NavLink to="/submit">Submit</NavLink>;
}
