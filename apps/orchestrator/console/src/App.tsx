import { NavLink, Route, Routes } from 'react-router';
import { KeyGate } from './auth/KeyGate.tsx';
import { ServersPage } from './fleet/ServersPage.tsx';
import { ToolsPage } from './fleet/ToolsPage.tsx';
import { JobListPage } from './jobs/JobListPage.tsx';
import { JobPage } from './jobs/JobPage.tsx';

export function App() {
  return (
    <KeyGate>
      <header className="top">
        <strong>Switchyard</strong>
        <nav>
          <NavLink to="/" end>
            Jobs
          </NavLink>
          <NavLink to="/tools">Tools</NavLink>
          <NavLink to="/servers">Servers</NavLink>
          <a href="/docs">API</a>
        </nav>
      </header>
      <main>
        <Routes>
          <Route path="/" element={<JobListPage />} />
          <Route path="/jobs/:id" element={<JobPage />} />
          <Route path="/tools" element={<ToolsPage />} />
          <Route path="/servers" element={<ServersPage />} />
          <Route path="*" element={<p>No such page.</p>} />
        </Routes>
      </main>
    </KeyGate>
  );
}
