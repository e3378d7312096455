import { createContext, useContext } from 'react';
import type { Viewer } from '../api/types.ts';

/** Who the signed-in key is (GET /v1/whoami), set by KeyGate once the API has accepted the key. */
export const ViewerContext = createContext<Viewer | null>(null);

/** The signed-in viewer; only pages behind KeyGate call it. */
export function useViewer(): Viewer {
  const viewer = useContext(ViewerContext);
  if (!viewer) throw new Error('useViewer outside KeyGate');
  return viewer;
}

/** An operator key reads every team's jobs and the fleet but may not act on a job. */
export function useIsOperator(): boolean {
  return useViewer().kind === 'operator';
}
