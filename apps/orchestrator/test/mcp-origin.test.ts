import { describe, expect, it } from 'vitest';
import { originRefusal } from '../src/gateway/origin-check.ts';

const LISTED = ['https://agents.example.com'];
const refused = (origin: string, host = '127.0.0.1:3000') => originRefusal({ origin, host }, LISTED);

describe('the /mcp Origin rule (MCP transports: 403 for a present, invalid Origin)', () => {
  it('takes a request without an Origin, whatever its Host', () => {
    expect(originRefusal({ host: 'switchyard.internal' }, LISTED)).toBeUndefined();
  });

  it('takes a listed origin exactly, on any Host', () => {
    expect(refused('https://agents.example.com', 'switchyard.example.com')).toBeUndefined();
    expect(refused('https://agents.example.com:443', 'switchyard.example.com')).toBeUndefined();
    for (const other of [
      'http://agents.example.com',
      'https://agents.example.com:8443',
      'https://x.agents.example.com',
    ]) {
      expect(refused(other, 'switchyard.example.com'), other).toContain(`Origin "${other}"`);
    }
  });

  it('takes a loopback origin only on a loopback Host', () => {
    for (const origin of [
      'http://localhost:6274',
      'http://127.0.0.1',
      'http://127.9.9.9:1',
      'http://[::1]:80',
      'http://app.localhost',
    ]) {
      expect(refused(origin), origin).toBeUndefined();
      expect(refused(origin, '[::1]:3000'), origin).toBeUndefined();
      // A page on this machine talking to an orchestrator elsewhere needs an entry like any other.
      expect(refused(origin, 'switchyard.example.com'), origin).toBeDefined();
    }
  });

  it('refuses a rebound host name even when Host and Origin agree, and what is not an origin', () => {
    expect(refused('http://evil.example.com', 'evil.example.com')).toBe(
      'Origin "http://evil.example.com" may not use /mcp: list it in orchestrator.mcp.allowedOrigins',
    );
    for (const origin of ['null', '', 'file:///etc/passwd', 'localhost']) {
      expect(refused(origin), origin).toBeDefined();
    }
    expect(
      originRefusal({ origin: ['http://localhost', 'http://evil.example.com'], host: 'localhost' }, LISTED),
    ).toBeDefined();
    expect(originRefusal({ origin: 'http://localhost' }, LISTED)).toBeDefined();
  });
});
