import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

type Middleware = (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void;
type Directives = Record<string, string[]>;

/**
 * What any page of ours may do: never be framed (the console carries Approve/Deny buttons, a
 * clickjacking target), no plugins, no <base> or form posts elsewhere.
 */
const EVERY_PAGE: Directives = {
  'frame-ancestors': ["'none'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
};

/** Where the pages are (main.ts passes each module's own constant). */
export interface PagePaths {
  console: string;
  docs: string;
  dashboard: string;
}

/**
 * Content-Security-Policy by path. The console is Vite's build: one module script and one stylesheet
 * under /console/assets/, no inline script or style (React sets `style` props through the CSSOM, which
 * CSP allows), and it talks only to /v1 on its own origin. JSON and problem answers never render, so
 * everything else gets a policy that allows nothing.
 */
function pagePolicies(paths: PagePaths): { prefix: string; directives: Directives }[] {
  return [
    {
      prefix: paths.console,
      directives: {
        ...EVERY_PAGE,
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'style-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'font-src': ["'self'"],
        'connect-src': ["'self'"],
      },
    },
    {
      // Scalar's page (@scalar/nestjs-api-reference) is an inline module script importing its bundle from
      // jsDelivr, an inline theme <style>, styles the bundle injects at run time, and fonts from
      // fonts.scalar.com; it fetches /openapi.json and sends "try it" requests to this origin.
      prefix: paths.docs,
      directives: {
        ...EVERY_PAGE,
        'default-src': ["'self'"],
        'script-src': ["'self'", "'unsafe-inline'", 'https://cdn.jsdelivr.net'],
        'style-src': ["'self'", "'unsafe-inline'", 'https://cdn.jsdelivr.net', 'https://fonts.scalar.com'],
        'font-src': ["'self'", 'data:', 'https://cdn.jsdelivr.net', 'https://fonts.scalar.com'],
        'img-src': ["'self'", 'data:', 'https:'],
        'connect-src': ["'self'", 'https://cdn.jsdelivr.net'],
        'worker-src': ["'self'", 'blob:'],
      },
    },
    {
      // bull-board (dashboard/): scripts and a stylesheet of its own, inline styles on its loading
      // placeholder, and IBM Plex from Google Fonts.
      prefix: paths.dashboard,
      directives: {
        ...EVERY_PAGE,
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'style-src': ["'self'", "'unsafe-inline'", 'https://fonts.googleapis.com'],
        'font-src': ["'self'", 'https://fonts.gstatic.com'],
        'img-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
      },
    },
  ];
}

const API_POLICY: Directives = { ...EVERY_PAGE, 'default-src': ["'none'"], 'base-uri': ["'none'"] };

function underPrefix(url: string, prefix: string): boolean {
  const path = url.split('?')[0] ?? '';
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * helmet's headers on every response (/v1 JSON, problem+json errors, /mcp, the console, /docs):
 * X-Frame-Options DENY, nosniff, Referrer-Policy no-referrer, the cross-origin policies, and a CSP
 * chosen by path. No Strict-Transport-Security: TLS ends at the ingress, which owns that header (one
 * sent from here would also bind every subdomain of wherever the ingress serves us).
 */
export function securityHeaders(paths: PagePaths): Middleware[] {
  const common = helmet({
    contentSecurityPolicy: false,
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });
  const policy = (directives: Directives) =>
    // No defaults: helmet's include upgrade-insecure-requests, which breaks plain-HTTP deployments.
    helmet.contentSecurityPolicy({ useDefaults: false, directives });
  const pages = pagePolicies(paths).map(({ prefix, directives }) => ({
    prefix,
    middleware: policy(directives),
  }));
  const api = policy(API_POLICY);
  const byPath: Middleware = (request, response, next) => {
    const page = pages.find(({ prefix }) => underPrefix(request.url ?? '', prefix));
    (page?.middleware ?? api)(request, response, next);
  };
  return [common, byPath];
}
