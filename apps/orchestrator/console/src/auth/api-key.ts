/**
 * The team (or operator) API key the console sends as `Authorization: Bearer`. It lives in
 * sessionStorage: asked once per tab, gone when the tab closes, never written anywhere else.
 */
const STORAGE_KEY = 'switchyard.apiKey';

export function storedApiKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function storeApiKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
