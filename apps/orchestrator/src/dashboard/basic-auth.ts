import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** HTTP Basic auth for a browser-facing page; compares digests in constant time. */
export function basicAuth(username: string, password: string, realm: string) {
  const expected = digest(`${username}:${password}`);
  return (request: Request, response: Response, next: NextFunction) => {
    const header = request.headers.authorization ?? '';
    const encoded = /^Basic\s+(\S+)$/i.exec(header)?.[1];
    const given = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    if (encoded && timingSafeEqual(digest(given), expected)) {
      next();
      return;
    }
    response.setHeader('WWW-Authenticate', `Basic realm="${realm}", charset="UTF-8"`);
    response
      .status(401)
      .json({ statusCode: 401, message: 'the queue dashboard needs its username and password' });
  };
}
